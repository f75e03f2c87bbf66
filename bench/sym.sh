#!/usr/bin/env bash
# Symbolizer speed: 100,000 random code addresses of each ELF, symbolized by `spoor sym`, by the
# baseline `arm-none-eabi-addr2line -f -i` and by `llvm-symbolizer --inlining` (when installed),
# each as one whole process reading the addresses from a file, measured in the same run. Prints
# the times and the ratios, and with valgrind installed the instructions each whole process
# executes, counted by callgrind: steadier than wall time on a busy machine (the acceptance
# figure; SYM_BENCH_CALLGRIND=0 leaves it out).
# usage: bench/sym.sh [SPOOR_BIN] [ELF...]   (defaults: a release build in build/bench; its
#   printf-m4f.elf and a FreeRTOS-sized ELF of 700+ sections from bench/sym_many_sections.sh)
# With SYM_BENCH_ONE=1 it times one address per process instead: see bench/sym_one.sh.
# SYM_BENCH_RUNS (default 10) sets how many runs each; the best wall time counts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then spoor=$1; else
  cmake -S "$root" -B "$root/build/bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build/bench" -j "$(nproc)" >/dev/null
  spoor=$root/build/bench/spoor
fi
elf=${2:-$root/build/bench/firmware/examples/printf-m4f.elf}
elfs=("${@:2}")
if [ ${#elfs[@]} -eq 0 ]; then
  many=$root/build/bench/sym_many_sections.elf
  [ -f "$many" ] || "$root/bench/sym_many_sections.sh" "$many" >/dev/null
  elfs=("$elf" "$many")
fi
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
instructions() { # instructions executed by: $@ < addrs > /dev/null
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" <"$tmp/addrs" >/dev/null \
    2>"$tmp/cg.log"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.log"
}
callgrind=${SYM_BENCH_CALLGRIND:-1}
command -v valgrind >/dev/null || callgrind=0
for elf in "${elfs[@]}"; do
  PYTHONPATH=$root/tests/e2e python3 -c "
import sys, sym_diff
for a in sym_diff.random_addresses(sys.argv[1], 100000, 7): print(hex(a))" "$elf" >"$tmp/addrs"
  tools=(spoor addr2line)
  declare -A cmd=([spoor]="$spoor sym -e $elf" [addr2line]="arm-none-eabi-addr2line -f -i -e $elf")
  declare -A label=([spoor]="spoor sym -e ELF" [addr2line]="arm-none-eabi-addr2line -f -i -e ELF")
  if command -v llvm-symbolizer >/dev/null; then
    tools+=(llvm)
    cmd[llvm]="llvm-symbolizer --inlining --obj=$elf"
    label[llvm]="llvm-symbolizer --inlining --obj=ELF"
  fi
  echo "ELF: $elf ($(stat -c %s "$elf") bytes), 100000 addresses, best of $runs each"
  command -v llvm-symbolizer >/dev/null || echo "llvm-symbolizer not installed"
  declare -A t=() i=()
  for k in "${tools[@]}"; do
    # shellcheck disable=SC2086 # the commands are word lists
    t[$k]=$(best ${cmd[$k]})
    [ "$callgrind" = 1 ] && i[$k]=$(instructions ${cmd[$k]})
  done
  for k in "${tools[@]}"; do
    line=$(printf '%-40s %8.4f s' "${label[$k]}" "${t[$k]}")
    [ "$callgrind" = 1 ] && line+=$(printf '  %10.1f M instructions' \
      "$(python3 -c "print(${i[$k]}/1e6)")")
    [ "$k" = addr2line ] && line+="  (baseline)"
    echo "$line"
  done
  python3 -c "print('ratio: spoor is %.1fx faster than addr2line (wall time)' % (${t[addr2line]}/${t[spoor]}))"
  [ "$callgrind" = 1 ] && python3 -c "print('ratio: spoor executes %.1fx fewer instructions than addr2line' % (${i[addr2line]}/${i[spoor]}))"
  if [ -n "${t[llvm]:-}" ]; then
    python3 -c "print('ratio: spoor is %.1fx faster than llvm-symbolizer (wall time)' % (${t[llvm]}/${t[spoor]}))"
    [ "$callgrind" = 1 ] && python3 -c "print('ratio: spoor executes %.1fx fewer instructions than llvm-symbolizer' % (${i[llvm]}/${i[spoor]}))"
  fi
  unset t i cmd label
  echo
done
