"""gdb command `mtb`: the Micro Trace Buffer of the target gdb is attached to, decoded by spoor.

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
