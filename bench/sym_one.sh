#!/usr/bin/env bash
# Symbolizer speed for ONE address, the cost of a crash's first lookup: `spoor sym -e ELF ADDR`
# against the baseline `arm-none-eabi-addr2line -f -i -e ELF ADDR`, each a whole process (start,
# open the ELF, find the unit, decode it, answer), best wall time of N runs each, interleaved and
# measured in the same run. Prints both times and the ratio per address, and with valgrind
# installed the instructions each whole process executes (callgrind: steadier than wall time on
# a busy machine).
# usage: bench/sym_one.sh [SPOOR_BIN] [ELF] [ADDR...]   (defaults: a release build in build/bench,
#   its printf-m4f.elf, and two addresses: in _vfprintf_r, the largest unit, and in main)
# SYM_ONE_RUNS (default 30) sets how many runs each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then spoor=$1; else
  cmake -S "$root" -B "$root/build/bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build/bench" -j "$(nproc)" >/dev/null
  spoor=$root/build/bench/spoor
fi
elf=${2:-$root/build/bench/firmware/examples/printf-m4f.elf}
if [ $# -ge 3 ]; then addrs=("${@:3}"); else
  sym() { arm-none-eabi-nm "$elf" | awk -v s="$1" '$3 == s {print $1}'; }
  addrs=("$(printf '0x%x' $((0x$(sym _vfprintf_r) + 8)))" "$(printf '0x%x' $((0x$(sym main) + 4)))")
fi
runs=${SYM_ONE_RUNS:-30}
echo "ELF: $elf ($(stat -c %s "$elf") bytes), one address per process, best of $runs each"
for addr in "${addrs[@]}"; do
  python3 - "$runs" "$addr" "$spoor" "$elf" <<'PY'
import subprocess, sys, time
runs, addr, spoor, elf = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmds = {"spoor": [spoor, "sym", "-e", elf, addr],
        "addr2line": ["arm-none-eabi-addr2line", "-f", "-i", "-e", elf, addr]}
best = {k: None for k in cmds}
for _ in range(runs):  # interleaved, so that both see the same machine load
    for k, cmd in cmds.items():
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        t = time.perf_counter() - t0
        best[k] = t if best[k] is None or t < best[k] else best[k]
answer = subprocess.run(cmds["spoor"], capture_output=True, text=True).stdout.strip()
print(f"{addr}: {answer}")
print(f"  spoor sym -e ELF ADDR                      {best['spoor'] * 1000:7.2f} ms")
print(f"  arm-none-eabi-addr2line -f -i -e ELF ADDR  {best['addr2line'] * 1000:7.2f} ms  (baseline)")
print(f"  ratio: spoor takes {best['spoor'] / best['addr2line']:.2f}x addr2line's time")
PY
  if command -v valgrind >/dev/null; then
    tmp=$(mktemp -d)
    instructions() { # instructions executed by: $@ > /dev/null
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.log"
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.log"
    }
    i_spoor=$(instructions "$spoor" sym -e "$elf" "$addr")
    i_a2l=$(instructions arm-none-eabi-addr2line -f -i -e "$elf" "$addr")
    rm -rf "$tmp"
    printf '  instructions (callgrind): spoor %.2f M, addr2line %.2f M, ratio %s\n' \
      "$(python3 -c "print($i_spoor/1e6)")" "$(python3 -c "print($i_a2l/1e6)")" \
      "$(python3 -c "print('%.2fx' % ($i_spoor/$i_a2l))")"
  fi
done
