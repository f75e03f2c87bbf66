"""QEMU's execution log as events: the one reader of the virtual MTB (tools/virtual_mtb.py) and
the virtual trace probe (tools/vprobe.py).

The log is the one of
    qemu-system-arm -icount shift=N -singlestep -d exec,nochain,int[,cpu] -D LOG ...
(or, read by CpuLog below, the register log of -d cpu,nochain,int without exec)
(QEMU 7.2): with -singlestep every block is one instruction, so every "Trace" line is one
instruction and their count is the instruction count; with `cpu` each is followed by the
register state before that instruction ran.

Read with care:
  * "Trace N: HOST [.../PC/...]" is printed when a one-instruction block starts;
  * "cpu_io_recompile: rewound execution of TB to PC" and "Stopped execution of TB chain before
    ... [PC]" mean the block just logged for PC did not run (it is logged again when it does);
  * an instruction that faults (undefined, data abort, stack limit, ...) is logged but does not
    retire: the exception's preferred return address is that instruction;
  * "Taking exception 16 [Semihosting call]" is a BKPT 0xAB that QEMU serviced: execution goes on
    at the next instruction, no change of flow;
  * "...taking pending (non)secure exception N" names the exception (its architectural number)
    being entered, for every entry including tail-chains; "Exception return: magic PC V previous
    exception N" starts the return from N, "...successful exception return" or
    "...tailchaining to pending exception" ends it.

Events (tuples, first element the kind):
  ('insn', pc, regs)     an instruction that ran; regs = (r0..r15, xpsr) before it ran when the
                         caller asked for them at pc and the log has them, else None
  ('exc', number)        "Taking exception": QEMU's exception number (EXCP_* below)
  ('pending', number)    the architectural exception number being entered
  ('fault_address', a)   ('loaded', pc)  ('magic', value, previous exception)
  ('return',)  ('tailchain',)  ('reset',)
"""

import re
import struct

TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
REWOUND = re.compile(r"^cpu_io_recompile: rewound execution of TB to ([0-9a-f]+)")
STOPPED = re.compile(r"^Stopped execution of TB chain before 0x[0-9a-f]+ \[([0-9a-f]+)\]")
TAKING = re.compile(r"^Taking exception (\d+) \[([^\]]*)\]")
PENDING = re.compile(r"^\.\.\.taking pending (?:non)?secure exception (\d+)")
FAULT_ADDRESS = re.compile(r"^\.\.\.at fault address (0x[0-9a-f]+)")
LOADED = re.compile(r"^\.\.\.loaded new PC (0x[0-9a-fA-F]+)")
MAGIC = re.compile(r"^Exception return: magic PC ([0-9a-f]+)(?: previous exception (\d+))?")
REGISTER = re.compile(r"R(\d\d)=([0-9a-f]{8})")
XPSR = re.compile(r"^XPSR=([0-9a-f]{8})")
RETURN_OK = "...successful exception return"
TAILCHAIN = "...tailchaining to pending exception"
RESET = re.compile(r"^Loaded reset SP")

# QEMU's exception numbers (target/arm/cpu.h) that are not faults of the logged instruction
EXCP_SWI, EXCP_PREFETCH_ABORT, EXCP_IRQ, EXCP_EXCEPTION_EXIT, EXCP_SEMIHOST = 2, 3, 5, 8, 16


