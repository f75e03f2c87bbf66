#!/usr/bin/env bash
# make demo-top: a scheduler firmware runs in QEMU under the virtual trace probe (spoor vprobe,
# docs/vprobe.md) and `spoor top` shows its threads live from the probe's TCP stream for a few
# intervals, then exits when the firmware does.
# usage: tools/vprobe_demo_top.sh BUILD_DIR   (a configured and built spoor build)
# The firmware and spoor top's extra flags can be changed without editing this file:
#   DEMO_TOP_ELF   default BUILD_DIR/firmware/examples/vprobe_sched-m3.elf (examples/vprobe)
#   DEMO_TOP_ARGS  more `spoor top` flags (e.g. -T auto, --gdb 127.0.0.1:3333)
#   DEMO_TOP_TICKS SysTick ticks (1 ms of target time each) the firmware runs (default 60)
set -euo pipefail
build=${1:?usage: tools/vprobe_demo_top.sh BUILD_DIR}
build=$(cd "$build" && pwd)
spoor=$build/spoor
elf=${DEMO_TOP_ELF:-$build/firmware/examples/vprobe_sched-m3.elf}
ticks=${DEMO_TOP_TICKS:-60}
for file in "$spoor" "$elf"; do
  [[ -e $file ]] || { echo "demo-top: $file is missing (build first)" >&2; exit 2; }
done
if ! "$spoor" --help | grep -q '^  top '; then
  echo "demo-top: skipped: this spoor has no 'top' command yet (issue 10, spoor top);"
  echo "          the virtual probe alone: $spoor vprobe --help"
  exit 0
fi
shift_=5 # -icount shift: one instruction = 32 ns, a 31.25 MHz CPU clock
hz=$((1000000000 >> shift_))
port=${DEMO_TOP_PORT:-46000}

echo "== $(basename "$elf") in QEMU (mps2-an385) under spoor vprobe: the ITM/DWT stream on 127.0.0.1:$port =="
"$spoor" vprobe --wait-client --gdb 0 -p "$port" --shift "$shift_" -- \
  qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
  -semihosting-config "enable=on,target=native,arg=vprobe_sched,arg=$ticks" -kernel "$elf" &
probe=$!
trap 'kill "$probe" 2>/dev/null || true' EXIT
listening=$(printf '0100007F:%04X 00000000:0000 0A' "$port")
for _ in $(seq 100); do # until the probe listens (not by connecting: that would be its client)
  grep -q "$listening" /proc/net/tcp && break
  sleep 0.1
done
echo "== spoor top -s 127.0.0.1:$port -e $(basename "$elf") -F $hz -I 10 -n 5 =="
# shellcheck disable=SC2086 # DEMO_TOP_ARGS is a list of flags
timeout 60 "$spoor" top -s "127.0.0.1:$port" -e "$elf" -F "$hz" -I 10 -n 5 ${DEMO_TOP_ARGS:-}
wait "$probe"
