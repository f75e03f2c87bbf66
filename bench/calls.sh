#!/bin/sh
# Cost of spoor's call recorder on the device and speed of its host decoder.
#
# 1. Instructions per hook on the Cortex-M0 (microbit), the Cortex-M3 (mps2-an385) and the
#    Cortex-M33 (mps2-an505), counted in QEMU's exec log (-singlestep -d exec,nochain: one line
#    per executed instruction) inside __cyg_profile_func_enter, __cyg_profile_func_exit and what
#    they call, for bench/calls_fw.c built at -O2 (PAIRS calls of an instrumented function, the
#    ring never wraps) with:
#      spoor     this tree's recorder (target/src/calls_recorder.c)
#      before    the recorder of git revision $CALLS_BASE_REV (default HEAD: the last commit; a
#                revision older than the hand-written hooks gives the C hooks' figure)
#      seed-like a recorder written like the seed document's (9-byte element put byte by byte
#                into a generic ring buffer inside a PRIMASK critical section)
#    CALLS_SHOW=1 also prints the instructions one enter and one exit hook executed (the 2nd call,
#    from the exec log, disassembled by objdump); CALLS_HOST=0 stops after part 1.
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

# ---- 1. instructions per hook ----------------------------------------------------------------
CC=arm-none-eabi-gcc
BASE_REV=${CALLS_BASE_REV:-HEAD}
mkdir -p "$TMP/before"
git -C "$ROOT" archive "$BASE_REV" target/src/calls_recorder.c target/src/cortexm/calls_cortexm.h \
    target/include | tar -x -C "$TMP/before"
COMMON="-mthumb -O2 -g -ffreestanding -ffunction-sections -fdata-sections -Wall -Wextra -Werror
        -I$ROOT/examples/common -DSPOOR_EXAMPLE_CPU=\"bench\" -DSPOOR_EXAMPLE_MACHINE=\"bench\""
