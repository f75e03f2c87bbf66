"""gdb command `mtb`: the Micro Trace Buffer of the target gdb is attached to, decoded by spoor.

    (gdb) source gdb/spoor.py
    (gdb) mtb --limit 20
    (gdb) mtb --flow
    (gdb) mtb --mtb-regs 0x40006000      # an MTB-M0+ register block (vendor address)

gdb reads the register block (POSITION, MASTER, FLOW, BASE) and the buffer it describes from
the target; the bytes go to `spoor mtb -e <the loaded ELF> --mem ...` (docs/mtb.md) and its
output is printed here. The spoor program is $SPOOR_BIN, or `spoor` on the PATH. Stop the
target first: a running MTB moves on while it is read.
"""
import argparse
import os
import shlex
import struct
import subprocess
import tempfile

import gdb  # noqa: F401  (only inside gdb)

M33_REGISTERS = 0xE0043000


def _read(address, length):
    return bytes(gdb.selected_inferior().read_memory(address, length))


class MtbCommand(gdb.Command):
    """Decode the Micro Trace Buffer with spoor: mtb [--limit N] [--flow] [--calls] [--json]
[--mtb-regs ADDR]"""

    def __init__(self):
        super().__init__("mtb", gdb.COMMAND_DATA)

    def invoke(self, argument, from_tty):
        parser = argparse.ArgumentParser(prog="mtb", add_help=False)
        parser.add_argument("-n", "--limit", type=int)
        parser.add_argument("--flow", action="store_true")
        parser.add_argument("--calls", action="store_true")
        parser.add_argument("-j", "--json", action="store_true")
        parser.add_argument("--mtb-regs", type=lambda s: int(s, 0), default=M33_REGISTERS)
        try:
            args = parser.parse_args(shlex.split(argument))
        except SystemExit:
            raise gdb.GdbError("usage: mtb [--limit N] [--flow] [--calls] [--json] "
                               "[--mtb-regs ADDR]")
        elf = gdb.current_progspace().filename
        if not elf:
            raise gdb.GdbError("mtb: no ELF loaded (file FW.elf)")
        regs = _read(args.mtb_regs, 16)
        position, master, _, base = struct.unpack("<4I", regs)
        size = 1 << ((master & 0x1F) + 4)
        if size > (16 << 20):
            raise gdb.GdbError(f"mtb: MTB_MASTER.MASK {master & 0x1F} is beyond 16 MiB")
        start = base + ((position & ~7) & ~(size - 1))
        buffer = _read(start, size)
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
