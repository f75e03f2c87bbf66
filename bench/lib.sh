# Shared helpers of the bench/*.sh scripts (POSIX sh; source it: . "$ROOT/bench/lib.sh").

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
