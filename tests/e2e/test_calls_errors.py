"""spoor calls on bad input: each case gives one clear message and exit status 2, never a crash
or a silent wrong answer. The inputs are real: RAM images and a crash dump written by the
calls_trace example under QEMU, then cut or altered here."""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402


def run_example(elf, machine, mode, out):
    command = harness.qemu_command(elf, machine,
                                   semihosting_args=f"arg=calls_trace,arg={mode},arg={out}")
    p = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout + p.stderr


def spoor_calls(*args):
    return subprocess.run([os.environ["SPOOR_BIN"], "calls"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60)


class CallsErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        cls.elf, machine = harness.example("calls_trace", "m3")
        cls.image = tmp / "ram.bin"
        text = run_example(cls.elf, machine, "plain", cls.image)
        cls.base = int(re.search(r"image (0x[0-9a-f]+)", text).group(1), 16)
        cls.dump = tmp / "fault.dump"
        run_example(cls.elf, machine, "fault", cls.dump)
        cls.symbols = harness.symbol_addresses(cls.elf)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def fails_with(self, p, pattern):
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, pattern)

    def altered_image(self, name, change):
        data = bytearray(self.image.read_bytes())
        change(data)
        path = Path(self.tmp.name) / name
        path.write_bytes(data)
        return path

    def test_good_inputs_work(self):
        self.assertEqual(spoor_calls("-e", self.elf, "--mem", f"{self.base:#x}:{self.image}")
                         .returncode, 0)
        p = spoor_calls("-e", self.elf, self.dump)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("->decide", p.stdout.splitlines()[-1])

    def test_elf_without_recorder(self):
        other, _ = harness.example("calls", "m3")
        self.fails_with(spoor_calls("-e", other, "--mem", f"{self.base:#x}:{self.image}"),
                        r"no call recorder \(no symbol spoor_calls_state")

    def test_state_outside_the_image(self):
        state = self.symbols["spoor_calls_state"]
        cut = self.altered_image("short.bin", lambda d: d.__delitem__(slice(state - self.base,
                                                                           None)))
        self.fails_with(spoor_calls("-e", self.elf, "--mem", f"{self.base:#x}:{cut}"),
                        r"state \(spoor_calls_state, 0x[0-9a-f]+\+24\) is not in the input")

    def test_ring_outside_the_image(self):
        # the state object says the ring (and so its next slot) is far away
        state, ring = self.symbols["spoor_calls_state"], self.symbols["call_ring"]
        self.assertNotEqual(ring, 0x30000000)
        next_slot = int.from_bytes(self.image.read_bytes()[state + 16 - self.base:][:4], "little")
        self.fails_with(self.with_words("moved.bin", {state + 8: 0x30000000,
                                                      state + 16: next_slot - ring + 0x30000000}),
                        r"the call ring \(0x30000000\+4096\) is not in the input")

    def with_words(self, name, words):
        """spoor calls on the RAM image with the u32 at each address replaced by its value."""
        def patch(d):
            for address, value in words.items():
                offset = address - self.base
                d[offset:offset + 4] = value.to_bytes(4, "little")
        path = self.altered_image(name, patch)
        return spoor_calls("-e", self.elf, "--mem", f"{self.base:#x}:{path}")

    def test_corrupt_state(self):
        state, ring = self.symbols["spoor_calls_state"], self.symbols["call_ring"]
        self.fails_with(self.with_words("m.bin", {state: 0x12345678}),
                        r"call recorder state is corrupt: magic 0x12345678")
        # next holds the slot's address (format bits 16-23 = 1): one past the ring, one inside
        # a record
        self.fails_with(self.with_words("n.bin", {state + 16: ring + 4096}),
                        rf"corrupt: next slot at {ring + 4096:#010x}, ring at {ring:#010x}, "
                        r"512 records of 8 bytes")
        self.fails_with(self.with_words("n.bin", {state + 16: ring + 4}),
                        rf"corrupt: next slot at {ring + 4:#010x}")
        # the first layout (format bits 16-23 = 0): next is an index
        self.fails_with(self.with_words("n.bin", {state + 4: 8, state + 16: 100000}),
                        r"corrupt: next index 100000, capacity 512")
        self.fails_with(self.with_words("f.bin", {state + 4: 8 | 2 << 16}),
                        r"corrupt: record format 0x00020008")

    def test_corrupt_record(self):
        self.fails_with(self.with_words("r.bin", {self.symbols["call_ring"] + 4: 0x1234}),
                        r"record in slot 0 is corrupt")

    def test_dump_of_another_firmware(self):
        # the build-id warning (as spoor crash gives it, tests/e2e/test_build_id_mismatch.py),
        # then the other firmware's state object is not in the dump
        other, _ = harness.example("calls_trace", "m33")
        p = spoor_calls("-e", other, self.dump)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 2, p.stderr)
        self.assertRegex(lines[0], r"^spoor calls: WARNING: build-id mismatch: the dump is from "
                                   r"[0-9a-f]+, the ELF is [0-9a-f]+")
        self.assertRegex(lines[1], r"state \(spoor_calls_state, 0x[0-9a-f]+\+24\) is not in")

    def test_truncated_dump(self):
        data = self.dump.read_bytes()
        path = Path(self.tmp.name) / "cut.dump"
        path.write_bytes(data[:len(data) // 2])
        self.fails_with(spoor_calls("-e", self.elf, path), r"truncated")

    def test_empty_stream_with_stats(self):
        # an ITM capture with nothing in it, --stats: no function to sort (it once passed
        # NULL to qsort, undefined behaviour the sanitizer build stops at); the empty table
        # and the "0 records" note, exit 0
        empty = Path(self.tmp.name) / "empty.itm"
        empty.write_bytes(b"")
        p = spoor_calls("-e", self.elf, "--itm", empty, "--port", 5, "--stats")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("runtime error", p.stderr)
        self.assertIn("0 records", p.stdout)

if __name__ == "__main__":
    unittest.main()
