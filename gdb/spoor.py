"""gdb commands for spoor. `mtb`: the Micro Trace Buffer of the target gdb is attached to, decoded
by spoor; `spoor-snapshot DIR`: the stopped target saved as the --regs/--mem input of spoor crash.

    (gdb) source gdb/spoor.py
    (gdb) mtb --limit 20
    (gdb) mtb --flow
    (gdb) mtb --mtb-regs 0x40006000      # an MTB-M0+ register block (vendor address)
    (gdb) mtb --freeze                   # stop the MTB while it is read, restore MASTER after

gdb reads the register block (POSITION, MASTER, FLOW, BASE) and the buffer it describes from
the target; the bytes go to `spoor mtb -e <the loaded ELF> --mem ...` (docs/mtb.md) and its
output is printed here. The spoor program is $SPOOR_BIN, or `spoor` on the PATH. Stop the
target first, or give --freeze: a running MTB moves on while it is read. --freeze does what
`spoor mtb --freeze` does: MASTER is written with EN [31] and TSTARTEN [5] clear before the rest
of the block and the buffer are read, and written back as it was afterwards (also when reading
fails); the trace is decoded with MASTER as found.
"""
import argparse
import os
import shlex
import struct
import subprocess
import tempfile

import gdb  # noqa: F401  (only inside gdb)

M33_REGISTERS = 0xE0043000
MASTER_EN = 1 << 31
MASTER_TSTARTEN = 1 << 5


def _read(address, length):
    return bytes(gdb.selected_inferior().read_memory(address, length))


def _write_u32(address, value):
    gdb.selected_inferior().write_memory(address, struct.pack("<I", value))


def _read_trace(regs_at):
    """The register block (16 bytes) and (start, bytes) of the buffer it describes."""
    regs = _read(regs_at, 16)
    position, master, _, base = struct.unpack("<4I", regs)
    size = 1 << ((master & 0x1F) + 4)
    if size > (16 << 20):
        raise gdb.GdbError(f"mtb: MTB_MASTER.MASK {master & 0x1F} is beyond 16 MiB")
    start = base + ((position & ~7) & ~(size - 1))
    return regs, start, _read(start, size)


def _read_frozen(regs_at):
    """_read_trace with the MTB stopped: MASTER as found goes into the block."""
    master_at = regs_at + 4
    (master,) = struct.unpack("<I", _read(master_at, 4))
    stopped = master & ~(MASTER_EN | MASTER_TSTARTEN)
    if stopped == master:
        return _read_trace(regs_at)
    _write_u32(master_at, stopped)
    try:
        regs, start, buffer = _read_trace(regs_at)
    finally:
        _write_u32(master_at, master)
    return regs[:4] + struct.pack("<I", master) + regs[8:], start, buffer


class MtbCommand(gdb.Command):
    """Decode the Micro Trace Buffer with spoor: mtb [--limit N] [--flow] [--calls] [--json]
[--mtb-regs ADDR] [--freeze]"""

    def __init__(self):
        super().__init__("mtb", gdb.COMMAND_DATA)

    def invoke(self, argument, from_tty):
        parser = argparse.ArgumentParser(prog="mtb", add_help=False)
        parser.add_argument("-n", "--limit", type=int)
        parser.add_argument("--flow", action="store_true")
        parser.add_argument("--calls", action="store_true")
        parser.add_argument("-j", "--json", action="store_true")
        parser.add_argument("--mtb-regs", type=lambda s: int(s, 0), default=M33_REGISTERS)
        parser.add_argument("--freeze", action="store_true")
        try:
            args = parser.parse_args(shlex.split(argument))
        except SystemExit:
            raise gdb.GdbError("usage: mtb [--limit N] [--flow] [--calls] [--json] "
                               "[--mtb-regs ADDR] [--freeze]")
        elf = gdb.current_progspace().filename
        if not elf:
            raise gdb.GdbError("mtb: no ELF loaded (file FW.elf)")
        regs, start, buffer = (_read_frozen if args.freeze else _read_trace)(args.mtb_regs)
        spoor = os.environ.get("SPOOR_BIN", "spoor")
        with tempfile.TemporaryDirectory() as tmp:
            regs_file = os.path.join(tmp, "regs.bin")
            buffer_file = os.path.join(tmp, "buffer.bin")
            with open(regs_file, "wb") as f:
                f.write(regs)
            with open(buffer_file, "wb") as f:
                f.write(buffer)
            command = [spoor, "mtb", "-e", elf, "--mtb-regs", hex(args.mtb_regs),
                       "--mem", f"{args.mtb_regs:#x}:{regs_file}",
                       "--mem", f"{start:#x}:{buffer_file}"]
            if args.limit:
                command += ["--limit", str(args.limit)]
            command += [flag for flag, on in (("--flow", args.flow), ("--calls", args.calls),
                                              ("--json", args.json)) if on]
            result = subprocess.run(command, capture_output=True, text=True)
        gdb.write(result.stdout)
        if result.returncode != 0:
            raise gdb.GdbError(result.stderr.strip())


