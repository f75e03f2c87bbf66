"""spoor crash --threads and spoor gdbserver --threads never drop threads without saying so.

The RTOS-shaped firmware of tests/e2e/test_top_rtos_shapes.py (tests/e2e/fw/rtos_shapes_fw.c)
is built for FreeRTOS and Zephyr; its .data (objcopy) is the target memory given with --mem, and
is corrupted here the ways a crashed target's lists are:
  * FreeRTOS: xSuspendedTaskList's first link points where no memory is (a wild pointer, or a
    page a GDB server answers E01 for): Logger cannot be found, which must be said, naming the
    list and the address;
  * Zephyr: the idle thread's next_thread points to itself (a list that loops): said as a loop;
  * Zephyr: 300 and 1,100 more TCBs chained behind the idle thread in a second image: the first
    256 are listed and "N more threads not shown" is said; a list longer than 1,024 items is cut
    there and said.
The uncorrupted memory must give no such marker. Text and JSON (threads_not_shown,
threads_partial), and through spoor gdbserver --threads a last GDB thread saying it.
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
            frame = f"${body}#{sum(body.encode()) & 0xFF:02x}".encode()
            sock.sendall(frame)
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
            if count == 300:
                extra, err = served_extra(elf, regs, mems)
                # (the shape's Zephyr TCBs saved no stack pointer: those are left out)
                check(extra[-1:] == [f"<{total - shown} more threads not shown>"],
                      f"Zephyr {count}: gdbserver: {len(extra)} {extra[-1:]} {err}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
