#!/usr/bin/env python3
"""Virtual trace probe: the ITM/DWT stream a real probe would deliver from a Cortex-M running in
QEMU, live on TCP and/or in a file. `spoor vprobe` runs this tool; docs/vprobe.md explains it.

QEMU emulates neither the ITM nor the DWT: it ignores the firmware's writes to their registers.
This tool runs QEMU with -icount (an instruction is one cycle of a CPU clock of 1e9 / 2^shift
Hz, deterministic), -singlestep and -d cpu,nochain,int (with --full-log exec,nochain,int,cpu)
into a pipe, reads that log with tools/qemu_log.py (the reader the virtual MTB uses), follows
the firmware's stores to the ITM and DWT registers (address and value from the logged register
state and the decoded Thumb store, tools/vprobe_stores.py) and emits what that configuration
makes the hardware emit (tools/vprobe_itm.py): instrumentation packets for stimulus-port
writes, data-trace packets for stores a comparator matches, exception trace, periodic PC
samples, local timestamps, syncs; optionally TPIU frames, optionally through a model of the
SWO pin that drops what it cannot carry and emits overflow packets.
"""

import argparse
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_log  # noqa: E402
import vprobe_itm as itm  # noqa: E402
import vprobe_stores  # noqa: E402
from coresight_regs import REGS, reg  # noqa: E402
from vprobe_gdb_proxy import DEMCR, DWT_END, ITM_BASE, Bridge, Proxy, emulated  # noqa: E402

HELP = """\
usage: spoor vprobe [OPTIONS] -- qemu-system-arm QEMU-ARGS...
Runs QEMU (a Cortex-M machine, the firmware as -kernel) and emulates the ITM and DWT it lacks:
the ITM/DWT stream the firmware's own configuration (or --set) asks for, served on TCP like
OpenOCD's SWO port and/or written to a file. Time is QEMU's instruction count (-icount): one
instruction is one cycle of a 1e9/2^shift Hz clock. Adds -icount, -singlestep, -d, -D and -gdb
to the QEMU command (do not give them).
Exit status: QEMU's (0 when the firmware exited 0), 2 for bad usage.

  -p, --port N       serve the stream on 127.0.0.1:N (default 46000; 0: no server)
  -o, --output FILE  also write the stream to FILE
      --shift N      -icount shift: one instruction = 2^N ns (default 5: 31.25 MHz)
      --gdb PORT     QEMU's gdbstub on 127.0.0.1:PORT (default 3333; 0: none), through a
                     proxy that serves the ITM, DWT and DEMCR from the emulated registers: a
                     debugger's writes configure the probe (from where QEMU resumes); a debugger
                     that connects halts the target until it continues it
      --gdb-log FILE a line per ITM/DWT/DEMCR access the GDB port served
      --arch v7m|v8m the DWT_FUNCTION encoding (default: v8m for mps2-an505/an521, mps3-an524/
                     an547 and -cpu cortex-m33/m55, else v7m)
      --comparators N  DWT comparators the core has (DWT_CTRL.NUMCOMP, 0-4; default 4)
      --elf FILE     the firmware (default: QEMU's -kernel), for decoding its stores
      --set REG=VAL  an ITM/DWT register as if a debugger wrote it before the firmware ran:
                     DEMCR, ITM_TCR, ITM_TER, DWT_CTRL, DWT_COMPn, DWT_MASKn, DWT_FUNCTIONn or
                     an address (repeatable); the firmware's own writes come after
      --swo-baud N   model the SWO pin at N baud (NRZ, 10 bits a byte): packets that do not fit
                     its FIFO are dropped and an overflow packet follows
      --swo-fifo N   bytes the ITM/TPIU FIFO holds for --swo-baud (default 32)
      --tpiu         frame the stream with the TPIU formatter (source ID: ITM_TCR.TraceBusID)
      --wait-client  start QEMU only once a TCP client is connected (it then sees everything)
      --stats FILE   write a JSON summary at the end (instructions, packets, drops)
      --keep-log FILE  also copy QEMU's log to FILE (large: about 240 bytes an instruction,
                     310 with --full-log)
      --full-log     QEMU writes its full log (-d exec,nochain,int,cpu), whose exec lines say
                     which instructions ran: slower; exact also at a branch to itself (B .)
  -q, --quiet        no start and end lines on stderr
  -h, --help         this text
"""

ITM_TER, ITM_TCR = REGS["ITM_TER0"], REGS["ITM_TCR"]
DWT_CTRL, DWT_CYCCNT = REGS["DWT_CTRL"], REGS["DWT_CYCCNT"]
ITM_LAR, DWT_LAR = REGS["ITM_LAR"], REGS["DWT_LAR"]
COMPARATORS = 4  # Cortex-M3, M4, M33: the data trace packets name comparators 0-3
V8M_MACHINES = ("mps2-an505", "mps2-an521", "mps3-an524", "mps3-an547")
V8M_CPUS = ("cortex-m33", "cortex-m55")
NAMES = {"DEMCR": DEMCR, "ITM_TCR": ITM_TCR, "ITM_TER": ITM_TER, "ITM_TPR": REGS["ITM_TPR"],
         "DWT_CTRL": DWT_CTRL}
