"""spoor crash --threads and spoor gdbserver --threads never drop threads without saying so.

The RTOS-shaped firmware of tests/e2e/test_top_rtos_shapes.py (tests/e2e/fw/rtos_shapes_fw.c)
is built for FreeRTOS and Zephyr; its .data (objcopy) is the target memory given with --mem, and
is corrupted here the ways a crashed target's lists are:
  * FreeRTOS: xSuspendedTaskList's first link points where no memory is (a wild pointer, or a
    page a GDB server answers E01 for): Logger cannot be found, which must be said, naming the
    list and the address;
  * Zephyr: the idle thread's next_thread points to itself, or back to the first thread (lists
    that loop; only ThreadX's created list is circular, and it must give no marker): said as a
    loop;
  * Zephyr: 300 and 1,100 more TCBs chained behind the idle thread in a second image: the first
    256 are listed and "N more threads not shown" is said; a list longer than 1,024 items is cut
    there and said.
The uncorrupted memory must give no such marker. Text and JSON (threads_not_shown,
threads_partial), and through spoor gdbserver --threads a last GDB thread saying it; spoor
report's page of each (headless Chromium, test_report.check_partials) says every field of its
JSON that is partial or unknown.

Stack memory the input does not hold is unknown, never used: the FreeRTOS tasks' stacks are
filled with 0xA5 below their saved SP (as tskSTACK_FILL_BYTE fills them), and Net's lowest 64
bytes are left out of the --mem images. IDLE's free_min must be what uxTaskGetStackHighWaterMark
counts on the image (0xA5 bytes from pxStack, whole words); Net's free_min, peak and overflowed
unknown (null, "overflow unknown"), the address where memory gave out said, never OVERFLOWED.
"""

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import symbol_addresses  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from rsp_framing import frame  # noqa: E402
from test_top_rtos_shapes import build_with_data  # noqa: E402
from top_testlib import check, exit_status, minimal_regs  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
RAM = 0x20000000
EXTRA = 0x20100000  # where the second image of extra Zephyr TCBs lives


def crash(elf, regs, mems, json_out):
    args = [SPOOR, "crash", "-e", str(elf), "--regs", str(regs), "--threads"]
    for addr, path in mems:
        args += ["--mem", f"{addr:#x}:{path}"]
    result = subprocess.run(args + (["--json"] if json_out else []), capture_output=True,
                            text=True, timeout=60)
    check(result.returncode == 0, f"crash --threads: exit {result.returncode}: {result.stderr}")
    return json.loads(result.stdout) if json_out else result.stdout


def served_extra(elf, regs, mems):
    """qfThreadInfo and every thread's qThreadExtraInfo through spoor gdbserver --threads."""
    args = [SPOOR, "gdbserver", "-e", str(elf), "--regs", str(regs), "--threads", "--once",
            "--port", "0"]
    for addr, path in mems:
        args += ["--mem", f"{addr:#x}:{path}"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)

        def ask(body):
            sock.sendall(frame(body.encode()))
            data = b""
            while not (b"#" in data and len(data) >= data.index(b"#") + 3):
                data += sock.recv(65536)
            return data[data.index(b"$") + 1:data.index(b"#")].decode()

        ids, reply = [], ask("qfThreadInfo")
        while reply.startswith("m"):
            ids += reply[1:].split(",")
            reply = ask("qsThreadInfo")
        extra = [bytes.fromhex(ask(f"qThreadExtraInfo,{i}")).decode() for i in ids]
        ask("D")
        sock.close()
        _, err = proc.communicate(timeout=60)
        return extra, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def put(image, addr, value):
    struct.pack_into("<I", image, addr - RAM, value)


def report_page(elf, regs, mems, work, name):
    """spoor report --threads of the input, rendered by Chromium: every partial field of the
    JSON in the page is said on it. The JSON document."""
    from test_report import Dom, Proxy, chromium, check_partials, embedded_report
    page = work / f"{name}.html"
    args = [SPOOR, "report", "-e", str(elf), "--regs", str(regs), "--threads", "-o", str(page)]
    for addr, path in mems:
        args += ["--mem", f"{addr:#x}:{path}"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"report {name}: exit {result.returncode}: {result.stderr}")
    proxy = Proxy()
    dom_text, console = chromium(page, proxy)
    check(console == [] and proxy.requests == [], f"report {name}: {console} {proxy.requests}")
    document = embedded_report(page)
    try:
        fields = check_partials(Dom(dom_text).root, document, name)
    except AssertionError as e:
        check(False, str(e))
        fields = []
    return document, dict(fields)


