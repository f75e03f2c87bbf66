"""A misbehaving GDB remote server for tests: a TCP proxy in front of a real one (QEMU's
gdbstub, started by harness.Qemu(..., gdb=True)) that forwards every byte faithfully except
for one scripted fault. The faults are ones no well-behaved server produces on purpose but a
real link or a buggy server does (a dropped connection, line noise, a stuck probe, a server
that resends a packet spontaneously); QEMU itself never does them, hence this scripted peer.

Requests are the client's packets, counted from 1 in the order they arrive (acks '+'/'-' and
the interrupt byte 0x03 are not packets). A fault hits request number `at` (and, with
`every=True`, every request from `at` on), or every request whose payload matches the regular
expression `match` (e.g. r"^m" for memory reads). Faults:

  close      the proxy closes both connections when the request arrives (it is not forwarded)
  silent     the request and everything after it is swallowed; the connection stays open
  checksum   the reply goes out with a wrong checksum (once: a resend after '-' is clean)
  error      the reply is replaced by "E01"
  duplicate  the reply is sent twice
  console    an 'O' console-output packet ("spoor test\\n" in hex) goes out before the first
             stop reply (T/S/W/X) of a request numbered `at` or later (a server may send one
             while the target runs)
  drip       the reply is sent one byte per `drip_s` seconds (0.1)
  short      an 'm' reply loses its last byte (two hex digits)
  long       an 'm' reply gains a byte ("00")
  noreply    the request reaches the server, its reply does not reach the client: the proxy
             closes both connections instead (a write done but never confirmed)
  corrupt    one byte of what the server sends while it answers request `at` is changed, once:
             byte number `pos` (0 is the first: QEMU's '+' that acknowledges the request,
             then the reply's '$'...) becomes `byte` (a one-byte bytes, or None: its value
             with the lowest bit flipped); a resend after '-' is clean. When the client then
             sends request `at` again, the server's answer to that copy is held back `late_s`
             seconds (0.3: a server that answers both copies, the second after the client
             went on)

ack=True strips "QStartNoAckMode+" from the server's qSupported reply, so that the session
stays in ack mode (every packet acknowledged, '-' asks for a resend).

As a library: `with FaultyGdb(upstream_port, "duplicate", at=7) as proxy: ... proxy.port`;
afterwards proxy.requests is the list of request payloads seen, proxy.nacks the count of '-'
the client sent and proxy.fired whether the fault happened. As a program:
`faulty_gdb.py UPSTREAM_PORT FAULT [--at N | --match RE] [--ack] [--pos P --byte C]` prints the
port it listens on and serves one client."""
import argparse
import re
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from rsp_framing import Tokens, frame  # noqa: E402

FAULTS = ("close", "silent", "checksum", "error", "duplicate", "console", "drip", "short",
          "long", "noreply")
SWEPT_BYTE_FAULTS = ("corrupt",)  # not in FAULTS: it needs a byte position (pos) besides `at`


class _Splitter:
    """Splits a byte stream into packets ($...#cs, as raw bytes with their payload) and single
    bytes outside packets ('+', '-', 0x03, noise; '%' too: no notification is expected)."""

    def __init__(self):
        self.tokens = Tokens(notify=False)

    def feed(self, data):
        return [(t[1], t[2] if t[0] == "packet" else None) for t in self.tokens.feed(data)]


