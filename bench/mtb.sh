#!/usr/bin/env bash
# spoor mtb speed: decode + symbolize + --flow of a full 64 KiB MTB buffer (8,192 packets)
# against a 1 MB ELF, as one whole process. The firmware is generated here (chains of
# functions that call each other, each with its own source lines, built with -g3), run in QEMU
# with an execution log, and the virtual MTB (tools/virtual_mtb.py) gives the buffer a real
# 64 KiB MTB would hold at the end. Prints the ELF size, the packet and instruction counts and
# the best wall time of MTB_BENCH_RUNS (default 10) runs of each mode.
# usage: bench/mtb.sh [SPOOR_BIN]   (default: a release build in build/bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then spoor=$1; else
  cmake -S "$root" -B "$root/build/bench" -DCMAKE_BUILD_TYPE=Release -DSPOOR_FIRMWARE=OFF >/dev/null
  cmake --build "$root/build/bench" -j "$(nproc)" --target spoor_cli >/dev/null
  spoor=$root/build/bench/spoor
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/bench.c" <<'PY'
import sys
n = 2400
with open(sys.argv[1], "w") as f:
    f.write('#include <stdint.h>\n#include "semihost.h"\nvolatile uint32_t sink;\n')
    for i in range(n):
        f.write(f"#define BENCH_MACRO_{i}(x) ((x) * {i + 3} + {i})\n")
    for i in reversed(range(n)):
        f.write(f"__attribute__((noinline)) uint32_t step_{i}(uint32_t x)\n{{\n")
        f.write(f"    uint32_t y = BENCH_MACRO_{i}(x);\n")
        f.write(f"    if (y & {1 << (i % 7)}u)\n        y ^= {i * 7919 % 65521}u;\n")
        if i + 1 < n and (i + 1) % 8:  # chains of 8 calls: the stack stays small
            f.write(f"    y += step_{i + 1}(y >> 1);\n")
        f.write("    sink = y;\n    return y;\n}\n")
    f.write("int main(void)\n{\n    for (uint32_t r = 0; r < 3u; r++) {\n")
    for i in range(0, n, 8):
        f.write(f"        sink = step_{i}(r);\n")
    f.write("    }\n    __asm__ volatile(\"udf #1\");\n    return 0;\n}\n")
PY
ld=$root/examples/ld
arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -mfloat-abi=soft -O1 -g3 -ffunction-sections \
  -nostartfiles -I"$root/examples/common" -DSPOOR_EXAMPLE_CPU='"m3"' \
  -DSPOOR_EXAMPLE_MACHINE='"mps2-an385"' -L"$ld" -T"$ld/mps2-an385.ld" \
  "$tmp/bench.c" "$root/examples/common/startup.c" "$root/examples/common/semihost.c" -o "$tmp/bench.elf"
qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$tmp/bench.elf" -icount shift=0 \
  -singlestep -d exec,nochain,int -D "$tmp/exec.log" >/dev/null 2>&1 &
qemu=$!
sleep 0.5
for _ in $(seq 100); do # the udf ends in the default handler's loop: stop QEMU once it is there
  if grep -q "Undefined Instruction" "$tmp/exec.log" 2>/dev/null; then break; fi
  sleep 0.2
done
sleep 0.5; kill "$qemu" 2>/dev/null || true; wait "$qemu" 2>/dev/null || true
python3 "$root/tools/virtual_mtb.py" --elf "$tmp/bench.elf" --log "$tmp/exec.log" --size 65536 \
  --base 0x20100000 --regs-out "$tmp/regs.bin" --buffer-out "$tmp/buf.bin" \
  --expect-out "$tmp/expect.json"
rm -f "$tmp/exec.log"
input=(-e "$tmp/bench.elf" --mem "0xE0043000:$tmp/regs.bin" --mem "0x20100000:$tmp/buf.bin")
python3 - "$spoor" "$tmp" "${MTB_BENCH_RUNS:-10}" "${input[@]}" <<'PY'
import json, os, subprocess, sys, time
spoor, tmp, runs, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
expect = json.load(open(os.path.join(tmp, "expect.json")))
print(f"ELF: {os.path.getsize(os.path.join(tmp, 'bench.elf'))} bytes; buffer 65536 bytes, "
      f"{len(expect['packets'])} packets (wrapped: {expect['wrapped']}), "
      f"{len(expect['flow'])} instructions between them")
for mode in ([], ["--flow"], ["--flow", "--json"], ["--calls"]):
    best = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([spoor, "mtb", *mode, *args], capture_output=True, check=True)
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    lines = out.stdout.count(b"\n")
    if mode == ["--flow", "--json"]:  # the flow must be what QEMU executed
        pcs = [json.loads(l)["pc"] for l in out.stdout.decode().splitlines()]
        assert pcs == expect["flow"], "spoor mtb --flow differs from QEMU's instructions"
    print(f"  spoor mtb {' '.join(mode) or '(listing)':14s} {best * 1000:7.1f} ms  "
          f"({lines} lines, best of {runs})")
PY