class Code:
    """The ELF's loadable bytes, for Thumb instruction sizes and decoding."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 1:
            raise SystemExit(f"{path}: not a 32-bit ELF")
        phoff, = struct.unpack_from("<I", data, 28)
        phentsize, phnum = struct.unpack_from("<HH", data, 42)
        self.segments = []
        for i in range(phnum):
            p_type, off, vaddr, paddr, filesz = struct.unpack_from("<5I", data, phoff + i * phentsize)
            if p_type == 1 and filesz:
                self.segments.append((vaddr, data[off:off + filesz]))
        self.path = path

    def halfword(self, addr):
        for base, blob in self.segments:
            if base <= addr and addr + 2 <= base + len(blob):
                return struct.unpack_from("<H", blob, addr - base)[0]
        return None

    def size(self, addr):
        hw = self.halfword(addr)
        if hw is None:
            return None
        return 4 if (hw >> 11) >= 0x1D else 2


def _registers(lines):
    regs = [0] * 17
    for line in lines:
        if line.startswith("XPSR="):
            regs[16] = int(line[5:13], 16)
        else:
            for n, v in REGISTER.findall(line):
                regs[int(n)] = int(v, 16)
    return tuple(regs)


def events(lines, wants_regs=None):
    """The log's lines (an iterable of str) as events, in order. Instructions that did not run
    are taken out: an instruction and what follows it are held until the next "Trace" line or
    the end. wants_regs(pc) -> bool: parse the register state logged for the instruction at pc
    (-d cpu) into its event. A tuple among the lines is an event of the caller's, yielded in
    its place; it says QEMU is stopped there (the log is complete up to it), so the held
    instruction is yielded before it."""
    held = []          # the last instruction and the events after it
    cpu_lines = None   # register lines of the held instruction, when wanted
    for line in lines:
        if isinstance(line, tuple):  # the caller's own event: QEMU is stopped here (vprobe)
            if held:
                if cpu_lines:
                    held[0] = ("insn", held[0][1], _registers(cpu_lines))
                yield from held
            held, cpu_lines = [], None
            yield line
            continue
        first = line[:1]
        if first == "R" or first == "X":
            if cpu_lines is not None and (line[1:2].isdigit() or line.startswith("XPSR")):
                cpu_lines.append(line)
            continue
        if first == "T" and line.startswith("Trace "):
            m = TRACE.match(line)
            if m:
                if held:
                    if cpu_lines:
                        held[0] = ("insn", held[0][1], _registers(cpu_lines))
                    yield from held
                pc = int(m.group(1), 16)
                held = [("insn", pc, None)]
                cpu_lines = [] if wants_regs is not None and wants_regs(pc) else None
                continue
        m = REWOUND.match(line) or STOPPED.match(line)
        if m:
            pc = int(m.group(1), 16)
            if held and held[0][0] == "insn" and held[0][1] == pc:
                del held[0]  # did not run; logged again when it does
                cpu_lines = None
            continue
        event = _other(line)
        if event is None:
            continue
        if held:
            held.append(event)
        else:
            yield event
    if held:
        if cpu_lines and held[0][0] == "insn":
            held[0] = ("insn", held[0][1], _registers(cpu_lines))
        yield from held


def _other(line):
    m = TAKING.match(line)
    if m:
        return ("exc", int(m.group(1)))
    m = PENDING.match(line)
    if m:
        return ("pending", int(m.group(1)))
    m = FAULT_ADDRESS.match(line)
    if m:
        return ("fault_address", int(m.group(1), 16))
    m = LOADED.match(line)
    if m:
        return ("loaded", int(m.group(1), 16) & ~1)
    m = MAGIC.match(line)
    if m:
        return ("magic", int(m.group(1), 16), int(m.group(2)) if m.group(2) else None)
    if line.startswith(RETURN_OK):
        return ("return",)
    if line.startswith(TAILCHAIN):
        return ("tailchain",)
    if RESET.match(line):
        return ("reset",)
    return None


# ---- the register log: -d cpu,nochain,int without exec
#
# With `cpu` and without `exec` QEMU writes one record per one-instruction block it starts (one
# write(2) instead of two, and no "Trace" line): R00-R15 in four lines, then the XPSR line. The
# exec-only lines saying a block did not run ("rewound", "Stopped execution") are not written,
# so which records did not run is read from what follows them. QEMU 7.2 (accel/tcg/cpu-exec.c,
# cpu_io_recompile) starts a block again, its record written again with the same registers,
# when it did not run because
#   * the instruction accesses I/O memory: the block is rewound before the access and runs at
#     once as the last block of its I/O group (an identical record follows);
#   * the instruction budget ran out before it (-icount: a timer is due, or the budget is
#     refilled every 65535 instructions), or QEMU was asked to stop: either QEMU goes on with
#     the same block (an identical record follows) or it takes the interrupt that became due
#     ("Taking exception 5 [IRQ]" follows the record).
# So, exactly for every instruction but a branch to itself:
#   1. a record followed by an identical one did not run, unless its instruction is a branch to
#      itself (B . loops: each record ran; one that did not run at a budget refill or a stop
#      without an interrupt is counted, the one case this log cannot tell);
#   2. a record followed by "Taking exception 5" did not run, unless it is the second of two
#      identical records (an I/O access that ran and made the interrupt pending, e.g. a store
#      to ICSR) or an instruction that unmasks interrupts (CPSIE, MSR PRIMASK/FAULTMASK with
#      bit 0 clear, MSR BASEPRI with 0) or waits for one (WFI, WFE);
#   3. every other record ran.
# tests/e2e/test_vprobe_cpu_log.py checks these rules against QEMU's full log.

CPU_FLAGS = "cpu,nochain,int"
SPECIAL_LINE = re.compile(rb"\n(?!R\d\d=|XPSR=)[^\n]+")  # after a newline: not a register line
RECORD = b"R00="
RECORD_PC = slice(195, 203)  # in a record without its "R00=": "R15=" at 191, the XPSR line at 204
REGISTER_B = re.compile(rb"R(\d\d)=([0-9a-f]{8})")


def record_registers(record):
    """(r0..r15, xpsr) of a record (its text after "R00=")."""
    regs = [0] * 17
    regs[0] = int(record[:8], 16)
    for n, v in REGISTER_B.findall(record):
        regs[int(n)] = int(v, 16)
    regs[16] = int(record[209:217], 16)
    return tuple(regs)


class CpuLog:
    """The register log (-d cpu,nochain,int) as events: feed() takes complete lines (bytes, a
    record never cut) and returns the events they complete, the instructions that ran in
    batches ('insns', pcs, records): pcs the PCs as 8 hex digits (bytes), records their
    register text (record_registers). Other events as events() gives them."""

    def __init__(self, code):
        self.code = code
        self.pending = None  # the last record, not yet known to have run
        self.pending_again = False  # it is the second of two identical records
        self.kinds = {}  # pc (hex) -> 'self' (branch to itself), 'release', 'msr' or None

    def kind(self, pc):
        kind = self.kinds.get(pc, 0)
        if kind == 0:
            kind = self.kinds[pc] = _kind(self.code, int(pc, 16))
        return kind

    def _ran_before_interrupt(self, record):
        if self.pending_again:
            return True
        kind = self.kind(record[RECORD_PC])
        if kind == "release":
            return True
        if kind is None or kind == "self":
            return False
        sysm, rn = kind[1], kind[2]  # MSR: what it writes decides
        value = record_registers(record)[rn]
        return (value & 1) == 0 if sysm in (16, 19) else (value & 0xFF) == 0

    def feed(self, data):
        out = []
        pos = 0
        if data[:1] and data[:4] != RECORD and not data.startswith(b"XPSR="):
            end = data.find(b"\n")
            self._special(data[:end if end >= 0 else len(data)], out)
            pos = end + 1 if end >= 0 else len(data)
        for m in SPECIAL_LINE.finditer(data, max(pos - 1, 0)):
            if m.start() + 1 > pos:
                self._records(data[pos:m.start() + 1], out)
            self._special(m.group()[1:], out)
            pos = m.end() + 1
        if pos < len(data):
            self._records(data[pos:], out)
        return out

    def stopped(self, registers):
        """QEMU is stopped for a debugger, the log complete up to here; registers: its r0..r15
        now (the gdbstub's). The events that completes: the last record ran unless QEMU's
        registers are still the ones it logged (it stopped before running it and logs it
        again when it does). A branch to itself looks the same either way: taken as not run."""
        out = []
        if self.pending is not None:
            if record_registers(self.pending)[:16] != tuple(registers[:16]):
                out.append(("insns", [self.pending[RECORD_PC]], [self.pending]))
            self.pending, self.pending_again = None, False
        return out

    def end(self):
        """The events after the last line: the last record ran."""
        out = []
        if self.pending is not None:
            out.append(("insns", [self.pending[RECORD_PC]], [self.pending]))
            self.pending = None
        return out

    def _records(self, text, out):
        records = text.split(RECORD)
        if records[0]:
            raise ValueError(f"QEMU's register log: unexpected text {records[0][:60]!r}")
        records[0] = self.pending
        if records[0] is None:
            del records[0]
        for r in records:
            if r[191:195] != b"R15=" or r[204:209] != b"XPSR=":
                raise ValueError(f"QEMU's register log: not a register record: {r[:60]!r}")
        last = len(records) - 1
        again = [i for i in range(last) if records[i] == records[i + 1]]
        ran = records
        pending_again = self.pending_again if last == 0 else False
        if again:
            cancelled = set()
            for i in again:
                if self.kind(records[i][RECORD_PC]) != "self":
                    cancelled.add(i)
            ran = [r for i, r in enumerate(records) if i not in cancelled]
            pending_again = last - 1 in cancelled
        self.pending, self.pending_again = ran[-1], pending_again
        ran = ran[:-1]
        if ran:
            out.append(("insns", [r[RECORD_PC] for r in ran], ran))

    def _special(self, line, out):
        if self.pending is not None:
            if not (line.startswith(b"Taking exception 5 ") and
                    not self._ran_before_interrupt(self.pending)):
                out.append(("insns", [self.pending[RECORD_PC]], [self.pending]))
            self.pending, self.pending_again = None, False
        event = _other(line.decode("latin-1"))
        if event is not None:
            out.append(event)


def _kind(code, pc):
    """'self' for a branch to itself, 'release' for CPSIE/WFI/WFE, ('msr', SYSm, Rn) for an MSR
    to PRIMASK, BASEPRI or FAULTMASK, else None (ARMv7-M ARM A7.7)."""
    hw1 = code.halfword(pc)
    if hw1 is None:
        return None
    if hw1 >> 11 < 0x1D:
        if hw1 == 0xE7FE or (hw1 & 0xF0FF == 0xD0FE and (hw1 >> 8) & 0xF < 0xE):
            return "self"  # B . and B<c> . (offset -4 from PC + 4)
        if hw1 & 0xFFF8 == 0xB660 or hw1 in (0xBF20, 0xBF30):
            return "release"  # CPSIE, WFE, WFI
        return None
    hw2 = code.halfword(pc + 2)
    if hw2 is None:
        return None
    if (hw1, hw2) == (0xF7FF, 0xBFFE) or (hw1 & 0xFC3F == 0xF43F and hw2 == 0xAFFE
                                        and (hw1 >> 6) & 0xF < 0xE):
        return "self"  # B.W . and B<c>.W .
    if hw1 == 0xF3AF and hw2 in (0x8002, 0x8003):
        return "release"  # WFE.W, WFI.W
    if hw1 & 0xFFF0 == 0xF380 and hw2 & 0xFF00 == 0x8800 and (hw2 & 0xFF) in (16, 17, 19):
        return ("msr", hw2 & 0xFF, hw1 & 0xF)
    return None


def read_log(path, wants_regs=None):
    """All events of a log file (see events())."""
    with open(path, encoding="utf-8", errors="replace") as log:
        return list(events(log, wants_regs))
