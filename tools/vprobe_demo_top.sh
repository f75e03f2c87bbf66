#!/usr/bin/env bash
# make demo-top: the example scheduler (examples/sched, Cortex-M3) runs in QEMU under the
# virtual trace probe (spoor vprobe, docs/vprobe.md); `spoor top` shows its tasks live, with
# names, priorities and entry functions read through QEMU's gdbstub while the target runs,
# for a few intervals, then exits; the firmware runs on to its end.
# usage: tools/vprobe_demo_top.sh BUILD_DIR   (a configured and built spoor build)
# The firmware and spoor top's extra flags can be changed without editing this file:
#   DEMO_TOP_ELF   default BUILD_DIR/firmware/examples/sched-m3.elf (examples/sched)
#   DEMO_TOP_ARGS  more `spoor top` flags (e.g. --stats, -T sched)
#   DEMO_TOP_TICKS SysTick ticks (1 ms of target time each) the firmware runs (default 60)
#   DEMO_TOP_PORT, DEMO_TOP_GDB_PORT  the stream's and the gdbstub's TCP ports (46000, 46001)
set -euo pipefail
build=${1:?usage: tools/vprobe_demo_top.sh BUILD_DIR}
build=$(cd "$build" && pwd)
spoor=$build/spoor
elf=${DEMO_TOP_ELF:-$build/firmware/examples/sched-m3.elf}
ticks=${DEMO_TOP_TICKS:-60}
for file in "$spoor" "$elf"; do
  [[ -e $file ]] || { echo "demo-top: $file is missing (build first)" >&2; exit 2; }
done
shift_=5 # -icount shift: one instruction = 32 ns, a 31.25 MHz CPU clock
hz=$((1000000000 >> shift_))
port=${DEMO_TOP_PORT:-46000}
gdb_port=${DEMO_TOP_GDB_PORT:-46001}

echo "== $(basename "$elf") in QEMU (mps2-an385, frozen until spoor top lets it run) under spoor vprobe:"
echo "   the ITM/DWT stream on 127.0.0.1:$port, QEMU's gdbstub on 127.0.0.1:$gdb_port =="
"$spoor" vprobe --gdb "$gdb_port" -p "$port" --shift "$shift_" -- \
  qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
  -semihosting-config "enable=on,target=native,arg=sched,arg=$ticks" -S -kernel "$elf" &
probe=$!
trap 'kill "$probe" 2>/dev/null || true' EXIT
for p in "$port" "$gdb_port"; do # until both listen (not by connecting: that would be a client)
  listening=$(printf '0100007F:%04X 00000000:0000 0A' "$p")
  for _ in $(seq 600); do # 60 s: QEMU starting on a busy machine
    grep -q "$listening" /proc/net/tcp && break
    sleep 0.1
  done
done
echo "== spoor top -s 127.0.0.1:$port --gdb 127.0.0.1:$gdb_port -e $(basename "$elf") -F $hz -I 10 -n 5 -E =="
# shellcheck disable=SC2086 # DEMO_TOP_ARGS is a list of flags
timeout 60 "$spoor" top -s "127.0.0.1:$port" --gdb "127.0.0.1:$gdb_port" -e "$elf" -F "$hz" \
  -I 10 -n 5 -E ${DEMO_TOP_ARGS:-}
wait "$probe"
