"""A scripted OpenOCD telnet server for tests: the "> " prompt, the echoed command line, mdw
output ("0xADDR: WORD WORD ...", OpenOCD manual "Memory access commands") from a memory image
(zeros where it has none), nothing for mww/mmw; and one scripted fault, from the first mdw on:

  garbage  mdw answers a multi-line error with raw and control bytes (as a failing target and a
           noisy adapter driver can print) instead of words
  drip     every reply goes out one byte per drip_s seconds (0.05)
  close    the connection is closed when the command arrives
  silent   the command and everything after it get no answer; the connection stays open

As a library: `with FaultyOpenocd(memory={addr: bytes}, fault="drip") as peer: ... peer.port`;
peer.commands lists the command lines received."""
import re
import socket
import threading
import time

from faulty_gdb import close_sockets

FAULTS = ("garbage", "drip", "close", "silent")
GARBAGE = b"Error: mdw failed\r\n\x01\x1b[31mtarget not halted\x80\xfe\r\nsecond line\r\n"


class FaultyOpenocd:
    def __init__(self, memory=None, fault=None, drip_s=0.05):
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.memory, self.fault, self.drip_s = memory or {}, fault, drip_s
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
        m = re.fullmatch(r"mdw (0x[0-9a-fA-F]+) (\d+)", line)
        if not m:
            return b""
        addr, count = int(m[1], 16), int(m[2])
        out = b""
        for row in range(0, count, 8):
            words = " ".join(f"{self._word(addr + 4 * (row + i)):08x}"
                             for i in range(min(8, count - row)))
            out += f"0x{addr + 4 * row:08x}: {words} \r\n".encode()
        return out

    def _send(self, data):
        if self.fault == "drip":
            for i in range(len(data)):
                if self._stop:
                    return
                self.client.sendall(data[i:i + 1])
                time.sleep(self.drip_s)
        else:
            self.client.sendall(data)

    def _serve(self):
        try:
            self.client, _ = self.listener.accept()
            self.client.sendall(b"Open On-Chip Debugger\r\n> ")
            buf, silent = b"", False
            while not self._stop:
                data = self.client.recv(4096)
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    line = raw.decode(errors="replace").strip()
                    self.commands.append(line)
                    mdw = line.startswith("mdw")
                    if silent or (mdw and self.fault == "silent"):
                        silent = True
                        continue
                    if mdw and self.fault == "close":
                        self.client.shutdown(socket.SHUT_RDWR)
                        return
                    reply = GARBAGE if mdw and self.fault == "garbage" else self._answer(line)
                    self._send(raw + b"\r\n" + reply + b"> ")
        except OSError:
            return
