"""QEMU's execution log as events: the one reader of the virtual MTB (tools/virtual_mtb.py) and
the virtual trace probe (tools/vprobe.py).

The log is the one of
    qemu-system-arm -icount shift=N -singlestep -d exec,nochain,int[,cpu] -D LOG ...
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


def read_log(path, wants_regs=None):
    """All events of a log file (see events())."""
    with open(path, encoding="utf-8", errors="replace") as log:
        return list(events(log, wants_regs))
