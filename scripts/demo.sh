#!/usr/bin/env bash
# make demo: run an example firmware in QEMU, then name what it executed with spoor sym.
# usage: scripts/demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: scripts/demo.sh BUILD_DIR}
spoor=$build/spoor
elf=$build/firmware/examples/calls-m3.elf
log=$(mktemp); trap 'rm -f "$log"' EXIT

echo "== calls-m3.elf on QEMU mps2-an385 (Cortex-M3), with QEMU's instruction log =="
timeout 60 qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -singlestep -d exec,nochain,int -D "$log" \
  -kernel "$elf"
echo
echo "== PCs around the two interrupts and a sample of the executed PCs, symbolized by spoor sym =="
# QEMU logs "Trace ...: [.../PC/...]" per instruction and "Taking exception N" per exception.
python3 - "$log" >"$log.pcs" <<'PY'
import re, sys
pcs, shown = [], []
take_next = False
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Trace [^\[]*\[[0-9a-f]+/([0-9a-f]+)/", line)
    if m:
        pc = int(m.group(1), 16)
        if take_next:            # first instruction of an exception handler
            shown.append(pc)
            take_next = False
        pcs.append(pc)
    elif "Taking exception" in line and "Semihosting" not in line:
        take_next = True
step = max(1, len(pcs) // 6)
shown += pcs[::step][:6]
print(f"{len(pcs)} instructions executed", file=sys.stderr)
for pc in shown:
    print(hex(pc))
PY
"$spoor" sym -e "$elf" <"$log.pcs"
rm -f "$log.pcs"
echo
echo "== the same as JSON (first two) =="
head -2 <("$spoor" sym --json -e "$elf" "$(arm-none-eabi-nm "$elf" | awk '$3=="level_three"{print "0x"$1}')" \
  "$(arm-none-eabi-nm "$elf" | awk '$3=="tick_work"{print "0x"$1}')")
