"""spoor top -s HOST:PORT: the live path, from a TCP server that streams ITM bytes as OpenOCD's
SWO port does (a scripted server here: no probe), with -n to stop and -j udp:PORT to send the
intervals as datagrams (the console off), and the console piped (plain lines, no terminal
control sequences). Memory: the RTX5-shaped test firmware's .data (test_top_rtos_shapes.py);
the stream switches to each of its threads 1000 cycles apart (-F 1000000 -I 1: one switch an
interval)."""

import json
import os
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
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        receiver.bind(("127.0.0.1", 0))
        receiver.settimeout(10)
        port = serve_once(itm)
        result = subprocess.run([SPOOR, "top", *common, "-s", f"127.0.0.1:{port}", "-n", "3",
                                 "-j", f"udp:{receiver.getsockname()[1]}"],
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0 and result.stdout == "",
              f"udp: {result.returncode} stdout {result.stdout!r} {result.stderr}")
        datagrams = []
        try:
            while len(datagrams) < 3:
                datagrams.append(json.loads(receiver.recv(65536)))
        except (socket.timeout, ValueError) as error:
            check(False, f"udp: {len(datagrams)} datagrams, then {error}")
        receiver.close()
        # interval k: the thread switched to at cycle 1000*k... ran for the whole interval
        # (the first interval starts at 0 with no thread until 1000: unknown)
        expect = [None, "main", "sensor_task"]
        for k, d in enumerate(datagrams):
            check(d["interval"] == k and d["interval_ms"] == 1.0, f"datagram {k}: {d}")
            busy = [t["name"] for t in d["threads"] if t["cycles"] == 1000]
            check(busy == ([expect[k]] if expect[k] else []), f"datagram {k}: busy {busy}")
            if k == 0:
                check(d["unknown_ms"] == 1.0, f"datagram 0: {d}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
