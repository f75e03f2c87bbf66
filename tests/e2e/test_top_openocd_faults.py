"""spoor top -W (OpenOCD telnet) against tests/e2e/faulty_openocd.py: bounded and one line.

Memory is the FreeRTOS-shaped firmware's .data (tests/e2e/fw/rtos_shapes_fw.c, as
test_top_rtos_shapes.py extracts it), the stream switches between its threads. The good run
names them. Then, from the first mdw on, the peer:
  * answers an error of several lines with control and raw bytes: each warning spoor prints
    must be one line, every byte of it printable (OpenOCD's newlines and raw bytes escaped);
  * drips every reply one byte per 50 ms, closes, or falls silent: the run must end within
    9 s with the good run's output, or nothing but one line on stderr and exit 2.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faulty_openocd import FaultyOpenocd  # noqa: E402
from test_top_rtos_shapes import shape_with_stream  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def top(elf, itm, port):
    began = time.monotonic()
    try:
        r = subprocess.run([SPOOR, "top", "-e", str(elf), "--input", str(itm), "-F", "1000000",
                            "-W", f"127.0.0.1:{port}"], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, 60.0
    return r, time.monotonic() - began


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data, itm = shape_with_stream("FREERTOS", work,
                                           ["sensor_tcb", "net_tcb", "idle_tcb"])
        memory = {0x20000000: data.read_bytes()}
        with FaultyOpenocd(memory) as peer:
            good, _ = top(elf, itm, peer.port)
        check(good is not None and good.returncode == 0 and b"Sensor" in good.stdout,
              f"good run: {good and good.returncode} {good and good.stderr}")
        with FaultyOpenocd(memory, "garbage") as peer:
            r, took = top(elf, itm, peer.port)
        check(r is not None and r.returncode == 0, f"garbage: {r and r.returncode}")
        if r is not None:
            lines = r.stderr.split(b"\n")
            check(lines[-1] == b"" and len(lines) > 1, f"garbage: stderr {r.stderr!r}")
            for line in lines[:-1]:
                check(line.startswith(b"spoor top: warning: ") and
                      all(0x20 <= c < 0x7F for c in line),
                      f"garbage: not one printable line: {line!r}")
            check(b"openocd: mdw 0x" in r.stderr and b"Error: mdw failed\\x0a\\x01\\x1b[31m"
                  b"target not halted\\x80\\xfe" in r.stderr, f"garbage: {r.stderr!r}")
        for fault in ("drip", "close", "silent"):
            with FaultyOpenocd(memory, fault) as peer:
                r, took = top(elf, itm, peer.port)
            if r is None:
                check(False, f"{fault}: still running after 60 s")
                continue
            errs = r.stderr.decode(errors="replace").splitlines()
            same = r.returncode == 0 and r.stdout == good.stdout and r.stderr == good.stderr
            error = (r.returncode == 2 and len(errs) == 1 and
                     errs[0].startswith(f"spoor top: openocd 127.0.0.1:{peer.port}: "))
            check((same or error) and took < 9,
                  f"{fault}: exit {r.returncode} after {took:.1f} s: {r.stderr!r}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
