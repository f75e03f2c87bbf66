"""Every command that reads a dump with an ELF says so when the dump comes from another build:
spoor crash, calls, mtb, gdbserver and top print the same one-line warning on stderr and go on.

The dumps are real (QEMU runs examples/calls_trace, which faults with its call ring in the dump,
and examples/mtb, whose fault handler copies a register block and buffer loaded into its fake
MTB area into the dump's MTB record). A copy of each has its BUILD_ID record's bytes changed and
its CRC fixed (docs/dump-format.md): with the firmware's own ELF, every command warns with the
altered id and the ELF's id as `arm-none-eabi-readelf -n` prints it, and its output on stdout
is the same as for the unaltered dump, which gives no warning.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
BUILD_ID = 4  # record type (docs/dump-format.md)
MTB_AREA, MTB_BUFFER = 0x20100000, 0x20101000  # examples/mtb on the M3 (tests/e2e/test_mtb.py)


def run_spoor(*args, timeout=60):
    return subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def qemu(elf, machine, semihosting_args, extra=()):
    command = harness.qemu_command(elf, machine, semihosting_args=semihosting_args) + list(extra)
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"{elf}: QEMU: {result.stdout}{result.stderr}")


def elf_build_id(elf):
    out = subprocess.run([harness.require_tool("arm-none-eabi-readelf"), "-n", str(elf)],
                         check=True, capture_output=True, text=True).stdout
    match = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not match:
        raise AssertionError(f"{elf} has no build-id note")
    return match.group(1)


def other_build(dump, out):
    """A copy of dump whose BUILD_ID bytes are inverted, CRC fixed; returns the new id (hex)."""
    data = bytearray(dump.read_bytes())
    magic, _, header_size, total, _ = struct.unpack_from("<IHHII", data, 0)
    assert magic == 0x4D445053, dump
    at = header_size
    while at < total:
        rtype, _, length = struct.unpack_from("<HHI", data, at)
        if rtype == BUILD_ID:
            for i in range(at + 8, at + 8 + length):
                data[i] ^= 0xFF
            struct.pack_into("<I", data, 12, zlib.crc32(bytes(data[:12] + data[16:total])))
            out.write_bytes(bytes(data))
            return bytes(data[at + 8:at + 8 + length]).hex()
        if rtype == 0:
            break
        at += 8 + ((length + 3) & ~3)
    raise AssertionError(f"{dump}: no BUILD_ID record")


def warning(command, dump_id, elf_id):
    return (f"spoor {command}: WARNING: build-id mismatch: the dump is from {dump_id}, the ELF "
            f"is {elf_id}; names and lines may be wrong")


class BuildIdMismatch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.calls_elf, machine = harness.example("calls_trace", "m3")
        cls.calls_dump = d / "calls.dump"
        qemu(cls.calls_elf, machine, f"arg=calls_trace,arg=fault,arg={cls.calls_dump}")
        # a 32-byte buffer (MASK 1) with two packets in the fake MTB area: main -> infinite_loop,
        # back
        cls.mtb_elf, machine = harness.example("mtb", "m3")
        symbols = harness.symbol_addresses(cls.mtb_elf)
        src, dst = symbols["main"] & ~1, symbols["infinite_loop"] & ~1
        (d / "regs.bin").write_bytes(struct.pack("<4I", 16, 0x80000001, 0, MTB_BUFFER))
        (d / "buf.bin").write_bytes(struct.pack("<4I", src, dst | 1, dst + 2, src + 4) + bytes(16))
        cls.mtb_dump = d / "mtb.dump"
        qemu(cls.mtb_elf, machine, f"arg=mtb,arg=loop,arg={cls.mtb_dump}",
             ["-device", f"loader,file={d / 'regs.bin'},addr={MTB_AREA:#x},force-raw=on",
              "-device", f"loader,file={d / 'buf.bin'},addr={MTB_BUFFER:#x},force-raw=on"])
        cls.calls_other = d / "calls-other.dump"
        cls.calls_other_id = other_build(cls.calls_dump, cls.calls_other)
        cls.mtb_other = d / "mtb-other.dump"
        cls.mtb_other_id = other_build(cls.mtb_dump, cls.mtb_other)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, command, elf, dump, other, other_id, *options):
        good = run_spoor(command, "-e", elf, *options, dump)
        self.assertEqual(good.returncode, 0, good.stderr)
        self.assertNotIn("build-id", good.stderr)
        self.assertNotEqual(good.stdout, "")
        bad = run_spoor(command, "-e", elf, *options, other)
        self.assertEqual(bad.returncode, 0, bad.stderr)
        self.assertEqual(bad.stderr.splitlines(),
                         [warning(command, other_id, elf_build_id(elf))])
        self.assertEqual(bad.stdout, good.stdout)

    def test_ids_differ(self):
        self.assertNotEqual(self.calls_other_id, elf_build_id(self.calls_elf))
        self.assertNotEqual(self.mtb_other_id, elf_build_id(self.mtb_elf))

    def test_crash(self):
        self.check("crash", self.calls_elf, self.calls_dump, self.calls_other,
                   self.calls_other_id)

    def test_calls(self):
        self.check("calls", self.calls_elf, self.calls_dump, self.calls_other,
                   self.calls_other_id)
        self.check("calls", self.calls_elf, self.calls_dump, self.calls_other,
                   self.calls_other_id, "--json")

    def test_mtb(self):
        self.check("mtb", self.mtb_elf, self.mtb_dump, self.mtb_other, self.mtb_other_id)
        self.check("mtb", self.mtb_elf, self.mtb_dump, self.mtb_other, self.mtb_other_id,
                   "--flow")

    def test_gdbserver(self):
        for dump, want in ((self.calls_dump, []),
                           (self.calls_other, [warning("gdbserver", self.calls_other_id,
                                                       elf_build_id(self.calls_elf))])):
            server = subprocess.Popen([SPOOR, "gdbserver", "-e", self.calls_elf, "--port", "0",
                                       dump], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
            try:
                line = server.stdout.readline()
                self.assertRegex(line, r"^listening on 127\.0\.0\.1:\d+$")
            finally:
                server.kill()
                _, err = server.communicate(timeout=60)
            self.assertEqual(err.splitlines(), want)


if __name__ == "__main__":
    unittest.main()
