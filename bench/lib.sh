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

# best of three CPU seconds (user + system of the finished child, getrusage's microseconds;
# /usr/bin/time has only hundredths) of "$@" (stdout to /dev/null): on a shared machine a
# process's CPU time moves less than its wall-clock time
best_cpu() {
    python3 -c 'import resource, subprocess, sys
best = None
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = cpu if best is None or cpu < best else best
print("%.6f" % best)' "$@"
}
