"""Every example firmware runs to completion under QEMU, prints what its source says it
prints, and exits with status 0 through semihosting.

The expected text is derived here from the programs' sources and from independent facts:
the CPUID part numbers are Arm's (Cortex-M0 0xC20, M3 0xC23, M4 0xC24, M33 0xD21), the numbers
of calls.c are recomputed from its mix() function, and the printf example's numbers are
formatted by Python's own C-style % formatting.
"""

import math
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

CORES = ["m0", "m3", "m4f", "m33"]
CPUID_PARTNO = {"m0": 0xC20, "m3": 0xC23, "m4f": 0xC24, "m33": 0xD21}


def hello_lines(cpu):
    lines = [f"hello from {cpu} on {harness.machine_for(cpu)}",
             f"cpuid partno 0x{CPUID_PARTNO[cpu]:08x}"]
    if cpu == "m4f":
        lines.append(f"fpu 1.5*2.25*1000 = {int(1.5 * 2.25 * 1000)}")
    return lines + ["bye"]


def mix(a, b):
    return ((a * 31) ^ (b + 7)) & 0xFFFFFFFF


def level_one(x):
    def level_three(v):
        return (mix(v, v >> 1) + 1) & 0xFFFFFFFF

    def level_two(v):
        return mix(level_three(v + 1), v)

    return (level_two(x * 2) + 3) & 0xFFFFFFFF


def calls_lines(cpu):
    lines = [f"calls on {cpu}"]
    total = 0
    for seed in (1, 2, 3):
        result = level_one(seed)
        total += result
        lines.append(f"report {seed} = {result}")
    tick_result = mix(0, 5) + 1  # first SysTick: tick_count was 0
    irq_result = mix(tick_result, tick_result) + 2
    lines += [f"tick 1 = {tick_result}", f"irq = {irq_result}", f"total = {total}"]
    return lines


def printf_lines():
    line = "%8.3e|%-6d|%x" % (12345.678, -42, 0xBEEF)
    return ["printf on mps2-an386",
            "sqrt(2) = %.6f" % math.sqrt(2.0),
            "sin(30 deg) = %.4f" % math.sin(30.0 * math.pi / 180.0),
            "float 2.5*2.5 = %.3f" % (2.5 * 2.5),
            "snprintf [%s] length %d" % (line, len(line)),
            "heap copy matches: yes"]


class ExamplesRun(unittest.TestCase):
    def check_run(self, program, cpu, expected_lines):
        elf, machine = harness.example(program, cpu)
        result = harness.run_example(elf, machine)
        self.assertEqual(result.output.splitlines(), expected_lines, f"{elf.name} output")
        self.assertEqual(result.returncode, 0, f"{elf.name} exit status")

    def test_hello(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu):
                self.check_run("hello", cpu, hello_lines(cpu))

    def test_calls(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu):
                self.check_run("calls", cpu, calls_lines(cpu))

    def test_printf_with_newlib(self):
        self.check_run("printf", "m4f", printf_lines())


class ExamplesCarryDebugInfo(unittest.TestCase):
    """The properties the symbolizer and unwinder tests rely on, checked with binutils."""

    def sections(self, elf):
        out = subprocess.run([harness.require_tool("arm-none-eabi-readelf"), "-SW", str(elf)],
                             check=True, capture_output=True, text=True, timeout=60).stdout
        return {line.split("]", 1)[1].split()[0] for line in out.splitlines()
                if line.strip().startswith("[") and "]" in line and line.split("]", 1)[1].strip()}

    def test_sections(self):
        programs = [("hello", cpu) for cpu in CORES] + [("calls", cpu) for cpu in CORES]
        for program, cpu in programs + [("printf", "m4f")]:
            with self.subTest(program=program, cpu=cpu):
                names = self.sections(harness.elf_path(program, cpu))
                for wanted in (".ARM.exidx", ".debug_frame", ".debug_info", ".note.gnu.build-id"):
                    self.assertIn(wanted, names)

    def test_calls_has_inlined_mix(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu):
                elf = harness.elf_path("calls", cpu)
                out = subprocess.run(
                    [harness.require_tool("arm-none-eabi-objdump"), "--dwarf=info", str(elf)],
                    check=True, capture_output=True, text=True, timeout=60).stdout
                self.assertGreaterEqual(out.count("DW_TAG_inlined_subroutine"), 3)
                # level_two, level_three, tick_work and irq_work call mix(): no out-of-line copy
                self.assertNotIn("mix", harness.symbol_addresses(elf))


if __name__ == "__main__":
    unittest.main(verbosity=2)
