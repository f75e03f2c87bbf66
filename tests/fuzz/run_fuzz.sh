#!/bin/sh
# run_fuzz.sh NAME BIN SECONDS MAX_LEN WORK SEED_DIR...
# Runs the libFuzzer binary BIN for SECONDS over the read-only SEED_DIRs (new inputs go to the
# folder WORK) and fails when the fuzzer finds something, when a seed folder is missing or
# empty, when libFuzzer does not report reading every file of every seed folder, or when a seed
# is longer than MAX_LEN (libFuzzer would cut it short). Prints the starting coverage (the INITED
# line: coverage after every seed ran once) and the final statistics.
set -u
if [ $# -lt 6 ]; then
    echo "usage: run_fuzz.sh NAME BIN SECONDS MAX_LEN WORK SEED_DIR..." >&2
    exit 2
fi
name=$1 bin=$2 secs=$3 max_len=$4 work=$5
shift 5

fail() {
    echo "fuzz/$name: FAIL: $*" >&2
    exit 1
}

# The seeds as libFuzzer will see them: every regular file under each folder.
for dir in "$@"; do
    [ -d "$dir" ] || fail "seed folder $dir does not exist"
    n=$(find "$dir" -type f | wc -l)
    [ "$n" -gt 0 ] || fail "seed folder $dir has no files"
    long=$(find "$dir" -type f -size +"$max_len"c | head -n 1)
    [ -z "$long" ] || fail "seed $long is longer than -max_len=$max_len: it would be cut short"
done

mkdir -p "$work" || fail "cannot create $work"
log=$work.log
artifacts=$work.artifacts/
mkdir -p "$artifacts" || fail "cannot create $artifacts"
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$artifacts" "$work" "$@" >"$log" 2>&1
rc=$?
cat "$log"
echo "----"
[ "$rc" -eq 0 ] || fail "the fuzzer exited with $rc (artifacts in $artifacts)"

# libFuzzer says "INFO:  N files found in DIR" for every corpus folder it reads.
for dir in "$@"; do
    n=$(find "$dir" -type f | wc -l)
    found=$(grep -F " files found in $dir" "$log" | head -n 1 | awk '{print $2}')
    [ -n "$found" ] || fail "libFuzzer did not read the seed folder $dir"
    [ "$found" -eq "$n" ] || fail "libFuzzer read $found of the $n files in $dir"
    echo "fuzz/$name: seed folder $dir: $found files read"
done
inited=$(grep -m 1 'INITED' "$log")
[ -n "$inited" ] || fail "no INITED line: the seeds did not all run"
echo "fuzz/$name: starting coverage (after the seeds): ${inited#*INITED }"
grep -m 1 -E 'DONE|stat::number_of_executed_units' "$log" | sed "s|^|fuzz/$name: |"
exit 0
