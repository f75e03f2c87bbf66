#!/usr/bin/env bash
# spoor triage throughput: dumps signed per second per core, against the baseline of a shell
# loop running `spoor crash --json` once per dump over the same dumps (what a script without
# triage does). The firmware: examples/crash for the Cortex-M3 linked again with a padding
# object of ~1 MB of code (so the ELF is 1 MB and more), every scenario run once in QEMU for a
# dump of a few KB, each dump copied N times. Prints dumps/s of both, per core, and the ratio.
# usage: bench/triage.sh [SPOOR_BIN] [N] [OTHER_SPOOR_BIN]   (defaults: build/bench/spoor if
#   built, else build/check/spoor; 250 copies of each scenario's dump; OTHER: another build of
#   spoor, e.g. of an earlier commit, measured the same way in the same run)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
SPOOR=${1:-$ROOT/build/bench/spoor}
[ -x "$SPOOR" ] || SPOOR=$ROOT/build/check/spoor
N=${2:-250}
OTHER=${3:-}
BUILD=$(dirname "$SPOOR")
FW=$BUILD/firmware/examples
[ -d "$FW" ] || FW=$ROOT/build/check/firmware/examples
W=$(mktemp -d /tmp/spoor-bench-triage.XXXXXX)
trap 'rm -rf "$W"' EXIT
obj=$FW/CMakeFiles/crash-m3.dir
var() { sed -n "s/^$1 = //p" "$obj/flags.make"; }
CFLAGS="$(var C_DEFINES) $(var C_INCLUDES) $(var C_FLAGS)"
mkdir -p "$W/elfs" "$W/dumps"
printf '__attribute__((used, section(".text.a_pad"))) void bench_pad(void)\n{ __asm__ volatile(".rept 450000\\n\\tnop\\n\\t.endr"); }\n' > "$W/pad.c"
LINK=$(sed -e 's/"CMakeFiles[^"]*"//g' -e 's/-Wl,-Map=[^ ]*//' -e 's/-o crash-m3.elf//' "$obj/link.txt")
GCC=${LINK%% *}
(cd "$FW" && for s in "$W/pad.c" "$ROOT/examples/crash/crash.c" "$ROOT/examples/common/startup.c" \
     "$ROOT/examples/common/semihost.c"; do
     eval "$GCC $CFLAGS -c $s -o $W/$(basename "$s").o"; done &&
 eval "$GCC $W/pad.c.o $W/crash.c.o $W/startup.c.o $W/semihost.c.o ${LINK#* } -Wl,--undefined=bench_pad -o $W/elfs/crash-big.elf")
ELF=$W/elfs/crash-big.elf
for s in badptr busfault div0 undef overflow nested psp assert; do
    qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
        -semihosting-config "enable=on,target=native,arg=crash,arg=$s,arg=$W/$s.bin" \
        -kernel "$ELF" > /dev/null 2>&1 || true
    for i in $(seq 1 "$N"); do cp "$W/$s.bin" "$W/dumps/$s-$i.bin"; done
done
COUNT=$(ls "$W/dumps" | wc -l)
echo "spoor: $SPOOR"
echo "ELF: $(stat -c %s "$ELF") bytes; $COUNT dumps of $(stat -c %s "$W/div0.bin") bytes (div0)"
CORES=$(nproc)
T1=$(best "$SPOOR" triage --elf-dir "$W/elfs" --jobs 1 "$W/dumps")
TN=$(best "$SPOOR" triage --elf-dir "$W/elfs" --jobs "$CORES" "$W/dumps")
if [ -n "$OTHER" ]; then
    O1=$(best "$OTHER" triage --elf-dir "$W/elfs" --jobs 1 "$W/dumps")
    ON=$(best "$OTHER" triage --elf-dir "$W/elfs" --jobs "$CORES" "$W/dumps")
    # the same buckets from both builds
    "$SPOOR" triage --elf-dir "$W/elfs" --json "$W/dumps" > "$W/mine.jsonl"
    "$OTHER" triage --elf-dir "$W/elfs" --json "$W/dumps" > "$W/other.jsonl"
    cmp -s "$W/mine.jsonl" "$W/other.jsonl" || echo "WARNING: the two builds give other buckets"
fi
# baseline: one spoor crash process per dump, over a sample of 200 dumps
ls "$W/dumps" | head -200 | sed "s|^|$W/dumps/|" > "$W/sample"
loop() { while read -r d; do "$SPOOR" crash --json -e "$ELF" "$d"; done < "$W/sample"; }
TB=$(best loop)
awk -v c="$COUNT" -v t1="$T1" -v tn="$TN" -v n="$CORES" -v tb="$TB" 'BEGIN {
    printf "spoor triage, 1 thread:    %8.0f dumps/s (%.3f s)\n", c / t1, t1
    printf "spoor triage, %d threads:   %8.0f dumps/s (%.3f s), %.0f per core\n", n, c / tn, tn, c / tn / n
    printf "baseline (spoor crash --json loop): %6.1f dumps/s (200 dumps, %.3f s)\n", 200 / tb, tb
    printf "ratio (triage 1 thread / baseline): %.0fx\n", (c / t1) / (200 / tb) }'
if [ -n "$OTHER" ]; then
    awk -v c="$COUNT" -v t1="$O1" -v tn="$ON" -v n="$CORES" -v tb="$TB" -v o="$OTHER" 'BEGIN {
    printf "other build (%s):\n", o
    printf "spoor triage, 1 thread:    %8.0f dumps/s (%.3f s)\n", c / t1, t1
    printf "spoor triage, %d threads:   %8.0f dumps/s (%.3f s), %.0f per core\n", n, c / tn, tn, c / tn / n
    printf "ratio (triage 1 thread / baseline): %.0fx\n", (c / t1) / (200 / tb) }'
fi
