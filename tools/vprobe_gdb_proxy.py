"""The virtual probe's GDB port (tools/vprobe.py, docs/vprobe.md): a proxy in front of QEMU's
gdbstub that serves the ITM, the DWT and DEMCR from the probe's emulated registers.

A real probe's DWT and ITM are configured by the debugger as often as by the firmware. QEMU
has neither (DWT_CTRL reads 0: no comparators), and a debugger's writes to them would go
straight to its gdbstub, unseen by the probe. The proxy passes every packet through unchanged
(GDB Remote Serial Protocol: '$payload#cs' packets, '+'/'-' acks until QStartNoAckMode, 0x03
interrupts, run-length encoded replies) except the memory packets that touch

    0xE0000000-0xE0000FFF  ITM         0xE0001000-0xE0001FFF  DWT     0xE000EDFC  DEMCR

'm' reads return the emulated registers (DWT_CTRL with NUMCOMP as the emulated core has) and
'M'/'X' writes configure the probe as a firmware store would. A packet that also touches other
memory goes to QEMU and its reply is patched (reads) or the probe takes the emulated bytes once
QEMU accepted the write.

Memory packets come only while QEMU is stopped (all-stop mode: a debugger talks to a running
target only to interrupt it). The accesses run in the probe's log reader through a Bridge, at
the point of QEMU's log where it stopped: a write takes effect from the instruction at which
QEMU resumes, as a debugger's write to a halted core does.
"""

import os
import re
import select
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coresight_regs import REGS, reg  # noqa: E402
from rsp_framing import ProtocolError, Tokens, expand_rle, frame, unescape  # noqa: E402

ITM_BASE, DWT_END = reg("ITM_STIM", 0), REGS["DWT_END"]
DEMCR = REGS["DEMCR"]
EMULATED = ((ITM_BASE, DWT_END), (DEMCR, DEMCR + 4))
STOP_REPLY = re.compile(rb"[ST][0-9a-fA-F]{2}")  # 'S05', 'T02thread:01;': QEMU has stopped


def emulated(addr):
    """Whether the probe serves the byte at addr (EMULATED; as a comparison: a store's hot path)."""
    return ITM_BASE <= addr < DWT_END or addr & ~3 == DEMCR


# The longest packet either side may send: spoor gdbserver's bound (SPOOR_RSP_MAX_PACKET, 4096
# bytes of payload) doubled for escapes, with room for framing; QEMU's gdbstub announces
# PacketSize=1000 (hex). A client that sends more without a '#' is dropped, not buffered.
MAX_PACKET = 2 * 4096 + 8


def parse_memory_packet(payload):
    """(kind, addr, length, data) of an 'm', 'M' or 'X' packet, or None."""
    kind = payload[:1]
    if kind not in (b"m", b"M", b"X"):
        return None
    head, sep, data = payload[1:].partition(b":")
    if (kind == b"m") == bool(sep):
        return None
    try:
        addr_text, length_text = head.split(b",")
        addr, length = int(addr_text, 16), int(length_text, 16)
        if kind == b"M":
            data = bytes.fromhex(data.decode("ascii"))
        elif kind == b"X":
            data = unescape(data)
    except ValueError:
        return None
    if kind != b"m" and len(data) != length:
        return None
    if addr + length > 1 << 32:
        return None
    return kind.decode(), addr, length, data


class BridgeClosed(Exception):
    pass


class Bridge:
    """Debugger accesses handed from the proxy's thread to the log reader: each runs when the
    reader has read QEMU's log up to where QEMU stopped (the bytes read so far plus the ones
    waiting in the pipe: QEMU, stopped, writes no more), between the last instruction that ran
    and the next one."""

    def __init__(self, log_fd):
        self.log_fd = log_fd
        self.consumed = 0
        self.lock = threading.Lock()
        self.pending = []
        self.closed = False
        self.wake_r, self.wake_w = os.pipe()

    def read_log(self, size):
        with self.lock:
            chunk = os.read(self.log_fd, size)
            self.consumed += len(chunk)
        return chunk

    def _waiting_in_pipe(self):
        import fcntl
        import termios
        return struct.unpack("i", fcntl.ioctl(self.log_fd, termios.FIONREAD, b"\0\0\0\0"))[0]

    def call(self, function, timeout=30.0, registers=None):
        """function(probe) run by the log reader; its result, or BridgeClosed. registers: QEMU's
        r0..r15 at this stop (the reader first settles whether its last record ran)."""
        request = {"function": function, "done": threading.Event(), "result": None,
                   "registers": registers}
        with self.lock:
            if self.closed:
                raise BridgeClosed()
            request["at"] = self.consumed + self._waiting_in_pipe()
            self.pending.append(request)
        os.write(self.wake_w, b".")
        if not request["done"].wait(timeout) or "error" in request:
            raise BridgeClosed()
        return request["result"]

    def due(self):
        """The requests whose log position the reader has reached, as events for the reader."""
        with self.lock:
            ready = [r for r in self.pending if r["at"] <= self.consumed]
            self.pending = [r for r in self.pending if r["at"] > self.consumed]
        return [("debugger", r) for r in ready]

    @staticmethod
    def run(request, probe):
        try:
            request["result"] = request["function"](probe)
        except Exception as e:  # reported to the debugger as an error reply
            request["error"] = e
        request["done"].set()

    def close(self):
        with self.lock:
            self.closed = True
            pending, self.pending = self.pending, []
        for r in pending:
            r["error"] = BridgeClosed()
            r["done"].set()


