"""Rings of both state layouts decode alike.

The fixture tests/e2e/data/calls_v1 (made by its make_fixture.py at commit 87c6e45) holds RAM
images and a crash dump that calls_trace left with the first layout of the recorder's state
(format bits 16-23 = 0: `next` is the index of the slot written next), the records QEMU's CPU
log showed at the hooks then, and what `spoor calls` printed then. Checked:

- the fixture is of the first layout (its state's format word);
- the stored output agrees with the QEMU log: the records are the newest the log shows, at least
  90 % of the ring when it wrapped, and only records with IPSR != 0 are in a handler context;
- `spoor calls` (text and --json) prints today byte for byte what it printed then, and so do
  `spoor crash --json` (its calls and calls_info) and the report page `spoor report` writes;
- the same images with their state rewritten in the layout the recorder writes now (format bits
  16-23 = 1: `next` the slot's address) print the same again.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "calls_v1"
CASES = {"m3-plain": "m3", "m3-irq": "m3", "m0-irq": "m0", "m3-fault": "m3"}
MAGIC = 0x4C435053
FORMAT, NEXT = 4, 16
LAYOUT_ADDRESS = 1


def spoor(*args, cwd=DATA):
    p = subprocess.run([os.environ["SPOOR_BIN"], *args], cwd=cwd, capture_output=True,
                       text=True, timeout=60)
    return p


def state_offset(data, case):
    """Offset of the state object in the case's .bin (image: from the ELF's symbol; dump: the
    magic followed by a format word of the first layout's default record)."""
    elf = DATA / f"calls_trace-{CASES[case]}.elf"
    args = (DATA / f"{case}.args").read_text().split()
    if args[0] == "--mem":
        base = int(args[1].split(":")[0], 16)
        return harness.symbol_addresses(elf)["spoor_calls_state"] - base
    at = data.find(struct.pack("<II", MAGIC, 8))
    assert at >= 0 and data.find(struct.pack("<II", MAGIC, 8), at + 1) < 0
    return at


class Layouts(unittest.TestCase):
    def outputs(self, case, cwd=DATA, binary=None):
        elf = str(DATA / f"calls_trace-{CASES[case]}.elf")
        args = (DATA / f"{case}.args").read_text().split()
        if binary:
            args = [a.replace(f"{case}.bin", str(binary)) for a in args]
        out = {}
        for suffix, extra in (("txt", []), ("json", ["--json"])):
            p = spoor("calls", "-e", elf, *extra, *args, cwd=cwd)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
            out[suffix] = p.stdout
        return out

    def test_fixture_is_the_first_layout(self):
        for case in CASES:
            with self.subTest(case=case):
                data = (DATA / f"{case}.bin").read_bytes()
                at = state_offset(data, case)
                magic, fmt = struct.unpack_from("<II", data, at)
                self.assertEqual((magic, fmt >> 16), (MAGIC, 0))

    def test_stored_output_agrees_with_qemu(self):
        for case in CASES:
            with self.subTest(case=case):
                truth = json.loads((DATA / f"{case}.truth.json").read_text())
                got = [json.loads(line) for line in
                       (DATA / f"{case}.json").read_text().splitlines()]
                newest = truth["newest"]
                capacity = len(newest) if truth["total"] > len(newest) else None
                if capacity:
                    self.assertGreaterEqual(len(got), 0.9 * capacity)
                else:
                    self.assertEqual(len(got), truth["total"])
                for g, (kind, fn, site, ipsr) in zip(got, newest[len(newest) - len(got):]):
                    self.assertEqual(g["kind"], "enter" if kind else "exit", g)
                    self.assertEqual(int(g["fn"], 16), fn, g)
                    self.assertEqual(int(g["site"], 16), site, g)
                    self.assertEqual("handler" in g, ipsr != 0, g)
                if case.endswith("irq"):
                    self.assertTrue(any("handler" in g for g in got))

    def test_first_layout_decodes_as_before(self):
        for case in CASES:
            with self.subTest(case=case):
                out = self.outputs(case)
                for suffix in ("txt", "json"):
                    self.assertEqual(out[suffix], (DATA / f"{case}.{suffix}").read_text(), suffix)

    def test_crash_and_report(self):
        case = "m3-fault"
        elf = str(DATA / "calls_trace-m3.elf")
        p = spoor("crash", "-e", elf, "--json", "--calls", "1000", f"{case}.bin")
        self.assertIn(p.returncode, (0, 1), p.stderr)
        report = json.loads(p.stdout)
        expected = json.loads((DATA / f"{case}.crash.json").read_text())
        self.assertEqual({"calls": report["calls"], "calls_info": report["calls_info"]},
                         expected)
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "page.html"
            p = spoor("report", "-e", elf, "--calls", "1000", "-o", str(page), f"{case}.bin")
            self.assertIn(p.returncode, (0, 1), p.stderr)
            text = page.read_text()
            start = text.index('<script type="application/json" id="spoor-crash">')
            body = text[text.index(">", start) + 1:text.index("</script>", start)]
            embedded = json.loads(body)
            self.assertEqual({"calls": embedded["calls"], "calls_info": embedded["calls_info"]},
                             expected)

    def test_address_layout_decodes_alike(self):
        """The fixture's state in the layout the recorder writes now: the same output (the RAM
        images; a dump's records carry CRCs)."""
        for case in (c for c in CASES if not c.endswith("fault")):
            with self.subTest(case=case), tempfile.TemporaryDirectory() as tmp:
                data = bytearray((DATA / f"{case}.bin").read_bytes())
                at = state_offset(bytes(data), case)
                fmt, ring, capacity, index = struct.unpack_from("<IIII", data, at + FORMAT)
                self.assertLess(index, capacity)
                struct.pack_into("<I", data, at + FORMAT, fmt | LAYOUT_ADDRESS << 16)
                struct.pack_into("<I", data, at + NEXT, ring + index * (fmt & 0xFF))
                binary = Path(tmp) / f"{case}.bin"
                binary.write_bytes(bytes(data))
                out = self.outputs(case, binary=binary)
                for suffix in ("txt", "json"):
                    self.assertEqual(out[suffix], (DATA / f"{case}.{suffix}").read_text(), suffix)

if __name__ == "__main__":
    unittest.main()
