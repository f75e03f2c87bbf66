"""spoor top -s HOST:PORT: the live path, from a TCP server that streams ITM bytes as OpenOCD's
SWO port does (a scripted server here: no probe), with -n to stop and -j udp:PORT to send the
intervals as datagrams (the console off; to udp:HOST:PORT too; with nobody listening on the
port, "connection refused" is counted and said at the end, exit 0), and the console piped (plain lines, no terminal
control sequences). Memory: the RTX5-shaped test firmware's .data (test_top_rtos_shapes.py);
the stream switches to each of its threads 1000 cycles apart (-F 1000000 -I 1: one switch an
interval)."""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import symbol_addresses  # noqa: E402
from test_top_rtos_shapes import build_with_data, stream  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def serve_once(data):
    """A TCP server that sends data to its first client and keeps the connection open until
    the client closes it (a live stream that has not ended)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def run():
        conn, _ = server.accept()
        with conn:
            conn.sendall(data)
            conn.settimeout(30)
            try:
                while conn.recv(1024):
                    pass
            except OSError:
                pass
        server.close()
    threading.Thread(target=run, daemon=True).start()
    return server.getsockname()[1]


def top_udp(common, itm, n, host):
    """spoor top -s (a server of itm) -n n -j udp:HOSTPORT to a receiver here: the result, the
    datagrams received (JSON) and the error that ended the wait early (or None)."""
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(10)
    port = serve_once(itm)
    result = subprocess.run([SPOOR, "top", *common, "-s", f"127.0.0.1:{port}", "-n", str(n),
                             "-j", f"udp:{host}{receiver.getsockname()[1]}"],
                            capture_output=True, text=True, timeout=60)
    datagrams, error = [], None
    try:
        while len(datagrams) < n:
            datagrams.append(json.loads(receiver.recv(65536)))
    except (socket.timeout, ValueError) as e:
        error = e
    receiver.close()
    return result, datagrams, error


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data = build_with_data("RTX5", work)
        symbols = symbol_addresses(elf)
        names = ["main_thread", "sensor", "idle", "main_thread", "sensor"]
        itm = stream([symbols[n] for n in names])
        common = ["-e", str(elf), "--mem", f"0x20000000:{data}", "-F", "1000000", "-I", "1"]

        # the console, piped: two tables and no summary (-n 2 stops before the end)
        port = serve_once(itm)
        result = subprocess.run([SPOOR, "top", *common, "-s", f"127.0.0.1:{port}", "-n", "2"],
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, f"live console: {result.returncode} {result.stderr}")
        check(result.stdout.count("=== RTOS Thread Statistics (RTX5) ===") == 2
              and "Whole run" not in result.stdout and "\033" not in result.stdout,
              f"live console output: {result.stdout[-800:]}")

        # JSON datagrams
        result, datagrams, error = top_udp(common, itm, 3, "")
        check(result.returncode == 0 and result.stdout == "",
              f"udp: {result.returncode} stdout {result.stdout!r} {result.stderr}")
        check(len(datagrams) == 3, f"udp: {len(datagrams)} datagrams, then {error}")
        # interval k: the thread switched to at cycle 1000*k... ran for the whole interval
        # (the first interval starts at 0 with no thread until 1000: unknown)
        expect = [None, "main", "sensor_task"]
        for k, d in enumerate(datagrams):
            check(d["interval"] == k and d["interval_ms"] == 1.0, f"datagram {k}: {d}")
            busy = [t["name"] for t in d["threads"] if t["cycles"] == 1000]
            check(busy == ([expect[k]] if expect[k] else []), f"datagram {k}: busy {busy}")
            if k == 0:
                check(d["unknown_ms"] == 1.0, f"datagram 0: {d}")

        # -j udp:HOST:PORT, with the host named
        result, got, _ = top_udp(common, itm, 2, "localhost:")
        check(result.returncode == 0 and [d["interval"] for d in got] == [0, 1],
              f"udp:localhost:PORT: exit {result.returncode} {result.stderr!r}, {got}")

        # nobody listening on the port (a receiver started later is normal for UDP): the run
        # goes on to the end; the datagrams refused are counted once, on stderr. A port just
        # closed has no listener.
        gone = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        gone.bind(("127.0.0.1", 0))
        dead_port = gone.getsockname()[1]
        gone.close()
        result = subprocess.run([SPOOR, "top", *common, "--input", str(work / "s.itm"),
                                 "-j", f"udp:{dead_port}"],
                                capture_output=True, text=True, timeout=60) \
            if (work / "s.itm").write_bytes(itm) else None
        m = re.fullmatch(r"spoor top: -j udp:\d+: (\d+) datagrams found nobody "
                         r"listening \(connection refused\) and were not delivered\n",
                         result.stderr)
        # 5 switches: 6 intervals (the last cut short) and the summary, 7 datagrams; the
        # refusal of each shows on the next send, the last one's is never seen
        check(result.returncode == 0 and m and 1 <= int(m.group(1)) <= 6,
              f"udp with no listener: exit {result.returncode}, {result.stderr!r}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