for _n in range(COMPARATORS):
    for _name in ("DWT_COMP", "DWT_MASK", "DWT_FUNCTION"):
        NAMES[f"{_name}{_n}"] = reg(_name, _n)
# DWT_FUNCTION.FUNCTION (ARMv7-M ARM C1.8.17, DATAVMATCH = 0): what a matching write emits,
# for EMITRANGE 0 and 1 (reads are not traced by this probe)
WRITE_EMITS = {
    0b0001: (("pc",), ("addr",)),
    0b0010: (("data",), ("addr", "data")),
    0b0011: (("pc", "data"), ("addr", "data")),
    0b1101: (("data",), ("addr",)),
    0b1111: (("pc", "data"), ("addr", "data")),
}
READS_TOO = {0b0001, 0b0010, 0b0011, 0b1100, 0b1110}
# ARMv8-M DWT_FUNCTIONn (ARMv8-M ARM, DDI0553): MATCH [3:0], ACTION [5:4], DATAVSIZE [11:10],
# ID [31:27] read-only. MATCH 0b0100/0b0101/0b0110: Data Address (reads and writes / writes /
# reads); 0b1100/0b1101/0b1110: Data Address With Value (the same accesses). ACTION 0b10: "For a
# Cycle Counter, Instruction Address, Data Address, Data Value or Linked Data Value comparator,
# generate a Data Trace Match packet. For a Data Address With Value comparator, generate a Data
# Trace Data Value packet."
V8_ACTION_TRACE = 0b10
EXC_ENTER, EXC_EXIT, EXC_RETURN = 1, 2, 3
NOT_A_STORE = object()


class UsageError(Exception):
    pass


def warn(text):
    print(f"spoor vprobe: {text}", file=sys.stderr, flush=True)


class Sinks:
    """Where the stream goes: a file and TCP clients, each optionally TPIU-framed. Bytes are
    buffered and pushed between chunks of the log."""

    def __init__(self, port, output, tpiu_id):
        self.buffer = bytearray()
        self.sent = 0
        self.tpiu_id = tpiu_id
        self.file = None
        if output:
            self.file = [open(output, "wb"), self._framer()]
        self.listener = None
        self.clients = []
        if port is not None:
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                self.listener.bind(("127.0.0.1", port))
            except OSError as e:
                raise UsageError(f"127.0.0.1:{port}: {e.strerror}")
            self.listener.listen(8)
            self.listener.setblocking(False)

    def _framer(self):
        return itm.TpiuFramer(self.tpiu_id) if self.tpiu_id is not None else None

    @property
    def port(self):
        return self.listener.getsockname()[1] if self.listener else None

    def wait_client(self):
        self.listener.setblocking(True)
        self._accept_one()
        self.listener.setblocking(False)

    def _accept_one(self):
        conn, peer = self.listener.accept()
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = Client(conn, self._framer(), peer)
        self.clients.append(client)
        if self.sent:  # joining a running stream: a sync first, so its decoder aligns
            self._send(client, itm.SYNC)

    def write(self, data):
        self.buffer += data

    def _send(self, sink, data):
        if isinstance(sink, Client):
            return sink.send(data)
        out, framer = sink
        if framer is not None:
            data = framer.feed(data)
        if data:
            out.write(data)
        return True

    def push(self):
        while self.listener is not None:
            try:
                self._accept_one()
            except (BlockingIOError, InterruptedError):
                break
        if not self.buffer:
            return
        data = bytes(self.buffer)
        self.buffer.clear()
        self.sent += len(data)
        if self.file:
            self._send(self.file, data)
        for client in list(self.clients):
            if not self._send(client, data):
                self._drop_client(client)

    def _drop_client(self, client):
        client.close(flush_seconds=0)
        self.clients.remove(client)
        client.report()

    def close(self):
        self.push()
        if self.file:
            out, framer = self.file
            if framer is not None:
                out.write(framer.flush())
            out.close()
        for client in self.clients:
            client.close(flush_seconds=CLIENT_FLUSH_SECONDS)
            client.report()
        if self.listener:
            self.listener.close()


# What a stream client may have queued before the probe drops its new bytes (a client that
# does not read must not stall the others or QEMU), and how long the end of the run waits for a
# client to take what is queued.
CLIENT_QUEUE_LIMIT = 4 << 20
CLIENT_FLUSH_SECONDS = 5.0