class Proxy:
    """Listens on 127.0.0.1:port; each client is relayed to QEMU's gdbstub at upstream (a
    socket address), one at a time, as QEMU serves one debugger. log(text): a line per access
    the proxy served (--gdb-log)."""

    def __init__(self, port, upstream, bridge, log=None):
        self.upstream = upstream
        self.bridge = bridge
        self.log = log
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(1)
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping = True
        try:
            self.listener.close()
        except OSError:
            pass

    def _serve(self):
        client = None
        while not self.stopping:
            if client is None:
                try:
                    client, _ = self.listener.accept()
                except OSError:
                    return
            server = self._connect_upstream()
            if server is None:
                client.close()
                client = None
                continue
            session = Session(client, server, self.bridge, self.log, self.listener)
            try:
                session.run()
            except OSError:
                pass
            except ProtocolError as e:
                print(f"spoor vprobe: gdb port: {e}", file=sys.stderr)
            except Exception as e:  # a bug of the proxy's: say so, drop the connection
                print(f"spoor vprobe: gdb port: {type(e).__name__}: {e}", file=sys.stderr)
            finally:
                client.close()
                server.close()
            client = session.successor  # a client that replaced a silent one, or None

    def _connect_upstream(self):
        deadline = time.monotonic() + 60  # QEMU starting on a busy machine
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.upstream)
                return s
            except OSError:
                s.close()
                if time.monotonic() > deadline or self.stopping:
                    return None
                time.sleep(0.05)


