"""The virtual probe's servers under clients that misbehave, and its exit paths.

1. A stream client that does not read must not block the others or the probe: tools/vprobe.py's
   Sinks (the class `spoor vprobe` serves the stream with) is fed 32 MiB while one client never
   reads (while the other client reads at its own pace); each push returns at once, the reading
   client gets every byte in order, and the probe says how many bytes the silent client was not
   given; a client that closed its connection (it had what it wanted) is not said to be slow.
2. SIGTERM to `spoor vprobe` (QEMU running the example scheduler, its gdbstub on a private
   socket folder) stops QEMU and removes the folder: no orphan QEMU, nothing left behind.
3. The GDB port (QEMU's real gdbstub behind the probe's proxy): a client that connected and said
   nothing is replaced by the next one, which is served (`?` gets a stop reply), as spoor
   gdbserver does; a packet that never ends is not buffered without bound: past the protocol's
   bound the proxy drops that client with a line on stderr, and the port serves the next one.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SPOOR = os.environ.get("SPOOR_BIN", "spoor")
sys.path.insert(0, str(SOURCE / "tools"))
import vprobe  # noqa: E402
from rsp_framing import frame  # noqa: E402


def qemu_children(pid):
    """PIDs of the qemu-system-arm processes whose parent is pid."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and cmdline and cmdline[0].endswith(b"qemu-system-arm"):
            found.append((int(entry.name), [c.decode(errors="replace") for c in cmdline]))
    return found


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def read_reply(sock, seconds):
    """The first packet's payload the server sends within seconds, or None."""
    sock.settimeout(seconds)
    data = b""
    try:
        while True:
            start = data.find(b"$")
            end = data.find(b"#", start + 1) if start >= 0 else -1
            if end >= 0 and len(data) >= end + 3:
                return data[start + 1:end]
            chunk = sock.recv(4096)
            if not chunk:
                return None
            data += chunk
    except OSError:
        return None


def close_sinks(sinks):
    """Closes the probe's sinks; returns what it warned about meanwhile."""
    errors = []
    real_warn = vprobe.warn
    vprobe.warn = errors.append
    try:
        sinks.close()
    finally:
        vprobe.warn = real_warn
    return errors


class SlowStreamClient(unittest.TestCase):
    def test_silent_client_does_not_block(self):
        sinks = vprobe.Sinks(0, None, None)
        silent = socket.socket()
        silent.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        silent.connect(("127.0.0.1", sinks.port))
        reader = socket.create_connection(("127.0.0.1", sinks.port))
        received = bytearray()

        def read_all():
            while True:
                chunk = reader.recv(65536)
                if not chunk:
                    return
                received.extend(chunk)
        thread = threading.Thread(target=read_all, daemon=True)
        thread.start()
        block = bytes(range(256)) * 256  # 64 KiB
        pushes = []
        for i in range(512):  # 32 MiB, at the pace the reading client takes it
            sinks.write(block)
            started = time.monotonic()
            sinks.push()
            pushes.append(time.monotonic() - started)
            deadline = time.monotonic() + 10
            while len(received) < (i + 1) * len(block) and time.monotonic() < deadline:
                time.sleep(0.001)
                sinks.push()  # what the reader's queue still holds
        self.assertLess(max(pushes), harness.time_limit(0.0, 1.0), "a push waited for a client")
        errors = close_sinks(sinks)
        thread.join(30)
        self.assertEqual(len(received), 512 * len(block))
        self.assertEqual(bytes(received[:len(block)]), block)
        self.assertTrue(any("did not read fast enough" in e and "bytes not delivered" in e
                            for e in errors), errors)
        silent.close()
        reader.close()

    def test_client_that_hung_up_is_not_reported(self):
        """A client that took what it wanted and closed its connection (`spoor top -n 6`) is
        not said to have read too slowly, whether the probe notices at its next send or only
        at the end; one still connected that misses bytes is (test above)."""
        for pushes_after in (0, 3):
            sinks = vprobe.Sinks(0, None, None)
            client = socket.create_connection(("127.0.0.1", sinks.port))
            sinks.write(b"\x01\x02" * 32)
            sinks.push()
            got = b""
            client.settimeout(10)
            while len(got) < 64:
                got += client.recv(64 - len(got))
            client.close()
            time.sleep(0.2)
            for _ in range(pushes_after):
                sinks.write(b"\x03" * 4096)
                sinks.push()
                time.sleep(0.05)
            sinks.write(b"\x04" * (vprobe.CLIENT_QUEUE_LIMIT + 4096))  # more than it may queue
            sinks.push()
            errors = close_sinks(sinks)
            self.assertEqual(got, b"\x01\x02" * 32)
            self.assertFalse([e for e in errors if "did not read fast enough" in e],
                             (pushes_after, errors))


