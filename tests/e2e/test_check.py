"""spoor check: a firmware ELF's wiring of spoor, item by item, and the Make fragment's check
after the link.

The sensor firmware of tests/e2e/install/firmware (its own startup and linker script, built with
the Make fragment from a prefix that is spoor's source tree and this build's spoor, as installed)
in five shapes:

1. As it is: every item ok or skipped, exit 0, `--json` says ok; the link ran the check
   ($(SPOOR_POST_LINK)) and printed "spoor is wired".
2. A vendor startup: `static void HardFault_Handler(void)` in the vector table and
   `Default_Handler` for MemManage, BusFault and UsageFault. It links without a word, but the
   check fails the build; `spoor check` exits 1 and the four fault items FAIL, each naming the
   entry's handler at the address nm gives it (the static one is a local symbol) and the vector
   table's word (read with objdump). With SPOOR_CHECK=0 the build goes through.
3. Built with -finstrument-functions and a naked PendSV_Handler (an RTOS port's context switch):
   objdump shows its bl __cyg_profile_func_enter with no push before it; the item names it.
4. A linker script without PHDRS: ld gives .noinit a LOAD segment of its own (readelf -l shows
   it) and the .noinit item FAILs.
5. Instrumented without a call to spoor_calls_init: the call recorder item FAILs.
`make clean` works without SPOOR_PREFIX (nothing installed at the default /usr/local).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SPOOR = Path(os.environ["SPOOR_BIN"]).resolve()
FIRMWARE = Path(__file__).resolve().parent / "install" / "firmware"

VENDOR_STARTUP = (
    ("WEAK_HANDLER(HardFault_Handler);\n",
     "static void HardFault_Handler(void)\n{\n    for (;;)\n        ;\n}\n"),
    ("    MemManage_Handler,\n    BusFault_Handler,\n    UsageFault_Handler,\n",
     "    Default_Handler,\n    Default_Handler,\n    Default_Handler,\n"),
)
NAKED_PENDSV = (
    ("WEAK_HANDLER(PendSV_Handler);\n",
     "__attribute__((naked)) void PendSV_Handler(void)\n{\n"
     "    __asm volatile(\"mrs r0, psp\\n stmdb r0!, {r4-r11}\\n msr psp, r0\\n bx lr\\n\");\n}\n"),
)


def tool(name, *args):
    return subprocess.run([harness.require_tool(name), *map(str, args)], capture_output=True,
                          text=True, check=True).stdout


def nm_address(elf, name):
    for line in tool("arm-none-eabi-nm", elf).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1, parts[1]
    raise AssertionError(f"{elf}: no symbol {name}")


def vector(elf, index):
    """Word `index` of the vector table (symbol `vectors`), read with objdump -s."""
    table, _ = nm_address(elf, "vectors")
    addr = table + 4 * index
    out = tool("arm-none-eabi-objdump", "-s", f"--start-address={addr:#x}",
               f"--stop-address={addr + 4:#x}", elf)
    m = re.search(rf"^ {addr:04x} ([0-9a-f]{{8}})", out, re.M)
    return int.from_bytes(bytes.fromhex(m.group(1)), "little")


def make_prefix(work):
    """A prefix laid out as an installed one: share/spoor is the target tree, bin/spoor this
    build's spoor (the fragment finds both relative to itself)."""
    prefix = work / "prefix"
    (prefix / "share").mkdir(parents=True)
    (prefix / "bin").mkdir()
    (prefix / "share" / "spoor").symlink_to(SOURCE / "target")
    (prefix / "bin" / "spoor").symlink_to(SPOOR)
    return prefix


