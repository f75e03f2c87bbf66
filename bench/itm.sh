#!/bin/sh
# Throughput of `spoor itm` on a generated 100 MB mixed ITM/DWT stream, against `cat` and
# `wc -c` reading the same file in the same run. Uses a release build (-O2, no sanitizers).
# usage: bench/itm.sh [BUILD_DIR] [MB]     (default build/h1-release, 100)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/h1-release}
MB=${2:-100}
TMP=${TMPDIR:-/tmp}/spoor-bench-itm.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ ! -x "$BUILD/spoor" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DSPOOR_SANITIZE=OFF -DSPOOR_FIRMWARE=OFF >/dev/null
fi
cmake --build "$BUILD" -j2 --target spoor_cli >/dev/null
SPOOR=$BUILD/spoor
cc -O2 -o "$TMP/gen" "$ROOT/bench/gen_itm_stream.c"
FILE=$TMP/mixed.itm
"$TMP/gen" $((MB * 1000 * 1000)) > "$FILE"
BYTES=$(wc -c < "$FILE")

now() { date +%s.%N; }
# best of three wall-clock seconds of "$@" (stdout to /dev/null)
best() {
    b=""
    for _ in 1 2 3; do
        t0=$(now); "$@" > /dev/null; t1=$(now)
        b=$(echo "$t0 $t1 $b" | awk '{d=$2-$1; if ($3 == "" || d < $3) print d; else print $3}')
    done
    echo "$b"
}
mbps() { echo "$BYTES $1" | awk '{printf "%.0f", $1 / $2 / 1e6}'; }

cat "$FILE" > /dev/null # warm the page cache
T_CAT=$(best cat "$FILE")
T_WC=$(best wc -c "$FILE")
T_STATS=$(best "$SPOOR" itm --stats "$FILE")
T_CHAN=$(best "$SPOOR" itm -c 0,%c "$FILE")
PACKETS=$("$SPOOR" itm --stats "$FILE" | awk '$1 == "packets" {print $2}')
ERRORS=$("$SPOOR" itm --stats "$FILE" | awk '$1 == "errors" {print $2}')
TEXT=$("$SPOOR" itm -c 0,%c "$FILE" | wc -c)

echo "stream: $BYTES bytes, $PACKETS packets, $ERRORS errors, $TEXT bytes of port-0 text"
echo "baseline cat FILE > /dev/null : $(mbps "$T_CAT") MB/s ($T_CAT s)"
echo "baseline wc -c FILE           : $(mbps "$T_WC") MB/s ($T_WC s)"
echo "spoor itm --stats             : $(mbps "$T_STATS") MB/s, $(echo "$PACKETS $T_STATS" | awk '{printf "%.1f", $1 / $2 / 1e6}') M packets/s ($T_STATS s), $(echo "$T_CAT $T_STATS" | awk '{printf "%.2f", $1 / $2}') x cat"
echo "spoor itm -c 0,%c > /dev/null : $(mbps "$T_CHAN") MB/s of stream, $(echo "$TEXT $T_CHAN" | awk '{printf "%.0f", $1 / $2 / 1e6}') MB/s of text ($T_CHAN s), $(echo "$T_CAT $T_CHAN" | awk '{printf "%.2f", $1 / $2}') x cat"
echo "target: >= 600 MB/s decode"