class ExitPaths(unittest.TestCase):
    def test_sigterm_stops_qemu_and_cleans_up(self):
        elf, _ = harness.example("vprobe_sched", "m3")
        gdb_port = harness.free_port()
        probe = subprocess.Popen(
            [SPOOR, "vprobe", "-q", "-p", "0", "--gdb", str(gdb_port), "--",
             harness.require_tool(harness.QEMU), "-M", "mps2-an385", "-nographic", "-monitor",
             "none", "-serial", "none", "-semihosting-config",
             "enable=on,target=native,arg=vprobe_sched,arg=100000", "-kernel", str(elf)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            children = []
            while not children and time.monotonic() < deadline and probe.poll() is None:
                time.sleep(0.1)
                children = qemu_children(probe.pid)
            self.assertTrue(children, "QEMU did not start")
            qemu_pid, cmdline = children[0]
            gdb = next(a for a in cmdline if a.startswith("unix:"))
            socket_dir = Path(gdb[len("unix:"):].split(",")[0]).parent
            self.assertTrue(socket_dir.is_dir())
            time.sleep(1.0)
            probe.send_signal(signal.SIGTERM)
            out, err = probe.communicate(timeout=30)
            deadline = time.monotonic() + 10
            while alive(qemu_pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertFalse(alive(qemu_pid), "QEMU left running after SIGTERM")
            self.assertFalse(socket_dir.exists(), f"{socket_dir} left behind")
            self.assertIn("stopped by SIGTERM", err)
            self.assertNotIn("Traceback", err)
        finally:
            if probe.poll() is None:
                probe.kill()
                probe.wait()
            for pid, _ in qemu_children(probe.pid):
                os.kill(pid, signal.SIGKILL)


class GdbPort(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        elf, _ = harness.example("vprobe_sched", "m3")
        cls.port = harness.free_port()
        cls.probe = subprocess.Popen(
            [SPOOR, "vprobe", "-q", "-p", "0", "--gdb", str(cls.port), "--",
             harness.require_tool(harness.QEMU), "-M", "mps2-an385", "-nographic", "-monitor",
             "none", "-serial", "none", "-semihosting-config",
             "enable=on,target=native,arg=vprobe_sched,arg=100000", "-kernel", str(elf)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not harness._port_is_listening(cls.port):
            if cls.probe.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("the GDB port did not open")
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.probe.send_signal(signal.SIGTERM)
        try:
            cls.probe.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            cls.probe.kill()
            cls.probe.communicate()

    def ask_stop_reason(self, sock):
        sock.sendall(frame(b"?"))
        return read_reply(sock, 20)

    def test_a_silent_client_is_replaced(self):
        silent = socket.create_connection(("127.0.0.1", self.port))
        time.sleep(0.5 * harness.load_factor())  # the proxy serves it now
        other = socket.create_connection(("127.0.0.1", self.port))
        try:
            reply = self.ask_stop_reason(other)
            self.assertIsNotNone(reply, "the second client was not served")
            self.assertRegex(reply, rb"^[ST][0-9a-f]{2}")
            other.sendall(frame(b"c"))  # let the target run again
        finally:
            other.close()
            silent.close()

    def test_an_endless_packet_is_dropped(self):
        flood = socket.create_connection(("127.0.0.1", self.port))
        closed = False
        try:
            flood.sendall(b"$")
            for _ in range(64):  # up to 4 MiB without a '#'
                flood.sendall(b"m" * 65536)
        except OSError:  # the proxy closed the connection
            closed = True
        if not closed:
            flood.settimeout(20)
            try:
                closed = flood.recv(1) == b""
            except ConnectionResetError:
                closed = True
            except socket.timeout:
                closed = False
        flood.close()
        self.assertTrue(closed, "the proxy kept reading a packet without end")
        time.sleep(0.5)
        after = socket.create_connection(("127.0.0.1", self.port))
        try:
            self.assertIsNotNone(self.ask_stop_reason(after), "the port no longer serves")
            after.sendall(frame(b"c"))
        finally:
            after.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