def build_sensor(work, prefix, name, edits=(), sensor_edits=(), ld_edits=(), cflags="",
                 make_args=(), makefile_append=""):
    """The sensor firmware copied to work/name, its files edited ((old, new) pairs; an old
    that starts with (? is a regular expression; makefile_append: lines added to its
    Makefile), built with make: (ELF, make's result)."""
    d = work / name
    shutil.copytree(FIRMWARE, d)
    if makefile_append:
        (d / "Makefile").write_text((d / "Makefile").read_text() + makefile_append)
    for path, pairs in (("startup.c", edits), ("sensor.c", sensor_edits),
                        ("sensor.ld", ld_edits)):
        text = (d / path).read_text()
        for old, new in pairs:
            found = re.search(old, text) if old.startswith("(?") else old in text
            if not found:
                raise AssertionError(f"{path} no longer has {old!r}, which the test edits")
            text = re.sub(old, new, text) if old.startswith("(?") else text.replace(old, new)
        (d / path).write_text(text)
    r = subprocess.run(["make", "-C", d, f"SPOOR_PREFIX={prefix}", "BUILD=out",
                        f"EXTRA_CFLAGS={cflags}", *make_args], capture_output=True, text=True,
                       timeout=300)
    return d / "out" / "sensor.elf", r


