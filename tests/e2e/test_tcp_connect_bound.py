"""Every trace TCP connect gives up within the bound --gdb and -W have (5 s), on a peer that
drops SYNs.

A listening socket whose accept queue is full (listen(0), filled with connections it never
accepts) makes Linux drop further SYNs: a connect to it waits, and without a bound of spoor's
own would wait the kernel's two minutes of SYN retries. `spoor itm tcp:`, `spoor top -s` and
`spoor calls --itm tcp:` must each end within a few seconds with one line on stderr that says
the peer did not answer, and exit 2.
"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import time_limit  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
FIRMWARE = Path(os.environ.get("SPOOR_FIRMWARE_DIR", ".")) / "examples"


def syn_dropping_peer():
    """A port on 127.0.0.1 that drops SYNs; the sockets to keep open."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    held = [listener]
    for _ in range(3):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        held.append(s)
    time.sleep(0.3)
    probe = socket.socket()
    probe.settimeout(1)
    try:
        probe.connect(("127.0.0.1", port))
        check(False, "the full accept queue did not make the kernel drop SYNs")
    except (TimeoutError, socket.timeout):
        pass
    probe.close()
    return port, held


def main():
    port, held = syn_dropping_peer()
    elf = FIRMWARE / "sched-m3.elf"
    calls_elf = FIRMWARE / "calls_trace-m3.elf"
    commands = {
        "itm": [SPOOR, "itm", f"tcp:127.0.0.1:{port}"],
        "top -s": [SPOOR, "top", "-e", str(elf), "-F", "25000000", "-s", f"127.0.0.1:{port}"],
        "calls --itm": [SPOOR, "calls", "-e", str(calls_elf), "--itm", f"tcp:127.0.0.1:{port}",
                        "--port", "8"],
    }
    for label, args in commands.items():
        began = time.monotonic()
        try:
            result = subprocess.run(args, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            check(False, f"{label}: still waiting for the connect after 30 s")
            continue
        took = time.monotonic() - began
        # (spoor top without target memory warns first that it cannot read the idle thread)
        lines = [x for x in result.stderr.strip().splitlines() if ": warning: " not in x]
        # the 5 s connect bound, and spoor's start (scaled by the load)
        check(result.returncode == 2 and took < time_limit(5.0, 5.0) and len(lines) == 1 and
              f"tcp:127.0.0.1:{port}: no answer to the connect within 5 s" in lines[0],
              f"{label}: exit {result.returncode} after {took:.1f} s: {result.stderr!r}")
    for s in held:
        s.close()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