build_fw() { # cpu-flags machine variant out
    flags=$1 machine=$2 variant=$3 out=$4
    objs=""
    for src in examples/common/startup.c examples/common/semihost.c; do
        o=$TMP/$(basename "$src" .c)-$variant-$machine.o
        $CC $flags $COMMON -I"$ROOT/target/include" -c "$ROOT/$src" -o "$o"
        objs="$objs $o"
    done
    define="" tree=$ROOT
    case $variant in
    spoor | before)
        [ "$variant" = before ] && tree=$TMP/before
        o=$TMP/recorder-$variant-$machine.o
        $CC $flags $COMMON -I"$tree/target/include" -c "$tree/target/src/calls_recorder.c" -o "$o"
        objs="$objs $o" ;;
    *) define=-DBASELINE ;;
    esac
    $CC $flags $COMMON -I"$tree/target/include" $define -finstrument-functions \
        -c "$ROOT/bench/calls_fw.c" -o "$TMP/fw-$variant-$machine.o"
    $CC $flags -nostartfiles -L"$ROOT/examples/ld" -T"$ROOT/examples/ld/$machine.ld" \
        -Wl,--gc-sections -o "$out" "$TMP/fw-$variant-$machine.o" $objs
}
# instructions executed inside the enter hook and inside the exit hook (each with the functions
# it calls, named after it), divided by the pairs: "ENTER EXIT"
count() { # elf enter-functions -- exit-functions
    elf=$1; shift
    qemu-system-arm -M "$MACHINE" -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$elf" \
        -singlestep -d exec,nochain -D "$TMP/exec.log" >/dev/null 2>&1
    arm-none-eabi-nm -S "$elf" > "$TMP/syms"
    pairs=$(sed -n 's/^#define PAIRS \([0-9]*\)u.*/\1/p' "$ROOT/bench/calls_fw.c")
    python3 - "$elf" "$TMP/syms" "$TMP/exec.log" "$pairs" "${CALLS_SHOW:-0}" "$@" <<'PY'
import re, subprocess, sys
elf, syms, log, pairs, show = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
names = sys.argv[6:]
split = names.index("--")
groups = (set(names[:split]), set(names[split + 1:]))
sizes = {}
for line in open(syms):
    f = line.split()
    if len(f) == 4:
        sizes[f[3]] = (int(f[0], 16) & ~1, int(f[1], 16))
ranges = [[sizes[n] for n in g if n in sizes] for g in groups]
trace = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
counts = [0, 0]
calls = [[], []]  # the PCs of each hook call, per hook
current = None
for line in open(log, errors="replace"):
    m = trace.match(line)
    if not m:
        continue
    pc = int(m.group(1), 16)
    which = next((k for k in (0, 1) if any(lo <= pc < lo + n for lo, n in ranges[k])), None)
    if which is None:
        current = None
        continue
    counts[which] += 1
    if current != which:
        calls[which].append([])
        current = which
    calls[which][-1].append(pc)
print(f"{counts[0] / pairs:.1f} {counts[1] / pairs:.1f}")
if show == "1":
    dis = {}
    out = subprocess.run(["arm-none-eabi-objdump", "-d", elf], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{4}\s?)+\s+(.*)$", line)
        if m:
            dis[int(m.group(1), 16)] = m.group(2).split("@")[0].strip()
    for k, kind in enumerate(("enter", "exit")):
        seq = calls[k][1] if len(calls[k]) > 1 else []
        sys.stderr.write(f"    {kind} ({len(seq)}):\n")
        for pc in seq:
            sys.stderr.write(f"      {pc:08x}  {dis.get(pc, '?')}\n")
PY
}
echo "instructions per hook (and what it calls), $CC -O2, QEMU exec log:"
echo "  before = the recorder of $BASE_REV ($(git -C "$ROOT" rev-parse --short "$BASE_REV"))"
for target in "m0 -mcpu=cortex-m0 microbit" "m3 -mcpu=cortex-m3 mps2-an385" \
    "m33 -mcpu=cortex-m33 mps2-an505"; do
    set -- $target
    CPU=$1 FLAGS=$2 MACHINE=$3
    build_fw "$FLAGS" "$MACHINE" spoor "$TMP/spoor-$CPU.elf"
    build_fw "$FLAGS" "$MACHINE" before "$TMP/before-$CPU.elf"
    build_fw "$FLAGS" "$MACHINE" baseline "$TMP/baseline-$CPU.elf"
    [ "${CALLS_SHOW:-0}" = 1 ] && echo "  $CPU spoor:" >&2
    s=$(count "$TMP/spoor-$CPU.elf" __cyg_profile_func_enter record_slow \
        spoor_calls_record_slow -- __cyg_profile_func_exit)
    w=$(CALLS_SHOW=0 count "$TMP/before-$CPU.elf" __cyg_profile_func_enter record_slow \
        spoor_calls_record_slow -- __cyg_profile_func_exit)
    b=$(CALLS_SHOW=0 count "$TMP/baseline-$CPU.elf" __cyg_profile_func_enter CYG_Store RNG_Put \
        -- __cyg_profile_func_exit)
    echo "$CPU $s $w $b" | awk '{
        pair = $2 + $3; before = $4 + $5; seed = $6 + $7
        printf "  %-3s spoor enter %4.1f exit %4.1f pair %5.1f", $1, $2, $3, pair
        printf "   before pair %5.1f (x%.2f)", before, pair / before
        printf "   seed-like pair %6.1f (x%.2f)\n", seed, pair / seed }'
done

# ---- 2. host decode ------------------------------------------------------------------------------
[ "${CALLS_HOST:-1}" = 0 ] && exit 0
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
# the state as the recorder writes it: format 8-byte records, layout 1 (next = the slot's
# address); next = slot 0, which is written: the whole ring, oldest record first
open(f"{tmp}/state.bin", "wb").write(struct.pack("<6I", 0x4C435053, 8 | 1 << 16, ring, n, ring, 3))
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
