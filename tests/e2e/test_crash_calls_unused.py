"""spoor crash leaves the calls section out when the call recorder never ran, and keeps it when
it was initialised.

The Make fragment links the recorder (calls_recorder.o) into every firmware, so a firmware that
never uses it still has its state object. The sensor firmware of tests/e2e/install/firmware
(built as in test_check.py, without -finstrument-functions) runs in QEMU to its BusFault and hands
its dump over, in three shapes:

1. No call to spoor_calls_init, the state object a dump region (sensor.c adds it): the state in
   the dump was never initialised (`spoor calls` on the dump says so): `spoor crash` has no
   "last calls" section, and its JSON no "calls" or "calls_info".
2. No call to spoor_calls_init and the state not in the dump (`spoor calls` says it is not in
   the input; nm shows no spoor_calls_init): no section either.
3. spoor_calls_init called, nothing instrumented: the ring was initialised and is empty
   (`spoor calls --json` prints no record): the section is there and says 0 of 0 records.

And docs/calls.md's recipe for the recorder's options with the Make fragment (a target-specific
`$(BUILD)/calls_recorder.o: CFLAGS += -DSPOOR_CALLS_TIME=1 -DSPOOR_CALLS_CONTEXT=1`, taken from
the page): the instrumented firmware links (no second copy), and `spoor calls --json` on its dump
has a "time" and a "context" in every record (the state object says the options were built in).
"""
import json
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_check import SensorFirmwareCase, build_sensor  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
NO_INIT = ("    spoor_calls_init(call_ring, sizeof call_ring);\n", "    (void)call_ring;\n")
NO_REGION = ("    spoor_dump_add_region(&spoor_calls_state, sizeof spoor_calls_state, "
             "SPOOR_REGION_DATA);\n", "")


def spoor(*args):
    return subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True)


class CallsSection(SensorFirmwareCase):
    def dump_of(self, name, sensor_edits):
        elf, r = build_sensor(self.work, self.prefix, name, sensor_edits=sensor_edits,
                              make_args=["SPOOR_CHECK=0"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        dump = elf.parent / "crash.bin"
        with harness.Qemu(elf, "mps2-an385", semihosting_args=f"arg={dump}") as qemu:
            result = qemu.wait(30)
        self.assertIn("crash dump saved", result.output)
        return elf, dump

    def crash(self, elf, dump):
        text = spoor("crash", "-e", elf, dump)
        js = spoor("crash", "--json", "-e", elf, dump)
        self.assertEqual(text.returncode, 0, text.stderr)
        return text.stdout, json.loads(js.stdout)

    def test_never_initialised_state_in_dump(self):
        elf, dump = self.dump_of("never", [NO_INIT])
        calls = spoor("calls", "-e", elf, dump)
        self.assertIn("not initialised", calls.stderr)
        text, report = self.crash(elf, dump)
        self.assertIn("BusFault", text)
        self.assertNotIn("last calls", text)
        self.assertNotIn("calls", report)
        self.assertNotIn("calls_info", report)

    def test_never_initialised_state_not_in_dump(self):
        elf, dump = self.dump_of("never-unsaved", [NO_INIT, NO_REGION])
        self.assertIn("is not in the input", spoor("calls", "-e", elf, dump).stderr)
        nm = subprocess.run([harness.require_tool("arm-none-eabi-nm"), str(elf)],
                            capture_output=True, text=True, check=True).stdout
        self.assertIn(" spoor_calls_state", nm)
        self.assertNotIn(" spoor_calls_init", nm)
        text, report = self.crash(elf, dump)
        self.assertNotIn("last calls", text)
        self.assertNotIn("calls_info", report)

    def test_initialised_and_empty(self):
        elf, dump = self.dump_of("empty", [])
        calls = spoor("calls", "--json", "-e", elf, dump)
        self.assertEqual(calls.returncode, 0, calls.stderr)
        self.assertEqual(calls.stdout.strip(), "")
        text, report = self.crash(elf, dump)
        self.assertIn("last calls (call recorder: newest 0 of 0 records", text)
        self.assertEqual(report["calls"], [])
        self.assertEqual(report["calls_info"]["total"], 0)
        self.assertIsNone(report["calls_info"]["error"])

    def test_recorder_options_with_make_fragment(self):
        page = (Path(__file__).resolve().parents[2] / "docs" / "calls.md").read_text()
        recipe = re.search(r"^\s*(\$\(BUILD\)/calls_recorder\.o: CFLAGS \+= .*)$", page, re.M)
        self.assertTrue(recipe, "docs/calls.md has no recipe for the Make fragment")
        d = self.work / "options"
        elf, r = build_sensor(self.work, self.prefix, "options", cflags="-finstrument-functions",
                              make_args=["SPOOR_CHECK=0"],
                              makefile_append=recipe.group(1).strip() + "\n")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"-DSPOOR_CALLS_TIME=1 -DSPOOR_CALLS_CONTEXT=1 +-c \S*"
                         r"calls_recorder\.c")
        dump = d / "out" / "crash.bin"
        with harness.Qemu(elf, "mps2-an385", semihosting_args=f"arg={dump}") as qemu:
            result = qemu.wait(30)
        self.assertIn("crash dump saved", result.output)
        calls = spoor("calls", "--json", "-e", elf, dump)
        self.assertEqual(calls.returncode, 0, calls.stderr)
        records = [json.loads(line) for line in calls.stdout.splitlines()]
        self.assertTrue(records)
        self.assertTrue(all("time" in r and "context" in r for r in records), records[:3])


if __name__ == "__main__":
    unittest.main()