def close_sockets(*sockets):
    """Shuts down and closes each socket that is not None (a peer blocked in recv wakes)."""
    for s in sockets:
        if s is not None:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class FaultyGdb:
    def __init__(self, upstream_port, fault=None, at=None, match=None, every=False, ack=False,
                 drip_s=0.1, pos=0, byte=None, late_s=0.3):
        if fault is not None and fault not in FAULTS + SWEPT_BYTE_FAULTS:
            raise ValueError(f"unknown fault {fault!r} "
                             f"(one of {', '.join(FAULTS + SWEPT_BYTE_FAULTS)})")
        self.upstream_port = upstream_port
        self.fault, self.at, self.every, self.ack, self.drip_s = fault, at, every, ack, drip_s
        self.pos, self.byte, self.late_s = pos, byte, late_s
        self._late_done = False
        self.answer_bytes = b""  # what went to the client while the server answered `at`
        self.corrupted = None  # (position, byte before, byte after) once "corrupt" fired
        self.match = re.compile(match.encode() if isinstance(match, str) else match) \
            if match else None
        self.requests = []  # payloads, in order
        self.nacks = 0
        self.fired = False
        self._current = 0  # the number of the request the server is answering
        self._corrupted = set()
        self._console_sent = False
        self._silent = False
        self._closed = False
        self._lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.client = self.upstream = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._closed = True
        close_sockets(self.listener, self.client, self.upstream)
        self.thread.join(timeout=5)

    # ---- which requests the fault hits

    def _hits(self, number, payload):
        if self.fault is None:
            return False
        if self.match is not None:
            return bool(self.match.search(payload))
        if self.at is None:
            return False
        return number == self.at or (self.every and number > self.at)

    # ---- the two directions

    def _serve(self):
        try:
            self.client, _ = self.listener.accept()
        except OSError:
            return
        try:
            self.upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        except OSError:
            self.client.close()
            return
        threading.Thread(target=self._pump_requests, daemon=True).start()
        self._pump_replies()

    def _send(self, sock, data):
        try:
            sock.sendall(data)
            return True
        except OSError:
            return False

    def _hang_up(self):
        self._closed = True
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _pump_requests(self):
        split = _Splitter()
        while True:
            try:
                data = self.client.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._hang_up()
                return
            for raw, payload in split.feed(data):
                if self._silent:
                    continue
                if payload is None:
                    self.nacks += raw == b"-"
                    self._send(self.upstream, raw)
                    continue
                with self._lock:
                    self.requests.append(payload)
                    number = len(self.requests)
                    self._current = number
                hit = self._hits(number, payload)
                if hit and self.fault == "close":
                    self.fired = True
                    self._hang_up()
                    return
                if hit and self.fault == "silent":
                    self.fired = True
                    self._silent = True
                    continue
                self._send(self.upstream, raw)

    def _pump_replies(self):
        split = _Splitter()
        while True:
            try:
                data = self.upstream.recv(65536)
            except OSError:
                data = b""
            if not data or self._closed:
                self._hang_up()
                return
            for raw, payload in split.feed(data):
                if self._silent:
                    continue
                if payload is None:
                    with self._lock:
                        number = self._current
                    self._send(self.client, self._corrupt(number, raw))
                    continue
                if self.ack and b"QStartNoAckMode+" in payload:
                    payload = b";".join(f for f in payload.split(b";")
                                        if f != b"QStartNoAckMode+")
                    raw = frame(payload)
                with self._lock:
                    number = self._current
                    request = self.requests[number - 1] if number else b""
                out = self._corrupt(number, self._faulty(number, request, raw, payload))
                if not self._send(self.client, out):
                    return

    def _corrupt(self, number, data):
        """data on its way to the client while the server answers request number, with byte
        `pos` of that answer changed (fault "corrupt", once); the answer to a copy of request
        `at` sent again held back late_s."""
        if self.fault != "corrupt":
            return data
        if self.fired and not self._late_done and number == self.at + 1 and \
                self.requests[number - 1] == self.requests[number - 2]:
            self._late_done = True  # the answer to the copy sent again: late
            time.sleep(self.late_s)
        if number != self.at or self.fired:
            return data
        start = len(self.answer_bytes)
        self.answer_bytes += data
        i = self.pos - start
        if not 0 <= i < len(data):
            return data
        new = self.byte if self.byte is not None else bytes([data[i] ^ 1])
        self.fired = True
        self.corrupted = (self.pos, data[i:i + 1], new)
        return data[:i] + new + data[i + 1:]

    def _faulty(self, number, request, raw, payload):
        """What goes to the client for the server's packet raw (payload) answering request
        number (payload request)."""
        fault = self.fault
        if fault == "console":
            stop = payload[:1] in (b"T", b"S", b"W", b"X")
            if stop and not self._console_sent and self.at is not None and number >= self.at:
                self._console_sent = self.fired = True
                return frame(b"O" + b"spoor test\n".hex().encode()) + raw
            return raw
        if not self._hits(number, request):
            return raw
        if fault == "checksum":
            if number in self._corrupted:
                return raw
            self._corrupted.add(number)
            self.fired = True
            bad = (int(raw[-2:], 16) ^ 0x5A) & 0xFF
            return raw[:-2] + b"%02x" % bad
        if fault == "error":
            self.fired = True
            return frame(b"E01")
        if fault == "noreply":
            self.fired = True
            self._hang_up()
            return b""
        if fault == "duplicate":
            self.fired = True
            return raw + raw
        if fault in ("short", "long") and request[:1] == b"m" and re.fullmatch(
                rb"[0-9a-fA-F]+", payload) and len(payload) > 2:
            self.fired = True
            return frame(payload[:-2] if fault == "short" else payload + b"00")
        if fault == "drip":
            self.fired = True
            for i in range(len(raw)):
                if self._closed or not self._send(self.client, raw[i:i + 1]):
                    break
                time.sleep(self.drip_s)
            return b""
        return raw


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("upstream_port", type=int)
    ap.add_argument("fault", choices=FAULTS + SWEPT_BYTE_FAULTS)
    ap.add_argument("--at", type=int)
    ap.add_argument("--every", action="store_true")
    ap.add_argument("--match")
    ap.add_argument("--ack", action="store_true")
    ap.add_argument("--pos", type=int, default=0)
    ap.add_argument("--byte", help="the byte that replaces byte --pos (a character)")
    a = ap.parse_args(argv)
    proxy = FaultyGdb(a.upstream_port, a.fault, a.at, a.match, a.every, a.ack, pos=a.pos,
                      byte=a.byte.encode()[:1] if a.byte else None)
    print(proxy.port, flush=True)
    proxy.thread.join()
    print(f"requests={len(proxy.requests)} nacks={proxy.nacks} fired={proxy.fired}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
