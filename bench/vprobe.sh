#!/usr/bin/env bash
# spoor vprobe throughput: target instructions emulated per second with tracing on, for the
# scheduler example (examples/vprobe, TICKS SysTick ticks of 1 ms, default 60), against QEMU
# alone on the same run (-icount, no log), QEMU writing the full log (-d exec,nochain,int,cpu,
# what the probe read until issue 21, and still reads with --full-log) to a file -- the
# baseline -- and QEMU writing the register log the probe reads (-d cpu,nochain,int) to a
# file. The probe runs four ways: --gdb 0; the default GDB port (a free port here) with no
# debugger; the same with gdb-multiarch halting the target (a breakpoint hit 20 times, 20
# stepi, an interrupt, detach; skipped without gdb-multiarch); the GDB port with --full-log.
# Rate: the guest's instructions (the probe's count, equal to the full log's "Trace" lines that
# ran) divided by the wall time of the whole run (with gdb: that run's own count, its halts
# included in the time); ratios against the baseline.
# usage: bench/vprobe.sh [BUILD_DIR]   (needs spoor and the firmware; default: the release build
#   build/bench that the other bench scripts use, else build/check, else build/bench configured
#   and built here as bench/sym.sh does)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
has_all() { [ -x "$1/spoor" ] && [ -f "$1/firmware/examples/vprobe_sched-m3.elf" ]; }
if [ $# -ge 1 ]; then
  build=$1
else
  build=
  for b in "$root/build/bench" "$root/build/check"; do
    if has_all "$b"; then build=$b; break; fi
  done
  if [ -z "$build" ]; then
    build=$root/build/bench
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j "$(nproc)" >/dev/null
  fi
fi
if ! has_all "$build"; then
  echo "bench/vprobe.sh: $build has no spoor or no firmware/examples/vprobe_sched-m3.elf" >&2
  exit 2
fi
spoor=$build/spoor
elf=$build/firmware/examples/vprobe_sched-m3.elf
echo "build: $build"
ticks=${TICKS:-60}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
qemu=(qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none
      -semihosting-config "enable=on,target=native,arg=vprobe_sched,arg=$ticks" -kernel "$elf")
seconds() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "$(date +%s.%N) - $s" | bc; }
stat_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
free_port() {
  python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"
}
"$spoor" vprobe -q --gdb 0 -p 0 -o "$tmp/s.itm" --stats "$tmp/stats.json" -- "${qemu[@]}"
insns=$(stat_of "$tmp/stats.json" instructions)
probe=$(stat_of "$tmp/stats.json" seconds)
"$spoor" vprobe -q --gdb "$(free_port)" -p 0 -o "$tmp/g.itm" --stats "$tmp/g.json" -- "${qemu[@]}"
gport=$(stat_of "$tmp/g.json" seconds)
"$spoor" vprobe -q --gdb "$(free_port)" --full-log -p 0 -o "$tmp/f.itm" --stats "$tmp/f.json" \
  -- "${qemu[@]}"
fullport=$(stat_of "$tmp/f.json" seconds)
for run in g f; do
  if ! cmp -s "$tmp/s.itm" "$tmp/$run.itm"; then
    echo "bench/vprobe.sh: the GDB-port run's stream ($run) is not the --gdb 0 run's" >&2
    exit 1
  fi
done
halted=
if command -v gdb-multiarch >/dev/null; then
  port=$(free_port)
  printf '%s\n' "set pagination off" "set confirm off" "target remote 127.0.0.1:$port" \
    "break switch_context" "continue 20" "stepi 20" "delete" \
    'shell (sleep 1; kill -INT $PPID) &' "continue" "detach" >"$tmp/halts.gdb"
  "$spoor" vprobe -q --gdb "$port" -p 0 -o "$tmp/h.itm" --stats "$tmp/h.json" -- "${qemu[@]}" -S &
  pid=$!
  until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" \
      2>/dev/null; do
    kill -0 "$pid" || exit 1
    sleep 0.05
  done
  gdb-multiarch -batch -nx "$elf" -x "$tmp/halts.gdb" >"$tmp/halts.out" 2>&1
  wait "$pid"
  halted=$(stat_of "$tmp/h.json" seconds)
  hinsns=$(stat_of "$tmp/h.json" instructions)
fi
alone=$(seconds "${qemu[@]}" -icount shift=5,sleep=off)
logged=$(seconds "${qemu[@]}" -icount shift=5,sleep=off -singlestep -d exec,nochain,int,cpu -D "$tmp/q.log")
bytes=$(stat -c %s "$tmp/q.log")
registers=$(seconds "${qemu[@]}" -icount shift=5,sleep=off -singlestep -d cpu,nochain,int -D "$tmp/r.log")
rbytes=$(stat -c %s "$tmp/r.log")
rate() { python3 -c "print(f'{${2:-$insns} / $1:,.0f} instructions/s ({$1:.2f} s)')"; }
ratio() { python3 -c "print(f'{${2:-$insns} / $1 / ($insns / $logged):.2f}x the baseline')"; }
echo "instructions: $insns ($ticks ticks), stream $(stat -c %s "$tmp/s.itm") bytes, full log $bytes bytes, register log $rbytes bytes"
echo "QEMU alone (-icount):                          $(rate "$alone")"
echo "QEMU, -d exec,nochain,int,cpu to file (base):  $(rate "$logged")"
echo "QEMU, -d cpu,nochain,int to file:              $(rate "$registers")"
echo "spoor vprobe --gdb 0 (tracing on):             $(rate "$probe"), $(ratio "$probe")"
echo "spoor vprobe, GDB port, no debugger:           $(rate "$gport"), $(ratio "$gport")"
if [ -n "$halted" ]; then
  grep -q "^Program received signal SIGINT" "$tmp/halts.out" ||
    echo "bench/vprobe.sh: gdb's interrupt did not land: $(tail -3 "$tmp/halts.out")" >&2
  echo "spoor vprobe, GDB port, gdb halts it:          $(rate "$halted" "$hinsns"), $(ratio "$halted" "$hinsns") ($hinsns instructions; 20 breakpoint stops, stepi 20, an interrupt)"
fi
echo "spoor vprobe, GDB port, --full-log:            $(rate "$fullport"), $(ratio "$fullport")"
python3 -c "print(f'ratio: spoor vprobe runs at {$logged / $probe:.2f}x (--gdb 0) and {$logged / $gport:.2f}x (GDB port, the default) the rate of QEMU writing the full log to a file (baseline; goal >= 1x), {$registers / $probe:.2f}x QEMU writing the register log it reads')"