class Client:
    """One TCP client of the stream: its own TPIU framer and a bounded queue of bytes not sent
    yet. Sends never block; what does not fit the queue is dropped and counted, and the client
    gets a sync before the stream resumes so its decoder realigns."""

    def __init__(self, sock, framer, peer):
        self.sock, self.framer, self.peer = sock, framer, peer
        self.queue = bytearray()
        self.dropped = 0
        self.dropping = False
        self.failed = None
        self.hung_up = False  # the client closed its end: nothing it missed is worth a word

    def send(self, data):
        if self.framer is not None:
            data = self.framer.feed(data)
        if not data:
            return True
        if len(self.queue) + len(data) > CLIENT_QUEUE_LIMIT:
            self.dropped += len(data)
            self.dropping = True
        else:
            if self.dropping and self.framer is None:
                self.queue += itm.SYNC
            self.dropping = False
            self.queue += data
        return self._write()

    def _write(self):
        while self.queue:
            try:
                n = self.sock.send(self.queue)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError as e:
                self.failed = e.strerror or str(e)
                self.hung_up = True
                return False
            del self.queue[:n]
        return True

    def _peer_closed(self):
        """Whether the client has closed its end of the connection (an end of stream waits to
        be read; what it sent before that is left unread: it is ignored anyway)."""
        try:
            while True:
                chunk = self.sock.recv(65536, socket.MSG_DONTWAIT)
                if not chunk:
                    return True
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def close(self, flush_seconds):
        if self.framer is not None and self.failed is None:
            self.queue += self.framer.flush()
        deadline = time.monotonic() + flush_seconds
        while self.queue and self.failed is None and time.monotonic() < deadline:
            select.select([], [self.sock], [], max(0.0, deadline - time.monotonic()))
            if not self._write():
                break
        self.dropped += len(self.queue)
        self.hung_up = self.hung_up or self._peer_closed()
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.sock.close()

    def report(self):
        """Says what a client still connected at the end was not given; a client that closed
        its connection (e.g. `spoor top -n 6` done) missed what came after on purpose."""
        if self.dropped and not self.hung_up:
            warn(f"stream client {self.peer[0]}:{self.peer[1]} did not read fast enough: "
                 f"{self.dropped} bytes not delivered")