def stack_hole(elf, data, regs, work):
    """Net's stack with its lowest 64 bytes not in the input (see the docstring)."""
    sym = symbol_addresses(elf)
    image = bytearray(data.read_bytes())
    plain = crash(elf, regs, [(RAM, data)], True)
    stacks = {t["name"]: t["stack"] for t in plain["threads"]}
    for name in ("IDLE", "Net"):
        low, high = int(stacks[name]["low"], 16), int(stacks[name]["high"], 16)
        sp = high - stacks[name]["used"]
        image[low - RAM:sp - RAM] = b"\xA5" * (sp - low)
    net_low = int(stacks["Net"]["low"], 16)
    below, above = work / "below-net.bin", work / "above-net.bin"
    below.write_bytes(image[:net_low - RAM])
    above.write_bytes(image[net_low + 64 - RAM:])
    mems = [(RAM, below), (net_low + 64, above)]
    report = crash(elf, regs, mems, True)
    got = {t["name"]: t["stack"] for t in report["threads"]}
    idle_low = int(stacks["IDLE"]["low"], 16)
    run = 0
    while image[idle_low - RAM + run] == 0xA5:
        run += 1
    check(got["IDLE"]["free_min"] == run // 4 * 4 and got["IDLE"]["overflowed"] is False,
          f"stack hole: IDLE {got['IDLE']} (the image counts {run // 4 * 4})")
    net = got["Net"]
    check((net["free_min"], net["peak"], net["overflowed"], net["unreadable"]) ==
          (None, None, None, f"0x{net_low:08x}"), f"stack hole: Net {net}")
    text = crash(elf, regs, mems, False)
    line = next((ln for ln in text.splitlines() if ln.strip().startswith("stack:") and
                 f"0x{net_low:08x}-" in ln), "")
    check(f"peak unknown (memory at 0x{net_low:08x} not in the input)" in line and
          "overflow unknown" in line and "OVERFLOWED" not in line, f"stack hole, text: {line!r}")
    del sym
    return mems


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        regs = minimal_regs(work)

        # FreeRTOS: a wild first link of the suspended list
        elf, data = build_with_data("FREERTOS", work)
        sym = symbol_addresses(elf)
        good = crash(elf, regs, [(RAM, data)], True)
        check(len(good["threads"]) == 4 and good["threads_partial"] is None
              and good["threads_not_shown"] == 0, f"FreeRTOS good: {good}")
        image = bytearray(data.read_bytes())
        put(image, sym["xSuspendedTaskList"] + 12, 0x30000000)  # xListEnd.pxNext
        bad = work / "freertos-wild.bin"
        bad.write_bytes(image)
        report = crash(elf, regs, [(RAM, bad)], True)
        names = sorted(t["name"] for t in report["threads"])
        check(names == ["IDLE", "Net", "Sensor"], f"FreeRTOS wild: {names}")
        check(report["threads_partial"] == "xSuspendedTaskList: memory at 0x3000000c not "
              "available", f"FreeRTOS wild: threads_partial {report['threads_partial']!r}")
        text = crash(elf, regs, [(RAM, bad)], False)
        check("threads (FreeRTOS, 3):" in text and "(partial: 1 thread list not read to the end;"
              " xSuspendedTaskList: memory at 0x3000000c not available)" in text,
              f"FreeRTOS wild, text: {text}")
        extra, err = served_extra(elf, regs, [(RAM, bad)])
        check(len(extra) == 4 and extra[-1].startswith("<partial: xSuspendedTaskList")
              and "partial: 1 thread list" in err, f"FreeRTOS wild, gdbserver: {extra} {err}")
        _, fields = report_page(elf, regs, [(RAM, bad)], work, "freertos-wild")
        check("threads_partial" in fields, f"FreeRTOS wild, page: {fields}")
        mems = stack_hole(elf, data, regs, work)
        document, fields = report_page(elf, regs, mems, work, "freertos-stack-hole")
        net = next(i for i, t in enumerate(document["threads"]) if t["name"] == "Net")
        check({f"threads.{net}.stack.unreadable", f"threads.{net}.stack.overflowed"} <= set(fields),
              f"FreeRTOS stack hole, page: {fields}")

        # Zephyr: a loop, then many threads
        elf, data = build_with_data("ZEPHYR", work)
        sym = symbol_addresses(elf)
        blink, idle = sym["blink_thread"], sym["z_idle_threads"]
        image = bytearray(data.read_bytes())
        size = abs(blink - idle)
        start = blink - RAM
        next_off = next(off for off in range(0, size, 4)
                        if struct.unpack_from("<I", image, start + off)[0] == idle)
        looped = bytearray(image)
        put(looped, idle + next_off, idle)
        (work / "zephyr-loop.bin").write_bytes(looped)
        report = crash(elf, regs, [(RAM, work / "zephyr-loop.bin")], True)
        check(len(report["threads"]) == 2 and report["threads_partial"] ==
              f"_kernel.threads: the list loops (TCB 0x{idle:08x} comes again)",
              f"Zephyr loop: {report['threads_partial']!r}")

        # a NULL-terminated list that comes back to its first thread loops too (only ThreadX's
        # created list is circular)
        looped = bytearray(image)
        put(looped, idle + next_off, blink)
        (work / "zephyr-loop-first.bin").write_bytes(looped)
        report = crash(elf, regs, [(RAM, work / "zephyr-loop-first.bin")], True)
        check(len(report["threads"]) == 2 and report["threads_partial"] ==
              f"_kernel.threads: the list loops (TCB 0x{blink:08x} comes again)",
              f"Zephyr loop to the first: {report['threads_partial']!r}")
        text = crash(elf, regs, [(RAM, work / "zephyr-loop-first.bin")], False)
        check("(partial: 1 thread list not read to the end; _kernel.threads: the list loops"
              in text, f"Zephyr loop to the first, text: {text[-400:]}")

        for count, shown, partial in ((300, 256, None),
                                      (1100, 256, "_kernel.threads: more than 1024 threads, the "
                                       "rest not read")):
            chained = bytearray(image)
            put(chained, idle + next_off, EXTRA)
            tcbs = bytearray()
            tcb = bytes(image[idle - RAM:idle - RAM + size])
            for i in range(count):
                one = bytearray(tcb)
                struct.pack_into("<I", one, next_off, EXTRA + (i + 1) * size if i + 1 < count
                                 else 0)
                tcbs += one
            (work / "zephyr-many.bin").write_bytes(chained)
            (work / "zephyr-tcbs.bin").write_bytes(tcbs)
            mems = [(RAM, work / "zephyr-many.bin"), (EXTRA, work / "zephyr-tcbs.bin")]
            total = min(2 + count, 1024)
            report = crash(elf, regs, mems, True)
            check(len(report["threads"]) == shown and
                  report["threads_not_shown"] == total - shown and
                  report["threads_partial"] == partial,
                  f"Zephyr {count}: {len(report['threads'])} {report['threads_not_shown']} "
                  f"{report['threads_partial']!r}")
            text = crash(elf, regs, mems, False)
            check(f"... {total - shown} more threads not shown" in text,
                  f"Zephyr {count}: text: {text[-300:]}")
            _, fields = report_page(elf, regs, mems, work, f"zephyr-{count}")
            check(fields.get("threads_not_shown") == total - shown and
                  fields.get("threads_partial") == partial, f"Zephyr {count}, page: {fields}")
            if count == 300:
                extra, err = served_extra(elf, regs, mems)
                # (the shape's Zephyr TCBs saved no stack pointer: those are left out)
                check(extra[-1:] == [f"<{total - shown} more threads not shown>"],
                      f"Zephyr {count}: gdbserver: {len(extra)} {extra[-1:]} {err}")
        # ThreadX: the created list is circular, its end is its first thread again
        elf, data = build_with_data("THREADX", work)
        report = crash(elf, regs, [(RAM, data)], True)
        check(len(report["threads"]) == 2 and report["threads_partial"] is None,
              f"ThreadX circular list: {len(report['threads'])} {report['threads_partial']!r}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
