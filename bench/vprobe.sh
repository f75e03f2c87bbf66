#!/usr/bin/env bash
# spoor vprobe throughput: target instructions emulated per second with tracing on, for the
# scheduler example (examples/vprobe, TICKS SysTick ticks of 1 ms, default 60), against QEMU
# alone on the same run (-icount, no log), QEMU writing the full log (-d exec,nochain,int,cpu,
# what the probe read until issue 21, and still reads with a GDB port) to a file -- the
# baseline -- and QEMU writing the register log the probe reads without a GDB port
# (-d cpu,nochain,int) to a file. Rate: the guest's instructions (the probe's count, equal to
# the full log's "Trace" lines that ran) divided by the wall time of the whole run.
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
"$spoor" vprobe -q --gdb 0 -p 0 -o "$tmp/s.itm" --stats "$tmp/stats.json" -- "${qemu[@]}"
insns=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['instructions'])" "$tmp/stats.json")
probe=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" "$tmp/stats.json")
alone=$(seconds "${qemu[@]}" -icount shift=5,sleep=off)
logged=$(seconds "${qemu[@]}" -icount shift=5,sleep=off -singlestep -d exec,nochain,int,cpu -D "$tmp/q.log")
bytes=$(stat -c %s "$tmp/q.log")
registers=$(seconds "${qemu[@]}" -icount shift=5,sleep=off -singlestep -d cpu,nochain,int -D "$tmp/r.log")
rbytes=$(stat -c %s "$tmp/r.log")
rate() { python3 -c "print(f'{$insns / $1:,.0f} instructions/s ({$1:.2f} s)')"; }
echo "instructions: $insns ($ticks ticks), stream $(stat -c %s "$tmp/s.itm") bytes, full log $bytes bytes, register log $rbytes bytes"
echo "QEMU alone (-icount):                          $(rate "$alone")"
echo "QEMU, -d exec,nochain,int,cpu to file (base):  $(rate "$logged")"
echo "QEMU, -d cpu,nochain,int to file:              $(rate "$registers")"
echo "spoor vprobe --gdb 0 (tracing on):             $(rate "$probe")"
python3 -c "print(f'ratio: spoor vprobe runs at {$logged / $probe:.2f}x the rate of QEMU writing the full log to a file (baseline; goal >= 1x), {$registers / $probe:.2f}x QEMU writing the register log it reads')"
