#!/bin/sh
# Cost of spoor's call recorder on the device and speed of its host decoder.
#
# 1. Instructions per enter+exit pair on the Cortex-M3 (mps2-an385) and the Cortex-M0 (microbit),
#    counted in QEMU's exec log (-singlestep -d exec,nochain: one line per executed instruction)
#    over the hooks and the functions they call, for bench/calls_fw.c built twice at -O2: with
#    spoor's recorder, and with a baseline written like the seed document's (9-byte element,
#    byte-wise generic ring buffer, PRIMASK critical section). The target: at most half.
# 2. Host decode: `spoor calls` (text, and --json) on a generated ring of N records (default 10
#    million; nested calls four deep), read through --mem images; records per second, best of
#    three, output to /dev/null. Uses a release build (-O2, no sanitizers).
# usage: bench/calls.sh [BUILD_DIR] [RECORDS]   (default build/bench-calls, 10000000)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/bench-calls}
RECORDS=${2:-10000000}
TMP=${TMPDIR:-/tmp}/spoor-bench-calls.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT INT TERM

# ---- 1. instructions per pair ----------------------------------------------------------------
CC=arm-none-eabi-gcc
COMMON="-mthumb -O2 -g -ffreestanding -ffunction-sections -fdata-sections -Wall -Wextra -Werror
        -I$ROOT/examples/common -I$ROOT/target/include -DSPOOR_EXAMPLE_CPU=\"bench\"
        -DSPOOR_EXAMPLE_MACHINE=\"bench\""
build_fw() { # cpu-flags machine variant out
    flags=$1 machine=$2 variant=$3 out=$4
    objs=""
    for src in examples/common/startup.c examples/common/semihost.c; do
        o=$TMP/$(basename "$src" .c)-$variant-$machine.o
        $CC $flags $COMMON -c "$ROOT/$src" -o "$o"
        objs="$objs $o"
    done
    define=""
    if [ "$variant" = spoor ]; then
        o=$TMP/recorder-$machine.o
        $CC $flags $COMMON -c "$ROOT/target/src/calls_recorder.c" -o "$o"
        objs="$objs $o"
    else
        define=-DBASELINE
    fi
    $CC $flags $COMMON $define -finstrument-functions -c "$ROOT/bench/calls_fw.c" \
        -o "$TMP/fw-$variant-$machine.o"
    $CC $flags -nostartfiles -L"$ROOT/examples/ld" -T"$ROOT/examples/ld/$machine.ld" \
        -Wl,--gc-sections -o "$out" "$TMP/fw-$variant-$machine.o" $objs
}
# instructions executed inside the named functions, divided by the pairs
count() { # elf functions...
    elf=$1; shift
    qemu-system-arm -M "$MACHINE" -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$elf" \
        -singlestep -d exec,nochain -D "$TMP/exec.log" >/dev/null 2>&1
    arm-none-eabi-nm -S "$elf" > "$TMP/syms"
    pairs=$(sed -n 's/^#define PAIRS \([0-9]*\)u.*/\1/p' "$ROOT/bench/calls_fw.c")
    python3 - "$TMP/syms" "$TMP/exec.log" "$pairs" "$@" <<'PY'
import re, sys
syms, log, pairs, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4:])
ranges = []
for line in open(syms):
    f = line.split()
    if len(f) == 4 and f[3] in want:
        ranges.append((int(f[0], 16), int(f[0], 16) + int(f[1], 16)))
trace = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
n = 0
for line in open(log, errors="replace"):
    m = trace.match(line)
    if m:
        pc = int(m.group(1), 16)
        n += any(lo <= pc < hi for lo, hi in ranges)
print(f"{n / pairs:.1f}")
PY
}
echo "instructions per enter+exit pair (hooks and what they call), $CC -O2:"
for target in "m3 -mcpu=cortex-m3 mps2-an385" "m0 -mcpu=cortex-m0 microbit"; do
    set -- $target
    CPU=$1 FLAGS=$2 MACHINE=$3
    build_fw "$FLAGS" "$MACHINE" spoor "$TMP/spoor-$CPU.elf"
    build_fw "$FLAGS" "$MACHINE" baseline "$TMP/baseline-$CPU.elf"
    s=$(count "$TMP/spoor-$CPU.elf" __cyg_profile_func_enter __cyg_profile_func_exit record_slow)
    b=$(count "$TMP/baseline-$CPU.elf" __cyg_profile_func_enter __cyg_profile_func_exit \
        CYG_Store RNG_Put)
    echo "$CPU $s $b" | awk '{ printf "  %-3s spoor %6.1f   seed-like baseline %6.1f   ratio %.2f\n", $1, $2, $3, $2 / $3 }'
done

# ---- 2. host decode ------------------------------------------------------------------------------
if [ ! -x "$BUILD/spoor" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DSPOOR_SANITIZE=OFF -DSPOOR_FIRMWARE=OFF >/dev/null
fi
cmake --build "$BUILD" -j2 --target spoor_cli >/dev/null
ELF=$TMP/spoor-m3.elf
STATE=$(arm-none-eabi-nm "$ELF" | awk '$3 == "spoor_calls_state" { print "0x" $1 }')
ENTER=$(arm-none-eabi-nm "$ELF" | awk '$3 == "bench_leaf" { print "0x" $1 }')
SITE=$(arm-none-eabi-nm "$ELF" | awk '$3 == "main" { print "0x" $1 }')
RING=0x60000000
python3 - "$TMP" "$RECORDS" "$STATE" "$RING" "$ENTER" "$SITE" <<'PY'
import struct, sys
tmp, n, state, ring, fn, site = sys.argv[1], int(sys.argv[2]), *(int(a, 16) for a in sys.argv[3:])
fn &= ~1
# four nested calls and their returns: 8 records, repeated
unit = b"".join(struct.pack("<II", (fn + 4 * d) | 1, (site + 2 * d) | 1) for d in range(4))
unit += b"".join(struct.pack("<II", fn + 4 * d, (site + 2 * d) | 1) for d in reversed(range(4)))
body = unit * (n // 8) + unit[: 8 * (n % 8)]
open(f"{tmp}/ring.bin", "wb").write(body)
open(f"{tmp}/state.bin", "wb").write(struct.pack("<6I", 0x4C435053, 8, ring, n, 0, 3))
PY
. "$ROOT/bench/lib.sh"
echo "host: spoor calls on $RECORDS records (release build, best of 3):"
for mode in text --json --stats; do
    args=""
    [ "$mode" != text ] && args=$mode
    t=$(best "$BUILD/spoor" calls -e "$ELF" $args --mem "$STATE:$TMP/state.bin" \
        --mem "$RING:$TMP/ring.bin")
    echo "$mode $t $RECORDS" | awk '{ printf "  %-8s %6.2f s   %.1f M records/s\n", $1, $2, $3 / $2 / 1e6 }'
done
