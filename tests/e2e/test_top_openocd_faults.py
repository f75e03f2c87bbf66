"""spoor top -W (OpenOCD telnet, and tcl: the Tcl RPC server) against
tests/e2e/faulty_openocd.py: every wait bounded as a whole, every error one line.

Memory is the FreeRTOS-shaped firmware's .data (tests/e2e/fw/rtos_shapes_fw.c, as
test_top_rtos_shapes.py extracts it), the stream switches between its threads. The good run
names them. Then, on each transport, from the first read (mdw, read_memory) on, the peer:
  * answers an error of several lines with control and raw bytes: each warning spoor prints
    must be one line, every byte of it printable (OpenOCD's newlines and raw bytes escaped);
  * drips every reply one byte per 50 ms (it ends, too late), trickles one byte per 100 ms
    forever (never the prompt or 0x1a: a wait "for the next byte" never ends), sends the
    reply's lines one a second forever, closes, or falls silent: the run must end within
    RUN_LIMIT_S with the good run's output, or nothing but one line on stderr and exit 2
    ("a reply that did not end within 5000 ms (N bytes came, no end of reply)" for the two that
    never end). A client that bounded each recv instead of the whole exchange waits forever on
    "trickle" and "lines" (checked: the test fails so).
"""

import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from faulty_openocd import FaultyOpenocd  # noqa: E402
from test_top_rtos_shapes import shape_with_stream  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
RUN_LIMIT_S = 9.0  # the client's 5 s bound on one exchange, and spoor's start
TRANSPORTS = {False: ("", "openocd"), True: ("tcl:", "openocd tcl")}


def top(elf, itm, port, tcl):
    began = time.monotonic()
    try:
        r = subprocess.run([SPOOR, "top", "-e", str(elf), "--input", str(itm), "-F", "1000000",
                            "-W", f"{TRANSPORTS[tcl][0]}127.0.0.1:{port}"], capture_output=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return None, 60.0
    return r, time.monotonic() - began


def garbage(elf, itm, memory, tcl):
    """The error of several lines: each warning one printable line, OpenOCD's text escaped."""
    with FaultyOpenocd(memory, "garbage", tcl=tcl) as peer:
        r, took = top(elf, itm, peer.port, tcl)
    check(r is not None and r.returncode == 0, f"garbage (tcl={tcl}): {r and r.returncode}")
    if r is None:
        return
    lines = r.stderr.split(b"\n")
    check(lines[-1] == b"" and len(lines) > 1, f"garbage (tcl={tcl}): stderr {r.stderr!r}")
    for line in lines[:-1]:
        check(line.startswith(b"spoor top: warning: ") and all(0x20 <= c < 0x7F for c in line),
              f"garbage (tcl={tcl}): not one printable line: {line!r}")
    read = b"read_memory 0x" if tcl else b"mdw 0x"
    check(read in r.stderr and b"Error: mdw failed\\x0" in r.stderr and
          b"\\x01\\x1b[31mtarget not halted\\x80\\xfe" in r.stderr,
          f"garbage (tcl={tcl}): {r.stderr!r}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data, itm = shape_with_stream("FREERTOS", work,
                                           ["sensor_tcb", "net_tcb", "idle_tcb"])
        memory = {0x20000000: data.read_bytes()}
        goods = {}
        for tcl in (False, True):
            with FaultyOpenocd(memory, tcl=tcl) as peer:
                good, _ = top(elf, itm, peer.port, tcl)
            check(good is not None and good.returncode == 0 and b"Sensor" in good.stdout,
                  f"good run (tcl={tcl}): {good and good.returncode} {good and good.stderr}")
            if good is not None:
                goods[tcl] = good
                garbage(elf, itm, memory, tcl)

        def faulty_run(run):
            tcl, fault = run
            with FaultyOpenocd(memory, fault, tcl=tcl, drip_s=0.1 if fault == "trickle"
                               else 0.05) as peer:
                r, took = top(elf, itm, peer.port, tcl)
            return r, took, peer.port

        # the runs mostly wait (on a silent or dripping peer): all at once
        runs = [(tcl, fault) for tcl in goods
                for fault in ("drip", "trickle", "lines", "close", "silent")]
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(runs) or 1) as pool:
            results = list(pool.map(faulty_run, runs))
        for (tcl, fault), (r, took, port) in zip(runs, results):
            good = goods[tcl]
            label = f"{fault} (tcl={tcl})"
            if r is None:
                check(False, f"{label}: still running after 60 s")
                continue
            errs = r.stderr.decode(errors="replace").splitlines()
            same = r.returncode == 0 and r.stdout == good.stdout and r.stderr == good.stderr
            error = (r.returncode == 2 and len(errs) == 1 and
                     errs[0].startswith(f"spoor top: {TRANSPORTS[tcl][1]} 127.0.0.1:{port}: "))
            check((same or error) and took < harness.time_limit(5.0, RUN_LIMIT_S - 5.0),
                  f"{label}: exit {r.returncode} after {took:.1f} s: {r.stderr!r}")
            # a reply begun and never ended is said as such, not as no reply at all
            if error and fault in ("trickle", "lines"):
                check(re.search(r": a reply that did not end within 5000 ms \(\d+ bytes "
                                r"came, no end of reply\)$", errs[0]) is not None,
                      f"{label}: {errs[0]!r}")
            print(f"{label}: {'same' if same else 'error'}, {took:.1f} s: "
                  f"{r.stderr.decode(errors='replace').strip()}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
