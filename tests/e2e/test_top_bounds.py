"""spoor top stays bounded and honest on inputs that are legal but unkind.

  * Output amplification: a 61-byte ITM stream (a switch, then ten local timestamps of 2^28 - 1
    cycles each) spans 2.7 million 1 ms intervals at -F 1000000. Intervals in which nothing
    happens are reported one by one only for the first two after an event; the rest up to the
    next event are one report, "N intervals with no activity" (JSON quiet_intervals). Output
    must stay small and fast, and the reports must still add up to every interval (the whole
    run's count, the JSON reports' intervals).
  * The idle thread's pointer not readable (the FreeRTOS-shaped firmware of
    test_top_rtos_shapes.py with --mem images that leave out the 4 bytes of xIdleTaskHandle):
    the idle thread's time then counts as busy (the whole run's CPU Usage 75 % instead of 50 %), which
    must be said: a warning naming the pointer, the CPU line marked, JSON idle_known false.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import symbol_addresses, time_limit  # noqa: E402
from test_top_rtos_shapes import build_with_data, stream  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
RAM = 0x20000000


def amplification(work, elf):
    data = bytearray(b"\x00" * 5 + b"\x80")
    data.append((16 + 2 * 1 + 1) << 3 | 0x4 | 0x3)  # comparator 1 data value write
    data += (0x20000100).to_bytes(4, "little")
    for _ in range(10):
        data += bytes([0xC0, 0xFF, 0xFF, 0xFF, 0x7F])  # local timestamp 2^28 - 1
    itm = work / "big.itm"
    itm.write_bytes(data)
    jsonl = work / "big.jsonl"
    began = time.monotonic()
    try:
        result = subprocess.run([SPOOR, "top", "-e", str(elf), "--input", str(itm), "-F",
                                 "1000000", "-I", "1", "-j", str(jsonl)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    except subprocess.TimeoutExpired:
        check(False, "amplification: spoor top ran over 30 s on 61 bytes")
        return
    took = time.monotonic() - began
    out = result.stdout.decode(errors="replace")
    total = 10 * (2**28 - 1) // 1000
    check(result.returncode == 0, f"amplification: exit {result.returncode}: {result.stderr}")
    check(len(result.stdout) < 100000 and took < time_limit(0.0, 10.0),
          f"amplification: {len(result.stdout)} bytes of output in {took:.1f} s")
    check(f"=== Whole run (FreeRTOS): {total} intervals" in out,
          f"amplification: whole run: {out[-600:]}")
    check("intervals 3-268434: 3.000-268435.000 ms: 268432 intervals with no activity" in out,
          f"amplification: no summary of the quiet intervals: {out[:2000]}")
    reports = [json.loads(x) for x in jsonl.read_text().splitlines()]
    covered = sum(max(1, r["quiet_intervals"]) for r in reports
                  if not r["summary"] and not r["partial"])
    check(covered == total, f"amplification: JSON reports cover {covered} intervals, not {total}")


def idle_unknown(work, elf, data):
    sym = symbol_addresses(elf)
    image = data.read_bytes()
    hole = sym["xIdleTaskHandle"] - RAM
    (work / "low.bin").write_bytes(image[:hole])
    (work / "high.bin").write_bytes(image[hole + 4:])
    itm = work / "idle.itm"
    itm.write_bytes(stream([sym["sensor_tcb"], sym["net_tcb"], sym["idle_tcb"]]))
    for mems, busy in (([f"{RAM:#x}:{data}"], False),
                       ([f"{RAM:#x}:{work / 'low.bin'}",
                         f"{RAM + hole + 4:#x}:{work / 'high.bin'}"], True)):
        args = [SPOOR, "top", "-e", str(elf), "--input", str(itm), "-F", "1000000",
                "-j", str(work / "idle.jsonl")]
        for m in mems:
            args += ["--mem", m]
        result = subprocess.run(args, capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, f"idle: exit {result.returncode}: {result.stderr}")
        last = json.loads((work / "idle.jsonl").read_text().splitlines()[-1])
        usage = "75.000" if busy else "50.000"
        check(f"CPU Usage: {usage}%" in result.stdout, f"idle: {result.stdout[-400:]}")
        marked = "[idle thread unknown: CPU Usage includes its time]" in result.stdout
        warned = (f"spoor top: warning: idle thread pointer xIdleTaskHandles[0]|xIdleTaskHandle "
                  f"at 0x{sym['xIdleTaskHandle']:08x}: memory not available: the idle thread's "
                  "time counts as busy") in result.stderr
        check(marked == busy and warned == busy and last["idle_known"] == (not busy),
              f"idle (busy {busy}): marked {marked} warned {warned} {last.get('idle_known')}: "
              f"{result.stderr}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data = build_with_data("FREERTOS", work)
        amplification(work, elf)
        idle_unknown(work, elf, data)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