MtbCommand()


# ---------------------------------------------------------------- spoor-snapshot

SNAPSHOT_REGISTERS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
# Known only when the GDB server gives them (OpenOCD, J-Link do; QEMU's gdbstub does not).
SNAPSHOT_OPTIONAL = ["msp", "psp", "control", "msplim", "psplim"]
SHF_WRITE, SHF_ALLOC = 0x1, 0x2
SCS_PAGE = 0xE000ED00


def _writable_regions(elf):
    """(address, size) of the ELF's allocated writable sections (.stack, .data, .bss, .noinit,
    ...), sections closer than 256 bytes merged into one region."""
    with open(elf, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise gdb.GdbError(f"spoor-snapshot: {elf}: not a 32-bit little-endian ELF")
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections = []
    for i in range(shnum):
        _, _, flags, addr, _, size = struct.unpack_from("<IIIIII", data, shoff + i * shentsize)
        if flags & SHF_ALLOC and flags & SHF_WRITE and size:
            sections.append((addr, addr + size))
    regions = []
    for start, end in sorted(sections):
        if regions and start - regions[-1][1] < 256:
            regions[-1][1] = max(regions[-1][1], end)
        else:
            regions.append([start, end])
    return [(start, end - start) for start, end in regions]


class SnapshotCommand(gdb.Command):
    """Save the stopped target for spoor crash: spoor-snapshot [--scs] DIR

Writes DIR/regs.json (the registers of the innermost frame, the --regs format) and one raw
image DIR/ADDR.bin per RAM region the ELF's writable sections occupy (.stack, .data, .bss,
.noinit, ...), then prints the spoor crash command that reads them. --scs also saves the
System Control Space page (0xE000ED00, 256 bytes: the fault status registers)."""

    def __init__(self):
        super().__init__("spoor-snapshot", gdb.COMMAND_DATA, gdb.COMPLETE_FILENAME)

    def invoke(self, argument, from_tty):
        words = shlex.split(argument)
        scs = "--scs" in words
        words = [w for w in words if w != "--scs"]
        if len(words) != 1:
            raise gdb.GdbError("usage: spoor-snapshot [--scs] DIR")
        directory = words[0]
        elf = gdb.current_progspace().filename
        if not elf:
            raise gdb.GdbError("spoor-snapshot: no ELF loaded (file FW.elf)")
        frame = gdb.newest_frame()
        regs = {}
        for name in SNAPSHOT_REGISTERS + SNAPSHOT_OPTIONAL:
            try:
                value = int(frame.read_register(name)) & 0xFFFFFFFF
            except (gdb.error, ValueError):
                if name in SNAPSHOT_OPTIONAL:
                    continue
                raise gdb.GdbError(f"spoor-snapshot: register {name} cannot be read")
            regs[name] = f"0x{value:08x}"
        images = []
        for address, size in _writable_regions(elf):
            images.append((address, _read(address, size)))
        if scs:
            images.append((SCS_PAGE, _read(SCS_PAGE, 0x100)))
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "regs.json"), "w") as f:
            items = [f'"{name}": "{value}"' for name, value in regs.items()]
            f.write("{" + ",\n ".join(", ".join(items[i:i + 4])
                                      for i in range(0, len(items), 4)) + "}\n")
        command = ["spoor", "crash", "-e", elf, "--regs", os.path.join(directory, "regs.json")]
        for address, image in images:
            path = os.path.join(directory, f"0x{address:08x}.bin")
            with open(path, "wb") as f:
                f.write(image)
            command += ["--mem", f"0x{address:08x}:{path}"]
        gdb.write(" ".join(shlex.quote(word) for word in command) + "\n")


SnapshotCommand()
