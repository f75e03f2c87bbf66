"""The call recorder in a firmware without a C runtime.

tests/e2e/fw/calls_minimal_fw.c is built with -nostdlib and linked with the target library
alone; nothing copies .data (it stays in flash, RAM there reads 0) or zeroes .bss. Its
Reset_Handler calls spoor_calls_init and then instrumented code while an instrumented SysTick
handler fires every few dozen instructions; the 32-record ring wraps. On the M0, the M3 and the
M33 under QEMU:

- the firmware reaches its end (exit status 0; a HardFault exits with 1), also after its
  instrumented code ran once more with the state object zeroed (as a C runtime's .bss zeroing
  after init would): the ring is then unchanged, which the firmware checks;
- a call before spoor_calls_init (the state reads zero) is not recorded: the first record is
  main_work's;
- `spoor calls --json` on the RAM image it saved gives the newest records QEMU's CPU log shows
  at the hooks (test_calls_trace.ground_truth: r0, r1 and IPSR at each hook's entry, placed
  where its claim succeeded), with names from nm, depths from the log's nesting and handler
  contexts where IPSR != 0; the text output is that of the same records;
- the recorder's object file in the target library has no .data and needs no other symbol
  (no memset: a -nostdlib firmware links it as it is).
"""

import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import test_calls_trace as ct  # noqa: E402

FW = Path(__file__).resolve().parent / "fw"
SOURCE = Path(__file__).resolve().parents[2]
# cpu: (gcc flags, target library, code origin, RAM origin)
CORES = {
    "m0": (["-mcpu=cortex-m0"], "m0plus", 0x0, 0x20000000),
    "m3": (["-mcpu=cortex-m3"], "m3", 0x0, 0x20000000),
    "m33": (["-mcpu=cortex-m33", "-mfloat-abi=soft"], "m33", 0x10000000, 0x38000000),
}


def build(cpu, out):
    flags, lib, flash, ram = CORES[cpu]
    library = harness.firmware_dir() / f"libspoor_target_{lib}.a"
    subprocess.run([harness.require_tool("arm-none-eabi-gcc"), *flags, "-mthumb", "-g", "-O1",
                    "-ffreestanding", "-nostdlib", "-finstrument-functions",
                    "-finstrument-functions-exclude-file-list=semihost.h", "-Wall", "-Wextra",
                    "-Werror", "-I", str(SOURCE / "target/include"),
                    "-I", str(SOURCE / "examples/common"),
                    "-T", str(FW / "calls_minimal_fw.ld"),
                    f"-Wl,--defsym=FW_FLASH={flash:#x},--defsym=FW_RAM={ram:#x}",
                    str(FW / "calls_minimal_fw.c"), str(library), "-o", str(out)],
                   check=True, capture_output=True, text=True)
    return out


class MinimalFirmware(unittest.TestCase):
    check_against_truth = ct.CallsTrace.check_against_truth

    def test_no_c_runtime(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                elf = build(cpu, Path(tmp) / f"calls_minimal-{cpu}.elf")
                syms = harness.symbol_addresses(elf)
                # the premise: .data was not copied (its initialiser says 7)
                self.assertGreaterEqual(syms["data_word"], CORES[cpu][3])
                out, log = Path(tmp) / "ram.bin", Path(tmp) / "cpu.log"
                result, points = ct.run_with_log(elf, harness.machine_for(cpu), "minimal", out,
                                                 log)
                text = result.stdout + result.stderr
                self.assertEqual(result.returncode, 0, text)
                m = re.search(r"image (0x[0-9a-f]+) (0x[0-9a-f]+)", text)
                self.assertIsNotNone(m, text)
                image = out.read_bytes()
                self.assertEqual(len(image), int(m.group(2), 16))
                offset = syms["data_word"] - int(m.group(1), 16)
                self.assertEqual(image[offset:offset + 4], bytes(4))
                stats = {}
                truth = ct.ground_truth(log, points, stats=stats)
                self.assertTrue(any(t["ipsr"] == 15 for t in truth), "no SysTick record")
                args = ["--mem", f"{m.group(1)}:{out}"]
                got = subprocess.run([ct.spoor(), "calls", "-e", str(elf), "--json"] + args,
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(got.returncode, 0, got.stderr)
                records = [__import__("json").loads(line) for line in got.stdout.splitlines()]
                self.assertGreater(len(truth), 32)
                self.check_against_truth(elf, truth, records, wrapped=True)
                self.assertEqual(len(records), 32)
                # the calls to record began with main_work, once: work_leaf's call before init
                # and the calls after the state was zeroed are in the log, not in the ring
                funcs = ct.functions(elf)
                entered = [ct.containing(funcs, e["fn"])[0] for e in stats["entries"]
                           if e["kind"] == "enter"]
                self.assertEqual(entered[0], "work_leaf")
                self.assertEqual(entered.count("main_work"), 2)
                self.assertEqual([ct.containing(funcs, t["fn"])[0] for t in truth
                                  if t["kind"] == "enter" and t["ipsr"] == 0][0], "main_work")
                self.assertEqual(sum(t["fn"] == syms["main_work"] for t in truth), 2)

    def test_recorder_object(self):
        """calls_recorder's object in each target library: no .data, no undefined symbol."""
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                library = harness.firmware_dir() / f"libspoor_target_{CORES[cpu][1]}.a"
                members = subprocess.run(["arm-none-eabi-ar", "t", str(library)], check=True,
                                         capture_output=True, text=True).stdout.split()
                member = next(m for m in members if m.startswith("calls_recorder."))
                subprocess.run(["arm-none-eabi-ar", "x", str(library), member], cwd=tmp,
                               check=True)
                obj = str(Path(tmp) / member)
                undefined = subprocess.run(["arm-none-eabi-nm", "-u", obj], check=True,
                                           capture_output=True, text=True).stdout.split()
                self.assertEqual(undefined, [])
                sections = subprocess.run(["arm-none-eabi-size", "-A", obj], check=True,
                                          capture_output=True, text=True).stdout
                data = [line for line in sections.splitlines() if line.startswith(".data")
                        and int(line.split()[1]) != 0]
                self.assertEqual(data, [])


if __name__ == "__main__":
    unittest.main()
