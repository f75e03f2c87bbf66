"""A scripted OpenOCD peer for tests, on either of OpenOCD's command servers (OpenOCD manual,
"Telnet" and "Tcl RPC server"):

  telnet  the "> " prompt, the echoed command line, mdw output ("0xADDR: WORD WORD ...",
          "Memory access commands")
  tcl     (tcl=True) each message up to 0x1a is a command, its result goes back followed by
          0x1a; spoor sends each command inside catch ("if {[catch {CMD} spoor_r]} ..."), so
          the result is "O" and the command's output; read_memory ADDR 32 COUNT answers a Tcl
          list of 0x-prefixed words, version a version string

Memory comes from an image (zeros where it has none); writes (mww/mmw, write_memory) answer
nothing. One scripted fault, from the first read (mdw, read_memory) on:

  garbage  the read answers a multi-line error with raw and control bytes (as a failing target
           and a noisy adapter driver can print) instead of words
  drip     every reply goes out one byte per drip_s seconds (0.05): it ends, late
  trickle  the reply goes out one byte per drip_s seconds and never ends: its prompt (0x1a)
           never comes, however long the client waits; each byte is well within any wait for
           "the next byte"
  lines    the reply's output lines come one per line_s seconds (1), then the same lines
           again, forever: never a prompt (0x1a)
  close    the connection is closed when the command arrives
  silent   the command and everything after it get no answer; the connection stays open

As a library: `with FaultyOpenocd(memory={addr: bytes}, fault="drip") as peer: ... peer.port`;
peer.commands lists the command lines (tcl: the commands inside catch) received."""
import re
import socket
import threading
import time

from faulty_gdb import close_sockets

FAULTS = ("garbage", "drip", "trickle", "lines", "close", "silent")
EOM = b"\x1a"
CATCH = re.compile(rb"^if \{\[catch \{(.*)\} spoor_r\]\}", re.S)
GARBAGE = b"Error: mdw failed\r\n\x01\x1b[31mtarget not halted\x80\xfe\r\nsecond line\r\n"


class FaultyOpenocd:
    def __init__(self, memory=None, fault=None, drip_s=0.05, tcl=False, line_s=1.0):
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.memory, self.fault, self.drip_s = memory or {}, fault, drip_s
        self.tcl, self.line_s = tcl, line_s
        self.commands = []
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.client = None
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop = True
        close_sockets(self.listener, self.client)
        self.thread.join(timeout=5)

    def _word(self, addr):
        for base, data in self.memory.items():
            if base <= addr and addr + 4 <= base + len(data):
                return int.from_bytes(data[addr - base:addr - base + 4], "little")
        return 0

    def _answer(self, line):
        """The output of a read command (telnet: mdw, as rows; tcl: read_memory, a list)."""
        m = re.fullmatch(r"mdw (0x[0-9a-fA-F]+) (\d+)", line)
        if self.tcl:
            m = re.fullmatch(r"read_memory (0x[0-9a-fA-F]+) 32 (\d+)", line)
        if not m:
            return b"Open On-Chip Debugger 0.12.0" if self.tcl and line == "version" else b""
        addr, count = int(m[1], 16), int(m[2])
        if self.tcl:
            return " ".join(f"0x{self._word(addr + 4 * i):08x}" for i in range(count)).encode()
        out = b""
        for row in range(0, count, 8):
            words = " ".join(f"{self._word(addr + 4 * (row + i)):08x}"
                             for i in range(min(8, count - row)))
            out += f"0x{addr + 4 * row:08x}: {words} \r\n".encode()
        return out

    def _pace(self, data, each_s):
        """data in pieces (bytes or lines) with each_s between them; False once stopped."""
        for piece in data:
            if self._stop:
                return False
            self.client.sendall(piece)
            time.sleep(each_s)
        return True

    def _reply(self, raw, line, read):
        """What goes back for the command line (raw: as received), with the fault."""
        fault = self.fault if read else None
        if self.tcl:
            body = b"O" + (GARBAGE if fault == "garbage" else self._answer(line))
            head, end = b"", EOM
        else:
            body = GARBAGE if fault == "garbage" else self._answer(line)
            head, end = raw + b"\r\n", b"> "
        if fault == "drip":
            self._pace([bytes([b]) for b in head + body + end], self.drip_s)
        elif fault == "trickle":
            while self._pace([bytes([b]) for b in head + body], self.drip_s):
                pass
        elif fault == "lines":
            rows = (head + body).replace(b" 0x", b"\n0x").splitlines(keepends=True)
            while self._pace(rows, self.line_s):
                pass
        else:
            self.client.sendall(head + body + end)

    def _commands(self, buf):
        """The complete commands in buf, and what is left of it."""
        if self.tcl:
            *messages, rest = buf.split(EOM)
            out = []
            for msg in messages:
                m = CATCH.match(msg)
                out.append((msg, (m[1] if m else msg).decode(errors="replace")))
            return out, rest
        *lines, rest = buf.split(b"\n")
        return [(raw, raw.decode(errors="replace").strip()) for raw in lines], rest

    def _serve(self):
        try:
            self.client, _ = self.listener.accept()
            if not self.tcl:
                self.client.sendall(b"Open On-Chip Debugger\r\n> ")
            buf, silent = b"", False
            while not self._stop:
                data = self.client.recv(4096)
                if not data:
                    return
                commands, buf = self._commands(buf + data)
                for raw, line in commands:
                    self.commands.append(line)
                    read = line.startswith("mdw" if not self.tcl else "read_memory")
                    if silent or (read and self.fault == "silent"):
                        silent = True
                        continue
                    if read and self.fault == "close":
                        self.client.shutdown(socket.SHUT_RDWR)
                        return
                    self._reply(raw, line, read)
        except OSError:
            return
