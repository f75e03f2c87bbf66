"""spoor top --gdb when the GDB connection is lost: one line and exit 2, as with OpenOCD.

The example scheduler parked in QEMU behind tests/e2e/faulty_gdb.py, spoor top reading names
through it (--gdb) from the schedule test_top_sched.py writes. The good run through a fault-free
proxy gives the output and the request count N; then the proxy closes the connection at every
request 1..N, and stops answering at 1, N/2 and N. Each run must end within 9 s with either the
good run's output (exit 0, nothing on stderr) or nothing but one line on stderr,
"spoor top: 127.0.0.1:PORT: ...", and exit 2: never a warning per thread with "?" names and
exit 0.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import faulty_gdb  # noqa: E402
from harness import example, symbol_addresses, time_limit  # noqa: E402
from test_top_sched import HZ, INTERVAL_MS, TASKS, gdb_reference, schedule, stop_parked  # noqa
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def top(args, port):
    began = time.monotonic()
    r = subprocess.run([SPOOR, "top", *args, "--gdb", f"127.0.0.1:{port}"],
                       capture_output=True, text=True, timeout=60)
    return r, time.monotonic() - began


def main():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, machine = example("sched", "m3")
        symbols = symbol_addresses(elf)
        stream, _ = schedule({name: symbols[f"task_{name}"] for name in TASKS})
        (work / "stream.itm").write_bytes(stream)
        qemu, _ = gdb_reference(elf, machine, work)
        try:
            stop_parked(qemu.gdb_port)
            args = ["-e", str(elf), "--input", str(work / "stream.itm"), "-F", str(HZ), "-I",
                    str(INTERVAL_MS)]
            with faulty_gdb.FaultyGdb(qemu.gdb_port) as proxy:
                good, _ = top(args, proxy.port)
            n = len(proxy.requests)
            check(good.returncode == 0 and not good.stderr and "sensor" in good.stdout,
                  f"good run: exit {good.returncode}: {good.stderr}")
            runs = [("close", at) for at in range(1, n + 1)]
            runs += [("silent", at) for at in sorted({1, (n + 1) // 2, n})]
            for fault, at in runs:
                with faulty_gdb.FaultyGdb(qemu.gdb_port, fault, at=at) as p:
                    r, took = top(args, p.port)
                errs = r.stderr.splitlines()
                same = r.returncode == 0 and r.stdout == good.stdout and not r.stderr
                error = (r.returncode == 2 and len(errs) == 1 and
                         errs[0].startswith(f"spoor top: 127.0.0.1:{p.port}: "))
                # the client's 5 s bound on one exchange, and spoor's start (scaled by the load)
                check((same or error) and took < time_limit(5.0, 4.0),
                      f"{fault} at {at}/{n}: exit {r.returncode} after {took:.1f} s, "
                      f"stderr {r.stderr!r}")
        finally:
            qemu.close()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
