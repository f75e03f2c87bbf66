#!/usr/bin/env bash
# Symbolizer speed: 100,000 random code addresses of the largest example ELF, symbolized by
# `spoor sym` and by the baseline `arm-none-eabi-addr2line -f -i`, each as one whole process
# reading the addresses from a file, measured in the same run. Prints both times and the ratio.
# usage: bench/sym.sh [SPOOR_BIN] [ELF]   (defaults: a release build in build/bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then spoor=$1; else
  cmake -S "$root" -B "$root/build/bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build/bench" -j "$(nproc)" >/dev/null
  spoor=$root/build/bench/spoor
fi
elf=${2:-$root/build/bench/firmware/examples/printf-m4f.elf}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
PYTHONPATH=$root/tests/e2e python3 -c "
import sys, sym_diff
for a in sym_diff.random_addresses(sys.argv[1], 100000, 7): print(hex(a))" "$elf" >"$tmp/addrs"

best() { # best wall time in seconds of 3 runs of: $@ < addrs > /dev/null
  local b=
  for _ in 1 2 3; do
    local t0 t1; t0=$(date +%s.%N)
    "$@" <"$tmp/addrs" >/dev/null
    t1=$(date +%s.%N)
    b=$(python3 -c "t=$t1-$t0; b='$b'; print(t if not b or t<float(b) else b)")
  done
  echo "$b"
}
t_spoor=$(best "$spoor" sym -e "$elf")
t_a2l=$(best arm-none-eabi-addr2line -f -i -e "$elf")
echo "ELF: $elf ($(stat -c %s "$elf") bytes), 100000 addresses, best of 3 each"
printf 'spoor sym -e ELF                       %8.3f s\n' "$t_spoor"
printf 'arm-none-eabi-addr2line -f -i -e ELF   %8.3f s  (baseline)\n' "$t_a2l"
python3 -c "print('ratio: spoor is %.1fx faster than addr2line' % ($t_a2l/$t_spoor))"