class SensorFirmwareCase(unittest.TestCase):
    """Tests that build the sensor firmware: a work folder and a prefix for the class."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.work = Path(cls.tmp.name)
        cls.prefix = make_prefix(cls.work)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()


class Check(SensorFirmwareCase):

    def build(self, name, edits=(), sensor_edits=(), ld_edits=(), cflags="", check=True,
              make_args=()):
        elf, r = build_sensor(self.work, self.prefix, name, edits, sensor_edits, ld_edits,
                              cflags, make_args)
        if check:
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return elf, r

    def spoor_check(self, elf):
        text = subprocess.run([SPOOR, "check", "-e", elf], capture_output=True, text=True)
        js = subprocess.run([SPOOR, "check", "--json", "-e", elf], capture_output=True,
                            text=True)
        self.assertEqual(text.returncode, js.returncode)
        doc = json.loads(js.stdout)
        self.assertEqual(doc["ok"], js.returncode == 0)
        items = {}
        for it in doc["items"]:
            items.setdefault(it["item"], []).append(it)
        for line in text.stdout.splitlines()[:-1]:
            self.assertRegex(line, r"^(ok|FAIL|skip) +[^:]+: ")
        return text.returncode, items, text.stdout

    def test_wired(self):
        elf, r = self.build("good")
        self.assertIn("spoor is wired", r.stdout)  # the check after the link
        rc, items, text = self.spoor_check(elf)
        self.assertEqual(rc, 0, text)
        for name in ("HardFault vector", "MemManage vector", "BusFault vector",
                     "UsageFault vector", "build-id", ".noinit", "call recorder"):
            self.assertEqual(items[name][0]["status"], "ok", text)
        for name in ("HardFault", "MemManage", "BusFault", "UsageFault"):
            addr, _ = nm_address(elf, f"{name}_Handler")
            self.assertEqual(vector(elf, {"HardFault": 3, "MemManage": 4, "BusFault": 5,
                                          "UsageFault": 6}[name]) & ~1, addr)
            self.assertIn(f"0x{addr:08x} {name}_Handler", items[f"{name} vector"][0]["text"])
        build_id = re.search(r"Build ID: ([0-9a-f]+)", tool("arm-none-eabi-readelf", "-n", elf))
        self.assertIn(build_id.group(1), items["build-id"][0]["text"])

    def test_vendor_startup(self):
        elf, r = self.build("vendor", VENDOR_STARTUP, check=False)
        self.assertNotEqual(r.returncode, 0, "the check after the link did not fail the build")
        self.assertIn("FAIL  HardFault vector", r.stdout)
        rc, items, text = self.spoor_check(elf)
        self.assertEqual(rc, 1, text)
        hard, kind = nm_address(elf, "HardFault_Handler")
        self.assertEqual(kind, "t", "the startup's HardFault_Handler is not the static one")
        default, _ = nm_address(elf, "Default_Handler")
        expect = {"HardFault": (3, hard, "HardFault_Handler"),
                  "MemManage": (4, default, "Default_Handler"),
                  "BusFault": (5, default, "Default_Handler"),
                  "UsageFault": (6, default, "Default_Handler")}
        for name, (index, addr, handler) in expect.items():
            it = items[f"{name} vector"][0]
            self.assertEqual(it["status"], "fail", text)
            self.assertEqual(vector(elf, index) & ~1, addr)
            self.assertIn(f"0x{addr:08x} {handler}", it["text"])
        self.assertEqual(items["build-id"][0]["status"], "ok")
        _, r = self.build("vendor-unchecked", VENDOR_STARTUP, make_args=["SPOOR_CHECK=0"])
        self.assertNotIn("FAIL", r.stdout)

    def test_naked_pendsv_instrumented(self):
        elf, _ = self.build("naked", NAKED_PENDSV, cflags="-finstrument-functions", check=False)
        pendsv, _ = nm_address(elf, "PendSV_Handler")
        self.assertEqual(vector(elf, 14) & ~1, pendsv)
        dis = tool("arm-none-eabi-objdump", "-d", f"--start-address={pendsv:#x}",
                   f"--stop-address={pendsv + 32:#x}", elf)
        body = dis.split("<PendSV_Handler>:", 1)[1].splitlines()
        calls = [i for i, line in enumerate(body) if "<__cyg_profile_func_enter>" in line]
        self.assertTrue(calls, dis)
        self.assertFalse([line for line in body[:calls[0]] if "push" in line], dis)
        rc, items, text = self.spoor_check(elf)
        self.assertEqual(rc, 1, text)
        bad = [it for it in items["instrumented handlers"] if it["status"] == "fail"]
        self.assertEqual(len(bad), 1, text)
        self.assertIn(f"PendSV_Handler (0x{pendsv:08x}, the PendSV handler", bad[0]["text"])
        # the rest of the instrumented firmware is fine
        self.assertEqual(items["HardFault vector"][0]["status"], "ok", text)
        self.assertEqual(items["call recorder"][0]["status"], "ok", text)

    def test_noinit_in_a_load_segment(self):
        edits = (("(?s)PHDRS\n\\{.*?\n\\}\n", ""), (" :text", ""), (" :data", ""), (" :bss", ""))
        elf, _ = self.build("nophdrs", ld_edits=edits, check=False)
        noinit = re.search(r"\.noinit\s+NOBITS\s+([0-9a-f]+)",
                           tool("arm-none-eabi-readelf", "-SW", elf))
        addr = int(noinit.group(1), 16)
        loads = [(int(m.group(1), 16), int(m.group(2), 16)) for m in re.finditer(
            r"LOAD\s+0x[0-9a-f]+ (0x[0-9a-f]+) 0x[0-9a-f]+ 0x[0-9a-f]+ (0x[0-9a-f]+)",
            tool("arm-none-eabi-readelf", "-lW", elf))]
        self.assertTrue(any(v <= addr < v + m for v, m in loads), "ld kept .noinit out")
        rc, items, text = self.spoor_check(elf)
        self.assertEqual(rc, 1, text)
        self.assertEqual(items[".noinit"][0]["status"], "fail", text)
        self.assertIn(f".noinit (0x{addr:08x}", items[".noinit"][0]["text"])

    def test_recorder_never_initialised(self):
        edits = (("    spoor_calls_init(call_ring, sizeof call_ring);\n", "    (void)call_ring;\n"),)
        elf, _ = self.build("noinit-recorder", sensor_edits=edits,
                            cflags="-finstrument-functions", check=False)
        rc, items, text = self.spoor_check(elf)
        self.assertEqual(rc, 1, text)
        self.assertEqual(items["call recorder"][0]["status"], "fail", text)
        self.assertNotIn("spoor_calls_init", tool("arm-none-eabi-nm", elf))

    def test_clean_without_prefix(self):
        d = self.work / "clean"
        shutil.copytree(FIRMWARE, d)
        (d / "build").mkdir()
        r = subprocess.run(["make", "-C", d, "clean"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse((d / "build").exists())

    def test_errors(self):
        for args in ([], ["-e", "/nonexistent.elf"], ["-e", str(SPOOR), "x"]):
            r = subprocess.run([SPOOR, "check", *args], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