class Probe:
    """The DWT and ITM as the firmware configured them, fed with QEMU's log events."""

    def __init__(self, code, sinks, link, initial, arch="v7m", numcomp=COMPARATORS):
        self.code = code
        self.arch = arch
        self.numcomp = numcomp
        self.cyccnt_since = 0  # the cycle DWT_CYCCNT's stored value was taken at
        self.sinks = sinks
        self.link = link
        self.regs = {}
        self.count = 0  # instructions retired: the cycle counter
        self.group = []  # (packet, kind) emitted at group_time, awaiting their timestamp
        self.group_time = 0
        self.last_ts = 0  # timestamp ticks of the last local timestamp that went out
        self.stores = {}
        self.stores_hex = {}  # pc as 8 hex digits (bytes) -> whether it stores
        self.comparators = []
        self.warned = set()
        self.exc_stack = []
        self.returning = None
        self.next_sample = None
        self.sample_period = None
        self.next_sync = None
        self.emitted = {}
        self.dropped = {}
        for addr, value in initial:
            self.write_register(addr, 4, value)

    # ---- configuration, from the firmware's stores
    def reg(self, addr):
        return self.regs.get(addr, 0)

    def write_register(self, addr, size, value):
        was_enabled = self.itm_enabled()
        word = addr & ~3
        if self.comparator_of(word) >= self.numcomp or word in (ITM_LAR, DWT_LAR):
            return  # a comparator the core does not have (RAZ/WI); the lock is not emulated
        if word in (DWT_CTRL, DWT_CYCCNT):  # the counter so far, before CYCCNTENA may change
            self.regs[DWT_CYCCNT] = self.cyccnt()
            self.cyccnt_since = self.count
        shift = 8 * (addr & 3)
        mask = ((1 << (8 * size)) - 1) << shift
        old = self.reg(word)
        self.regs[word] = ((old & ~mask) | ((value << shift) & mask)) & self.writable(word)
        self.configure()
        if self.itm_enabled() and not was_enabled and self.sync_enabled():
            self.emit(itm.SYNC, "sync", self.count, timestamped=False)

    @staticmethod
    def comparator_of(word):
        """The comparator whose COMP/MASK/FUNCTION word this is (-1: none)."""
        first = reg("DWT_COMP", 0)
        return (word - first) >> 4 if first <= word < reg("DWT_COMP", 16) else -1

    def writable(self, word):
        """The bits of a register a write changes (the others read-only)."""
        if word == DWT_CTRL:
            return 0x00FFFFFF  # NUMCOMP, NOTRCPKT, NOEXTTRIG, NOCYCCNT, NOPRFCNT
        if word == ITM_TCR:
            return ~(1 << 23) & 0xFFFFFFFF  # BUSY
        if self.comparator_of(word) >= 0 and word & 0xF == 8:  # FUNCTION: MATCHED (v8-M: ID)
            return 0x07FFFFFF & ~(1 << 24) if self.arch == "v8m" else ~(1 << 24) & 0xFFFFFFFF
        return 0xFFFFFFFF

    def cyccnt(self):
        value = self.reg(DWT_CYCCNT)
        if self.reg(DWT_CTRL) & 1:
            value += self.count - self.cyccnt_since
        return value & 0xFFFFFFFF

    def read_word(self, word):
        """A register as a debugger reads it."""
        if word == DWT_CTRL:
            return self.reg(DWT_CTRL) | self.numcomp << 28
        if word == DWT_CYCCNT:
            return self.cyccnt()
        if ITM_BASE <= word < ITM_BASE + 0x80:  # a stimulus port: FIFOREADY, never full here
            return 1 if self.itm_enabled() else 0
        return self.reg(word)

    def configure(self):
        ctrl = self.reg(DWT_CTRL)
        self.comparators = []
        for n in range(min(self.numcomp, COMPARATORS)):
            function = self.reg(reg("DWT_FUNCTION", n))
            comp = self.reg(reg("DWT_COMP", n))
            if function & 0xF:
                decode = self.v8_comparator if self.arch == "v8m" else self.v7_comparator
                entry = decode(n, function, comp)
                if entry:
                    self.comparators.append(entry)
        sampling = bool(ctrl & (1 << 12)) and bool(ctrl & 1)
        period = ((ctrl >> 1) & 0xF) + 1
        period *= 1024 if ctrl & (1 << 9) else 64
        if not sampling:
            self.next_sample = None
        elif self.next_sample is None or period != self.sample_period:
            self.next_sample = self.count + period
        self.sample_period = period
        synctap = (ctrl >> 10) & 3
        self.sync_period = {1: 1 << 24, 2: 1 << 26, 3: 1 << 28}.get(synctap)
        if self.sync_period is None:
            self.next_sync = None
        elif self.next_sync is None:
            self.next_sync = (self.count // self.sync_period + 1) * self.sync_period

    def v7_comparator(self, n, function, comp):
        """ARMv7-M ARM C1.8.17: FUNCTION [3:0], EMITRANGE bit 5, DATAVMATCH bit 8; MASKn."""
        kind = function & 0xF
        if function & (1 << 8):
            self.warn_once(f"DWT_FUNCTION{n}: data value matching is not emulated")
            return None
        if kind in READS_TOO:
            self.warn_once(f"DWT_FUNCTION{n}: reads are not traced, only writes")
        if kind not in WRITE_EMITS:
            return None
        ignore = (1 << (self.reg(reg("DWT_MASK", n)) & 0x1F)) - 1
        emits = WRITE_EMITS[kind][1 if function & (1 << 5) else 0]
        return (n, comp & ~ignore, comp | ignore, emits)

    def v8_comparator(self, n, function, comp):
        """ARMv8-M: a Data Address comparator traces a write with a Data Trace Match packet, a
        Data Address With Value comparator with a Data Trace Data Value packet (ACTION 0b10).
        The watched object: 2^DATAVSIZE bytes at COMP."""
        match, action, size = function & 0xF, (function >> 4) & 3, (function >> 10) & 3
        if action != V8_ACTION_TRACE:
            if action == 0b11:
                self.warn_once(f"DWT_FUNCTION{n}: data address packets are not emulated")
            return None  # 0b00 trigger only, 0b01 debug event: no packet
        if match & 0b0111 not in (0b0100, 0b0101, 0b0110):
            self.warn_once(f"DWT_FUNCTION{n}: MATCH 0b{match:04b} is not emulated")
            return None
        if match & 3 == 0b10:
            self.warn_once(f"DWT_FUNCTION{n}: matches reads only; reads are not traced")
            return None
        if match & 3 == 0b00:
            self.warn_once(f"DWT_FUNCTION{n}: reads are not traced, only writes")
        low = comp & ~((1 << size) - 1)
        return (n, low, low + (1 << size) - 1, ("data",) if match & 0b1000 else ("match",))

    # ---- a debugger's accesses (tools/vprobe_gdb_proxy.py), QEMU stopped
    def debug_read(self, addr, base):
        """base (QEMU's bytes, or zeros) with the emulated registers' bytes in place."""
        out = bytearray(base)
        for i in range(len(out)):
            a = addr + i
            if emulated(a):
                out[i] = (self.read_word(a & ~3) >> (8 * (a & 3))) & 0xFF
        return bytes(out)

    def debug_write(self, addr, data):
        """A debugger's write: to the emulated registers as the firmware's store would be
        (whole words when aligned, else byte by byte)."""
        step = 4 if addr % 4 == 0 and len(data) % 4 == 0 else 1
        for i in range(0, len(data), step):
            if emulated(addr + i):
                self.store_register(addr + i, step, int.from_bytes(data[i:i + step], "little"))

    def store_register(self, addr, size, value):
        if addr < ITM_BASE + 0x80:
            self.stimulus((addr - ITM_BASE) >> 2, size, value)
        else:
            self.write_register(addr, size, value)

    def warn_once(self, text):
        if text not in self.warned:
            self.warned.add(text)
            warn(text)

    def itm_enabled(self):
        return bool(self.reg(DEMCR) & (1 << 24)) and bool(self.reg(ITM_TCR) & 1)

    def dwt_forwarded(self):
        return self.itm_enabled() and bool(self.reg(ITM_TCR) & (1 << 3))

    def sync_enabled(self):
        return bool(self.reg(ITM_TCR) & (1 << 2))

    # ---- the stream
    def emit(self, packet, kind, at, timestamped=True):
        if self.group and at != self.group_time:
            self.flush()
        if not timestamped:
            self.flush()
            self.send(at, packet, kind)
            return
        self.group_time = at
        self.group.append((packet, kind))

    def send(self, at, packet, kind):
        data = self.link.offer(at, packet) if self.link else packet
        if data:
            self.sinks.write(data)
            self.emitted[kind] = self.emitted.get(kind, 0) + 1
            if self.link and data[:1] == itm.OVERFLOW and packet[:1] != itm.OVERFLOW:
                self.emitted["overflow"] = self.emitted.get("overflow", 0) + 1
        else:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1
        return bool(data)

    def flush(self):
        if not self.group:
            return
        tcr = self.reg(ITM_TCR)
        at = self.group_time
        if tcr & (1 << 1):  # TSENA: a local timestamp after the packets, prescaled
            ticks = at // (1, 4, 16, 64)[(tcr >> 8) & 3]
            delta = ticks - self.last_ts
            while delta > itm.TS_MAX:  # a long gap: timestamps of their own first
                if self.send(at, itm.local_timestamp(itm.TS_MAX), "ts_local"):
                    self.last_ts += itm.TS_MAX
                    delta -= itm.TS_MAX
                else:
                    break
            for packet, kind in self.group:
                self.send(at, packet, kind)
            if self.send(at, itm.local_timestamp(delta), "ts_local"):
                self.last_ts = ticks
        else:
            for packet, kind in self.group:
                self.send(at, packet, kind)
        self.group = []

    # ---- log events
    def store_at(self, pc):
        store = self.stores.get(pc, NOT_A_STORE)
        if store is NOT_A_STORE:
            store = vprobe_stores.decode(self.code, pc)
            self.stores[pc] = store
        return store

    def wants_regs(self, pc):
        return self.store_at(pc) is not None

    def instruction(self, pc, regs):
        now = self.count
        if self.next_sample is not None and now >= self.next_sample:
            while self.next_sample <= now:
                self.next_sample += self.sample_period
            if self.dwt_forwarded():
                self.emit(itm.pc_sample(pc), "pc_sample", now)
        if self.next_sync is not None and now >= self.next_sync:
            self.next_sync += self.sync_period
            if self.itm_enabled() and self.sync_enabled():
                self.emit(itm.SYNC, "sync", now, timestamped=False)
        self.count = now + 1
        if regs is None:
            return
        store = self.stores[pc]
        if store.kind == "exclusive":
            for addr, size, value in store.accesses(regs):
                if self.watched(addr, size) or ITM_BASE <= addr < DWT_END:
                    self.warn_once(f"STREX at 0x{pc:08x} to a traced address: not traced "
                                   "(its success is not in the log)")
            return
        for addr, size, value in store.accesses(regs):
            if emulated(addr):
                self.store_register(addr, size, value)
                continue
            for n, low, high, emits in self.comparators:
                if addr <= high and addr + size - 1 >= low and self.dwt_forwarded():
                    for what in emits:
                        if what == "pc":
                            self.emit(itm.dwt_pc(n, pc), "dwt_pc", self.count)
                        elif what == "addr":
                            self.emit(itm.dwt_addr(n, addr), "dwt_addr", self.count)
                        elif what == "match":
                            self.emit(itm.dwt_match(n), "dwt_match", self.count)
                        else:
                            self.emit(itm.dwt_data(n, True, size, value), "dwt_data", self.count)

    def instructions(self, pcs, records):
        """A batch of instructions that ran (qemu_log.CpuLog): pcs as hex, records their
        registers. As instruction() for each, with work only where there is some: stores, PC
        samples, syncs."""
        kinds = self.stores_hex
        for pc in set(pcs).difference(kinds):
            kinds[pc] = self.store_at(int(pc, 16)) is not None
        stores = [i for i, pc in enumerate(pcs) if kinds[pc]]
        stores.append(len(pcs))
        base = self.count
        n = len(pcs)
        s = 0
        i = 0
        while True:
            k = stores[s]
            if self.next_sample is not None:
                k = min(k, max(self.next_sample - base, i))
            if self.next_sync is not None:
                k = min(k, max(self.next_sync - base, i))
            if k >= n:
                self.count = base + n
                return
            self.count = base + k
            is_store = k == stores[s]
            self.instruction(int(pcs[k], 16),
                             qemu_log.record_registers(records[k]) if is_store else None)
            if is_store:
                s += 1
            i = k + 1

    def watched(self, addr, size):
        return any(addr <= high and addr + size - 1 >= low for _, low, high, _ in self.comparators)

    def stimulus(self, port, size, value):
        if self.itm_enabled() and self.reg(ITM_TER) & (1 << port):
            self.emit(itm.sw(port, size, value), "sw", self.count)

    def exception(self, number, action):
        if self.dwt_forwarded() and self.reg(DWT_CTRL) & (1 << 16):
            self.emit(itm.exception(number, action), "exception", self.count)

    def event(self, ev):
        kind = ev[0]
        if kind == "insns":
            self.instructions(ev[1], ev[2])
        elif kind == "insn":
            self.instruction(ev[1], ev[2])
        elif kind == "pending":  # entry (after a failed return: that exception exits first)
            if self.returning is not None:
                self.exception(self.returning, EXC_EXIT)
                if self.exc_stack:
                    self.exc_stack.pop()
                self.returning = None
            self.exc_stack.append(ev[1])
            self.exception(ev[1], EXC_ENTER)
        elif kind == "magic":
            self.returning = ev[2] if ev[2] is not None else (
                self.exc_stack[-1] if self.exc_stack else 0)
        elif kind == "return" or kind == "tailchain":
            if self.returning is not None:
                self.exception(self.returning, EXC_EXIT)
                if self.exc_stack:
                    self.exc_stack.pop()
                self.returning = None
                if kind == "return":
                    self.exception(self.exc_stack[-1] if self.exc_stack else 0, EXC_RETURN)
        elif kind == "reset":
            self.exc_stack, self.returning = [], None
        elif kind == "debugger":  # QEMU stopped here; a debugger's access
            Bridge.run(ev[1], self)

    def stats(self):
        return {"instructions": self.count, "packets": self.emitted, "dropped": self.dropped,
                "overflows": self.link.overflows if self.link else 0,
                "bytes": self.sinks.sent}


def read_chunk(fd, bridge):
    """The next chunk of QEMU's log (b"" at its end); with a bridge, None when only the
    debugger's side woke the reader (QEMU stopped for it: its accesses are due)."""
    if bridge is None:
        return os.read(fd, PIPE_SIZE)
    readable, _, _ = select.select([fd, bridge.wake_r], [], [])
    if bridge.wake_r in readable:
        os.read(bridge.wake_r, 4096)
    if fd not in readable:
        return None
    return bridge.read_log(PIPE_SIZE)


def log_lines(fd, between_chunks, copy, bridge=None):
    """QEMU's log, line by line; with a bridge, the debugger's accesses (tuples) where QEMU
    stopped for them."""
    rest = b""
    while True:
        chunk = read_chunk(fd, bridge)
        if chunk is None:
            yield from bridge.due()
            continue
        if not chunk:
            break
        if copy:
            copy.write(chunk)
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            yield part.decode("latin-1")
        between_chunks()
        if bridge is not None and not rest:
            yield from bridge.due()
    if rest:
        yield rest.decode("latin-1")


def register_log_events(fd, between_chunks, copy, code, bridge=None):
    """QEMU's register log (-d cpu,nochain,int) read in chunks as the events of
    qemu_log.CpuLog; a record cut by a chunk's end waits for the next chunk. With a bridge, the
    debugger's accesses ('debugger' events) where QEMU stopped for them; one that brings
    QEMU's registers at the stop first settles whether the last record ran (CpuLog.stopped)."""
    reader = qemu_log.CpuLog(code)
    rest = b""
    while True:
        chunk = read_chunk(fd, bridge)
        if chunk is None:
            if not rest:  # stopped: QEMU writes whole records
                yield from debugger_events(bridge.due(), reader)
            continue
        if not chunk:
            break
        if copy:
            copy.write(chunk)
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        start = data.rfind(qemu_log.RECORD, 0, cut)
        if start >= 0 and data.find(b"\nXPSR=", start, cut) < 0:
            cut = start  # the last record is not complete
        rest = data[cut:]
        try:
            yield from reader.feed(data[:cut])
        except ValueError as e:
            raise SystemExit(f"spoor vprobe: {e}")
        between_chunks()
        if bridge is not None and not rest:
            yield from debugger_events(bridge.due(), reader)
        if len(chunk) < PIPE_SIZE // 2:
            time.sleep(0.002)  # let the pipe fill: QEMU's writes then wake no reader
    if rest:
        yield from reader.feed(rest if rest.endswith(b"\n") else rest + b"\n")
    yield from reader.end()


def debugger_events(requests, reader):
    for request in requests:
        if request[1]["registers"] is not None:
            yield from reader.stopped(request[1]["registers"])
        yield request


PIPE_SIZE = 1 << 20
FULL_FLAGS = "exec,nochain,int,cpu"


def enlarge_pipe(fd):
    """Room for 1 MiB in the log pipe (F_SETPIPE_SZ, Linux), so QEMU seldom waits for the
    reader and the reader is not woken for every line; the default where not allowed."""
    import fcntl
    try:
        fcntl.fcntl(fd, 1031, PIPE_SIZE)
    except OSError:
        pass


def parse_set(text):
    name, sep, value = text.partition("=")
    if not sep:
        raise UsageError(f"--set {text}: REG=VALUE")
    try:
        addr = NAMES[name.upper()] if name.upper() in NAMES else int(name, 0)
        return addr, int(value, 0) & 0xFFFFFFFF
    except ValueError:
        raise UsageError(f"--set {text}: unknown register or bad number")


def arch_of(qemu):
    """v8m or v7m, from QEMU's -cpu or -M."""
    for flag in ("-cpu", "-M", "-machine"):
        if flag in qemu and qemu.index(flag) + 1 < len(qemu):
            name = qemu[qemu.index(flag) + 1].split(",")[0]
            return "v8m" if name in V8M_CPUS or name in V8M_MACHINES else "v7m"
    return "v7m"


def parse_args(argv):
    if "--" in argv:
        cut = argv.index("--")
        own, qemu = argv[:cut], argv[cut + 1:]
    else:
        own, qemu = argv, []
    if "-h" in own or "--help" in own:
        sys.stdout.write(HELP)
        raise SystemExit(0)
    ap = argparse.ArgumentParser(prog="spoor vprobe", add_help=False)
    ap.error = lambda message: (_ for _ in ()).throw(UsageError(message))
    ap.add_argument("-p", "--port", type=int, default=46000)
    ap.add_argument("-o", "--output")
    ap.add_argument("--shift", type=int, default=5)
    ap.add_argument("--gdb", type=int, default=3333)
    ap.add_argument("--gdb-log")
    ap.add_argument("--arch", choices=("v7m", "v8m"))
    ap.add_argument("--comparators", type=int, default=COMPARATORS)
    ap.add_argument("--elf")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--swo-baud", type=int)
    ap.add_argument("--swo-fifo", type=int, default=32)
    ap.add_argument("--tpiu", action="store_true")
    ap.add_argument("--wait-client", action="store_true")
    ap.add_argument("--stats")
    ap.add_argument("--keep-log")
    ap.add_argument("--full-log", action="store_true")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(own)
    if not qemu:
        raise UsageError("no QEMU command (give it after --)")
    for flag in ("-icount", "-singlestep", "-d", "-D", "-gdb", "-s", "-dfilter"):
        if flag in qemu:
            raise UsageError(f"the QEMU command has {flag}: the probe sets it")
    if not 0 <= args.shift <= 10:
        raise UsageError("--shift: 0 to 10")
    if args.swo_baud is not None and args.swo_baud <= 0:
        raise UsageError("--swo-baud: a positive baud rate")
    if args.swo_fifo < 8:
        raise UsageError("--swo-fifo: at least 8 bytes")
    if not 0 <= args.comparators <= COMPARATORS:
        raise UsageError(f"--comparators: 0 to {COMPARATORS}")
    if args.gdb_log and not args.gdb:
        raise UsageError("--gdb-log needs the GDB port (--gdb)")
    if args.arch is None:
        args.arch = arch_of(qemu)
    if args.wait_client and args.port == 0:
        raise UsageError("--wait-client needs the TCP server (--port)")
    if args.elf is None:
        if "-kernel" not in qemu or qemu.index("-kernel") + 1 >= len(qemu):
            raise UsageError("no firmware: give --elf or QEMU's -kernel")
        args.elf = qemu[qemu.index("-kernel") + 1]
    args.initial = [parse_set(s) for s in args.set]
    return args, qemu


class Terminated(Exception):
    """SIGTERM or SIGHUP arrived: stop QEMU, remove the socket folder, exit."""


def _terminated(signum, _frame):
    raise Terminated(signal.Signals(signum).name)


def _die_with_parent():
    """In QEMU's child process before exec: SIGKILL when the probe dies, however it dies
    (PR_SET_PDEATHSIG, Linux prctl(2)), and a process group of its own so that a terminal's
    Ctrl-C reaches the probe, which stops QEMU itself."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.setpgid(0, 0)


def stop_process(process, seconds=3.0):
    """Terminates process (SIGTERM, then SIGKILL after seconds) unless it has exited."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(argv):
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _terminated)
    try:
        args, qemu = parse_args(argv)
    except UsageError as e:
        warn(str(e))
        return 2
    if not os.path.isfile(args.elf):
        warn(f"{args.elf}: no such file")
        return 2
    code = qemu_log.Code(args.elf)
    hz = 1e9 / (1 << args.shift)
    initial = dict(args.initial)
    tpiu_id = ((initial.get(ITM_TCR, 0) >> 16) & 0x7F or 1) if args.tpiu else None
    try:
        sinks = Sinks(args.port or None, args.output, tpiu_id)
    except (UsageError, OSError) as e:
        warn(str(e))
        return 2
    link = None
    if args.swo_baud:
        link = itm.SwoLink(args.swo_baud, hz, args.swo_fifo, 16 / 14 if args.tpiu else 1.0)
    probe = Probe(code, sinks, link, args.initial, args.arch, args.comparators)
    read_fd, write_fd = os.pipe()
    enlarge_pipe(read_fd)
    # The register log (qemu_log.CpuLog: one write a record, no "Trace" line), where QEMU's
    # registers at a debugger's stop say whether the last record ran; --full-log: the full log,
    # whose "Trace" and "Stopped" lines say it (docs/vprobe.md, "QEMU's log").
    flags = FULL_FLAGS if args.full_log else qemu_log.CPU_FLAGS
    command = qemu + ["-icount", f"shift={args.shift},sleep=off", "-singlestep",
                      "-d", flags, "-D", f"/dev/fd/{write_fd}"]
    bridge = proxy = gdb_log = None
    socket_dir = None
    if args.gdb:  # QEMU's gdbstub on a private socket, the proxy on the port
        socket_dir = tempfile.mkdtemp(prefix="spoor-vprobe-")
        gdbstub = os.path.join(socket_dir, "gdbstub")
        command += ["-gdb", f"unix:{gdbstub},server=on,wait=off"]
        bridge = Bridge(read_fd)
        if args.gdb_log:
            gdb_log = open(args.gdb_log, "w", buffering=1)
        try:
            proxy = Proxy(args.gdb, gdbstub, bridge,
                          (lambda text: gdb_log.write(text + "\n")) if gdb_log else None)
        except OSError as e:
            warn(f"--gdb 127.0.0.1:{args.gdb}: {e.strerror}")
            shutil.rmtree(socket_dir, ignore_errors=True)
            return 2
    if not args.quiet:
        where = [f"tcp 127.0.0.1:{sinks.port}"] if sinks.port else []
        where += [args.output] if args.output else []
        warn(f"cpu clock {hz:.0f} Hz (-icount shift={args.shift}); trace to "
             f"{', '.join(where) or 'nowhere'}" + (f"; gdb on 127.0.0.1:{args.gdb}" if args.gdb
                                                  else ""))
    if args.wait_client:
        sinks.wait_client()
    started = time.monotonic()
    process = None
    terminated = None
    try:
        try:
            process = subprocess.Popen(command, pass_fds=(write_fd,),
                                       preexec_fn=_die_with_parent)
        except OSError as e:
            warn(f"{command[0]}: {e.strerror}")
            return 2
        os.close(write_fd)
        if proxy:
            proxy.start()
        copy = open(args.keep_log, "wb") if args.keep_log else None
        try:
            if args.full_log:
                events = qemu_log.events(log_lines(read_fd, sinks.push, copy, bridge),
                                         probe.wants_regs)
            else:
                events = register_log_events(read_fd, sinks.push, copy, code, bridge)
            for ev in events:
                probe.event(ev)
        except KeyboardInterrupt:
            terminated = "SIGINT"
        except Terminated as e:
            terminated = str(e)
        if terminated:
            stop_process(process)
        if bridge:
            bridge.close()
        if gdb_log:
            gdb_log.close()
        probe.flush()
        sinks.close()
        if copy:
            copy.close()
        status = process.wait()
    finally:  # every exit path: no QEMU left running, no socket folder left behind
        if process is not None:
            stop_process(process)
        if proxy:
            proxy.stop()
        if socket_dir:
            shutil.rmtree(socket_dir, ignore_errors=True)
    if terminated:
        warn(f"stopped by {terminated}")
    seconds = time.monotonic() - started
    stats = probe.stats()
    stats.update({"seconds": round(seconds, 3), "cpu_hz": hz, "qemu_status": status})
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(stats, f, indent=1)
    if not args.quiet:
        rate = probe.count / seconds if seconds > 0 else 0
        drops = sum(probe.dropped.values())
        warn(f"{probe.count} instructions in {seconds:.1f} s ({rate:.0f}/s), "
             f"{sum(probe.emitted.values())} packets, {sinks.sent} bytes"
             + (f", {drops} packets dropped ({stats['overflows']} overflows)" if link else ""))
    if status != 0:
        warn(f"QEMU exited with status {status}")
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(run(sys.argv[1:]))
    except Terminated as e:  # arrived after QEMU's end: it is stopped and cleaned up already
        warn(f"stopped by {e}")
        sys.exit(128 + signal.SIGTERM)