def _no_delays(sock):
    """A debugger's small packets and acks go at once, both ways: TCP_NODELAY (no waiting for
    the ack of what we sent) and TCP_QUICKACK (ack at once, which Linux clears again:
    _quick_ack after each read). Else gdb, which sends its '+' and its next packet in two
    writes, waits for our delayed ack, 40 ms an exchange (a stepi took 0.9 s through the
    proxy)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    _quick_ack(sock)


def _quick_ack(sock):
    quickack = getattr(socket, "TCP_QUICKACK", None)
    if quickack is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, quickack, 1)
        except OSError:
            pass


class Session:
    """One debugger's connection, relayed to QEMU."""

    def __init__(self, client, server, bridge, log, listener=None):
        self.client, self.server = client, server
        self.bridge, self.log = bridge, log
        _no_delays(client)
        self.listener = listener  # new debuggers, while this one is served
        self.spoken = False  # the client has sent a packet
        self.successor = None  # a new client that replaced this silent one
        self.from_client = Tokens(max_packet=MAX_PACKET)
        self.from_server = Tokens(max_packet=MAX_PACKET)
        self.no_ack = False
        self.asked_no_ack = False
        self.our_reply = None  # a reply of ours the client has not acknowledged yet

    def run(self):
        self._stopped()  # QEMU stops when a debugger connects (its gdbstub's rule)
        sides = {self.client: (self.from_client, self._from_client),
                 self.server: (self.from_server, self._from_server)}
        watched = list(sides) + ([self.listener] if self.listener else [])
        while True:
            readable, _, _ = select.select(watched, [], [])
            for sock in readable:
                if sock is self.listener:
                    if self._another_client():
                        return
                    continue
                data = sock.recv(65536)
                if not data:
                    return
                if sock is self.client:
                    _quick_ack(sock)
                tokens, handle = sides[sock]
                for token in tokens.feed(data):
                    if sock is self.client and token[0] == "packet":
                        self.spoken = True
                    handle(token)

    def _another_client(self):
        """A second debugger connected: it replaces this client if this one has not sent a
        packet yet (a port scan, an idle probe), as spoor gdbserver does; otherwise it gets one
        error packet and is closed. True when this session ends for the new client."""
        try:
            other, _ = self.listener.accept()
        except OSError:
            return False
        if not self.spoken:
            print("spoor vprobe: gdb port: a silent client was replaced by a new one",
                  file=sys.stderr)
            self.successor = other
            return True
        try:
            other.sendall(frame(b"E.the virtual probe serves one debugger at a time"))
        except OSError:
            pass
        other.close()
        print("spoor vprobe: gdb port: refused a second client (one debugger at a time)",
              file=sys.stderr)
        return False

    # ---- client -> QEMU
    def _from_client(self, token):
        kind, raw = token[0], token[1]
        if self.our_reply is not None and kind in ("ack", "nack"):
            if kind == "nack":
                self.client.sendall(self.our_reply)
            else:
                self.our_reply = None
            return
        if kind == "packet" and token[3]:
            payload = token[2]
            access = parse_memory_packet(payload)
            if access and access[2] and self._touches(access[1], access[2]):
                self._serve(payload, access)
                return
            if payload == b"QStartNoAckMode":
                self.asked_no_ack = True
        self.server.sendall(raw)

    @staticmethod
    def _touches(addr, length):
        return any(addr < high and addr + length > low for low, high in EMULATED)

    # ---- QEMU -> client
    def _from_server(self, token):
        if token[0] == "packet" and self.asked_no_ack:
            self.asked_no_ack = False
            self.no_ack = token[2] == b"OK"
        if token[0] == "packet" and token[3] and STOP_REPLY.match(token[2]):
            self._stopped()  # before the debugger hears of the stop: it changes nothing yet
        self.client.sendall(token[1])

    def _stopped(self):
        """QEMU is stopped: its r0..r15 (a 'g' exchange of the proxy's own) go to the log
        reader, which then knows whether the last instruction QEMU logged ran before the
        stop (docs/vprobe.md, "QEMU's log")."""
        reply = expand_rle(self._upstream(b"g"))
        try:
            registers = struct.unpack("<16I", bytes.fromhex(reply[:128].decode("ascii")))
        except (ValueError, struct.error):
            return  # not a register dump ('Exx'): the reader keeps its own rules
        try:
            self.bridge.call(lambda probe: None, registers=registers)
        except BridgeClosed:
            pass

    # ---- the packets the probe serves
    def _serve(self, payload, access):
        if not self.no_ack:
            self.client.sendall(b"+")
        kind, addr, length, data = access
        everything = all(emulated(a) for a in range(addr, addr + length))
        try:
            if kind == "m":
                reply = self._read(payload, addr, length, everything)
            else:
                reply = self._write(payload, addr, data, everything)
        except BridgeClosed:
            reply = b"E01"  # the probe has stopped following QEMU (it exited)
        framed = frame(reply)
        self.client.sendall(framed)
        if not self.no_ack:
            self.our_reply = framed

    def _read(self, payload, addr, length, everything):
        if everything:
            base = bytes(length)
        else:
            reply = expand_rle(self._upstream(payload))
            try:
                base = bytes.fromhex(reply.decode("ascii"))
            except ValueError:
                return reply  # an error ('Exx') or something else: QEMU's answer stands
            if len(base) != length:
                return reply
        values = self.bridge.call(lambda probe: probe.debug_read(addr, base))
        self._note("read ", addr, values)
        return values.hex().encode()

    def _write(self, payload, addr, data, everything):
        if not everything:
            reply = self._upstream(payload)
            if reply != b"OK":
                return reply
        self.bridge.call(lambda probe: probe.debug_write(addr, data))
        self._note("write", addr, data)
        return b"OK"

    def _note(self, what, addr, data):
        """'write 0xe000edfc 4: 00000001 = 0x01000000': the bytes, and a word's value."""
        if self.log:
            word = f" = 0x{int.from_bytes(data, 'little'):08x}" if len(data) == 4 else ""
            self.log(f"{what} 0x{addr:08x} {len(data)}: {data.hex()}{word}")

    def _upstream(self, payload):
        """One exchange of the proxy's own with QEMU; its reply's payload."""
        framed = frame(payload)
        self.server.sendall(framed)
        acked = self.no_ack
        while True:
            data = self.server.recv(65536)
            if not data:
                raise OSError("QEMU closed the connection")
            for token in self.from_server.feed(data):
                if token[0] == "nack" and not acked:
                    self.server.sendall(framed)
                elif token[0] == "ack":
                    acked = True
                elif token[0] == "packet":
                    if not self.no_ack:
                        self.server.sendall(b"+" if token[3] else b"-")
                    if token[3]:
                        return token[2]
