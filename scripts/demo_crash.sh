#!/usr/bin/env bash
# The crash demo: a Cortex-M3 firmware in QEMU calls a bad function pointer from its timer
# interrupt; spoor's fault handler writes a crash dump into RAM that survives the reset; after
# the reset the firmware hands the dump to the host through semihosting; spoor crash explains it.
# usage: scripts/demo_crash.sh BUILD_DIR   (BUILD_DIR: a configured and built spoor build)
set -euo pipefail
build=${1:?usage: scripts/demo_crash.sh BUILD_DIR}
build=$(cd "$build" && pwd)
spoor=$build/spoor
elf=$build/firmware/examples/crash-m3.elf
for file in "$spoor" "$elf"; do
  [[ -e $file ]] || { echo "demo_crash: $file is missing (build first)" >&2; exit 2; }
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
dump=$work/crash.bin

echo "== 1. crash-m3.elf in QEMU (mps2-an385, Cortex-M3), scenario 'badptr' =="
echo "   SysTick_Handler -> timer_tick -> dispatch_tick_callback calls a corrupted callback;"
echo "   the fault handler saves a dump in .noinit RAM and resets the core (SYSRESETREQ);"
echo "   after the reset the firmware writes the dump to the host through semihosting."
timeout 60 qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
  -semihosting-config "enable=on,target=native,arg=crash,arg=badptr,arg=$dump" \
  -kernel "$elf" 2>&1 | sed 's/^/   | /'
echo
echo "== 2. the dump the device handed over =="
echo "   crash.bin: $(wc -c <"$dump") bytes"
echo
echo "== 3. spoor crash -e crash-m3.elf crash.bin =="
(cd "$work" && "$spoor" crash -e "$elf" crash.bin)
