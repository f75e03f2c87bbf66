#!/usr/bin/env bash
# Symbolizer speed: 100,000 random code addresses of the largest example ELF, symbolized by
# `spoor sym` and by the baseline `arm-none-eabi-addr2line -f -i`, each as one whole process
# reading the addresses from a file, measured in the same run. Prints both times and the ratio.
# usage: bench/sym.sh [SPOOR_BIN] [ELF]   (defaults: a release build in build/bench)
# With SYM_BENCH_ONE=1 it times one address per process instead: see bench/sym_one.sh.
# SYM_BENCH_RUNS (default 10) sets how many runs each; the best wall time counts.
# With SYM_BENCH_CALLGRIND=1 (and valgrind installed) it also prints the instructions each
# whole process executes, counted by callgrind: steadier than wall time on a busy machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then spoor=$1; else
  cmake -S "$root" -B "$root/build/bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build/bench" -j "$(nproc)" >/dev/null
  spoor=$root/build/bench/spoor
fi
elf=${2:-$root/build/bench/firmware/examples/printf-m4f.elf}
if [ "${SYM_BENCH_ONE:-0}" = 1 ]; then # bench/sym_one.sh: one address per process
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
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
PYTHONPATH=$root/tests/e2e python3 -c "
import sys, sym_diff
for a in sym_diff.random_addresses(sys.argv[1], 100000, 7): print(hex(a))" "$elf" >"$tmp/addrs"

runs=${SYM_BENCH_RUNS:-10}
best() { # best wall time in seconds of $runs runs of: $@ < addrs > /dev/null (timed in-process
  # by python around the child alone, without the fork of a `date` on either side)
  python3 - "$runs" "$tmp/addrs" "$@" <<'PY'
import subprocess, sys, time
runs, addrs, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
best = None
for _ in range(runs):
    with open(addrs, "rb") as f:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, check=True)
        t = time.perf_counter() - t0
    best = t if best is None or t < best else best
print(best)
PY
}
t_spoor=$(best "$spoor" sym -e "$elf")
t_a2l=$(best arm-none-eabi-addr2line -f -i -e "$elf")
echo "ELF: $elf ($(stat -c %s "$elf") bytes), 100000 addresses, best of $runs each"
printf 'spoor sym -e ELF                       %8.4f s\n' "$t_spoor"
printf 'arm-none-eabi-addr2line -f -i -e ELF   %8.4f s  (baseline)\n' "$t_a2l"
python3 -c "print('ratio: spoor is %.1fx faster than addr2line' % ($t_a2l/$t_spoor))"
if [ "${SYM_BENCH_CALLGRIND:-0}" = 1 ] && command -v valgrind >/dev/null; then
  instructions() { # instructions executed by: $@ < addrs > /dev/null
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" <"$tmp/addrs" >/dev/null \
      2>"$tmp/cg.log"
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.log"
  }
  i_spoor=$(instructions "$spoor" sym -e "$elf")
  i_a2l=$(instructions arm-none-eabi-addr2line -f -i -e "$elf")
  printf 'instructions (callgrind): spoor %d M, addr2line %d M, ratio %s\n' \
    $((i_spoor / 1000000)) $((i_a2l / 1000000)) \
    "$(python3 -c "print('%.1fx' % ($i_a2l/$i_spoor))")"
fi
