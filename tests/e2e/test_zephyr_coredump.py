"""Zephyr coredumps: spoor crash on a Zephyr-format dump of a crash equals spoor crash on the
same crash as spoor's own dump.

The crash examples fault in QEMU and write spoor's dump (test_crash_scenarios.crash_and_collect).
The same crash is then written as Zephyr's coredump would hold it, from the format's documented
layout (zephyr_coredump.py names the Zephyr sources): the header, the arch block with the
registers of spoor's dump (r0-r3 r12 lr pc xpsr as stacked, sp the SP of the faulting code as
Zephyr's z_arm_set_fault_sp stores it: the frame's address + the frame + the alignment word),
and the dump's memory as memory blocks. Each arch-block version (1: no r4-r11; 2; 3 with a CRC
trailer) as the binary file, the version-2 dump as a UART log of #CD: lines with the log's
prefixes, colour escapes and other lines around, and as a flash partition image.

`spoor crash` on each must print the backtrace spoor's own dump gives (text and --json) and the
same registers (version 1, and version 3 with callee_saved_valid 0, carry no r4-r11: those
read 0 and only the frames' functions and PCs are compared then).
Damaged dumps each give one error line and exit 2. The M4F case has an extended (FP) frame:
spoor must find it below the stored SP and read s0-s15 from it.
"""
import concurrent.futures
import json
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import test_crash_scenarios as scenarios  # noqa: E402
import zephyr_coredump as zephyr  # noqa: E402
from harness import fp_values, gdb_via_server, spoor  # noqa: E402

CASES = [("m3", "div0"), ("m3", "badptr"), ("m3", "psp"), ("m3", "nested"), ("m4f", "div0"),
         ("m33", "busfault"), ("m0", "badptr")]
CALLEE = [f"r{i}" for i in range(4, 12)]
CORE = ["r0", "r1", "r2", "r3", "r12", "sp", "lr", "pc", "xpsr"]
NO_STATUS = " (the dump's reason; the fault status registers are not in the dump)"
CPU_EXCEPTION_LINE = "CPU exception" + NO_STATUS
# The reasons a Zephyr dump's header carries: enum k_fatal_error_reason
# (include/zephyr/fatal_types.h: K_ERR_CPU_EXCEPTION 0 .. K_ERR_KERNEL_PANIC 4, K_ERR_ARCH_START
# 16) and the Cortex-M ones of enum k_fatal_error_reason_arch (include/zephyr/arch/arm/arch.h,
# counted from K_ERR_ARCH_START: MEM_GENERIC 16, MEM_DATA_ACCESS 19, BUS_PRECISE_DATA_BUS 25,
# USAGE_DIV_0 30, USAGE_STACK_OVERFLOW 32, SECURE_GENERIC 37). number -> (name, whether Zephyr's
# fault handler gave it, the words of the second line)
REASONS = {
    0: ("K_ERR_CPU_EXCEPTION", True, "CPU exception"),
    1: ("K_ERR_SPURIOUS_IRQ", True, "spurious interrupt"),
    2: ("K_ERR_STACK_CHK_FAIL", True, "stack overflow (stack check failed)"),
    3: ("K_ERR_KERNEL_OOPS", False, None),
    4: ("K_ERR_KERNEL_PANIC", False, None),
    16: ("K_ERR_ARM_MEM_GENERIC", True, "MemManage fault"),
    19: ("K_ERR_ARM_MEM_DATA_ACCESS", True, "MemManage fault, data access violation"),
    25: ("K_ERR_ARM_BUS_PRECISE_DATA_BUS", True, "BusFault, precise data bus error"),
    30: ("K_ERR_ARM_USAGE_DIV_0", True, "UsageFault, division by zero"),
    32: ("K_ERR_ARM_USAGE_STACK_OVERFLOW", True,
         "UsageFault, stack overflow (stack limit check)"),
    37: ("K_ERR_ARM_SECURE_GENERIC", True, "SecureFault"),
}
SCS_FAULT = 0xE000ED28  # CFSR, HFSR, DFSR, MMFAR, BFAR, AFSR: 6 words (ARMv7-M B3.2.2)


def regs_and_regions(dump):
    regs = {f"r{i}": dump.r[i] for i in range(13)}
    regs.update(lr=dump.lr, pc=dump.pc, xpsr=dump.xpsr)
    regions = []
    for _, rtype, payload in dump.records:
        if rtype == 3:  # MEMORY: u32 address, u16 kind, u16 reserved, bytes
            regions.append((struct.unpack_from("<I", payload, 0)[0], payload[8:]))
    return regs, regions


def variants(dump):
    regs, regions = regs_and_regions(dump)
    v2 = zephyr.binary(2, regs, dump.sp, regions)
    return {
        "v1.bin": zephyr.binary(1, regs, dump.sp, regions),
        "v1-like-v3.bin": zephyr.binary(3, regs, dump.sp, regions, callee_valid=False),
        "v2.bin": v2,
        "v3-crc.bin": zephyr.binary(3, regs, dump.sp, regions, crc=True),
        "v2.log": zephyr.log(v2),
        "v2-plain.log": zephyr.log(v2, prefix="coredump: ", colour=False),
        "v3.flash": zephyr.flash_image(zephyr.binary(3, regs, dump.sp, regions, crc=True)),
        "v2-write32.flash": zephyr.flash_image(v2, write_size=32),
    }


def backtrace_text(text):
    """The backtrace section (the stack sections after it need MSP/PSP, which Zephyr's dump
    does not carry)."""
    start = text.index("\nbacktrace:")
    return text[start:text.index("\n\n", start + 1)]


def collect(core, scenario, out):
    elf, _machine, path, _output = scenarios.crash_and_collect(core, scenario, out)
    return elf, path


class ZephyrCoredump(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            futures = {case: pool.submit(collect, *case, cls.tmp.name) for case in CASES}
            cls.crashes = {case: f.result() for case, f in futures.items()}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, data):
        path = Path(self.tmp.name) / name
        path.write_bytes(data)
        return path

    def test_same_crash_report(self):
        for (core, scenario), (elf, own) in self.crashes.items():
            dump = scenarios.Dump(own.read_bytes())
            ref_text = spoor("crash", "-e", elf, own)
            ref_json = spoor("crash", "--json", "-e", elf, own)
            self.assertEqual(ref_text.returncode, 0, ref_text.stderr)
            ref = json.loads(ref_json.stdout)
            for name, data in variants(dump).items():
                with self.subTest(core=core, scenario=scenario, variant=name):
                    path = self.write(f"{core}-{scenario}-{name}", data)
                    text = spoor("crash", "-e", elf, path)
                    self.assertEqual(text.returncode, 0, text.stderr)
                    self.assertEqual(text.stderr, "")
                    self.assertIn("reason: fault: Zephyr K_ERR_CPU_EXCEPTION", text.stdout)
                    self.assertEqual(text.stdout.splitlines()[1], CPU_EXCEPTION_LINE)
                    got = json.loads(spoor("crash", "--json", "-e", elf, path).stdout)
                    names = CORE + ([] if name.startswith("v1") else CALLEE)
                    for reg in names:
                        self.assertEqual(got["registers"][reg], ref["registers"][reg], reg)
                    if name.startswith("v1"):
                        for reg in CALLEE:  # not in the dump: not made up
                            self.assertEqual(got["registers"][reg], "0x00000000", reg)
                        # without r4-r11 the frames are the same functions and PCs
                        self.assertEqual([(f["function"], f["pc"]) for f in got["backtrace"]],
                                         [(f["function"], f["pc"]) for f in ref["backtrace"]])
                        continue
                    self.assertEqual(got["backtrace"], ref["backtrace"])
                    self.assertEqual(backtrace_text(text.stdout),
                                     backtrace_text(ref_text.stdout))

    def test_reasons(self):
        """Each reason in the header says itself in words: the reason line names it, a fault
        reason's second line says what Zephyr's handler found (the dump has no fault status
        registers), oops and panic are the kernel's own calls (user, with their code)."""
        elf, own = self.crashes[("m3", "div0")]
        dump = scenarios.Dump(own.read_bytes())
        regs, regions = regs_and_regions(dump)
        for number, (name, fault, words) in REASONS.items():
            with self.subTest(reason=name):
                path = self.write(f"reason-{number}.bin",
                                  zephyr.binary(2, regs, dump.sp, regions, reason=number))
                text = spoor("crash", "-e", elf, path)
                self.assertEqual(text.returncode, 0, text.stderr)
                lines = text.stdout.splitlines()
                got = json.loads(spoor("crash", "--json", "-e", elf, path).stdout)
                if fault:
                    self.assertEqual(lines[0], f"reason: fault: Zephyr {name} ({words})")
                    self.assertEqual(lines[1], words + NO_STATUS)
                    self.assertEqual((got["reason"], got["fault"]["dump_words"]),
                                     ("fault", words))
                else:
                    self.assertEqual(lines[0], f"reason: user (code {number}): Zephyr {name} "
                                     f"({name[6:].lower().replace('_', ' ')})")
                    self.assertEqual(lines[1], "")
                    self.assertEqual(got["reason"], "user")
        # a reason no Cortex-M Zephyr gives (Cortex-A/R's are from 45): its number, no words
        path = self.write("reason-52.bin", zephyr.binary(2, regs, dump.sp, regions, reason=52))
        text = spoor("crash", "-e", elf, path).stdout.splitlines()
        self.assertEqual(text[0], "reason: user (code 52): Zephyr fatal error reason 52 "
                         "(architecture-specific, not a Cortex-M one)")

    def test_fault_status_in_a_memory_block(self):
        """A memory block that covers the fault status registers (a dump of the System Control
        Space's page): the second line decodes them as for spoor's own dump of the crash (its
        CFSR, HFSR, ... are those the target library read)."""
        for core, scenario in (("m3", "div0"), ("m33", "busfault")):
            with self.subTest(core=core, scenario=scenario):
                elf, own = self.crashes[(core, scenario)]
                dump = scenarios.Dump(own.read_bytes())
                ref = json.loads(spoor("crash", "--json", "-e", elf, own).stdout)
                ref_lines = spoor("crash", "-e", elf, own).stdout.splitlines()
                words = [int(ref["registers"].get(r, "0"), 16)
                         for r in ("cfsr", "hfsr", "dfsr", "mmfar", "bfar", "afsr")]
                self.assertTrue(words[0] or words[1], f"{core} {scenario}: no fault status")
                regs, regions = regs_and_regions(dump)
                scs = (SCS_FAULT, struct.pack("<6I", *words))
                path = self.write(f"{core}-{scenario}-scs.bin",
                                  zephyr.binary(2, regs, dump.sp, regions + [scs], reason=30))
                text = spoor("crash", "-e", elf, path)
                self.assertEqual(text.returncode, 0, text.stderr)
                lines = text.stdout.splitlines()
                self.assertEqual(lines[1], ref_lines[1])
                got = json.loads(spoor("crash", "--json", "-e", elf, path).stdout)
                self.assertEqual(got["fault"]["bits"], ref["fault"]["bits"])
                self.assertEqual(got["fault"]["status_from"], "memory (System Control Space)")
                self.assertIn("  (fault status read from memory (System Control Space))",
                              lines)

    def test_fp_frame_found(self):
        """M4F: the extended frame lies 0x68 below the stored SP; s0-s15 and FPSCR come from
        it. Read back through spoor gdbserver by gdb-multiarch (`info registers`) and compared
        with the frame's words in spoor's own dump."""
        elf, own = self.crashes[("m4f", "div0")]
        dump = scenarios.Dump(own.read_bytes())
        self.assertEqual(dump.exc_return & 0x10, 0, "the M4F crash has an extended frame")
        regs, regions = regs_and_regions(dump)
        frame = dump.sp - 0x68 - (4 if dump.xpsr & (1 << 9) else 0)
        words = None
        for start, data in regions:
            if start <= frame + 32 and frame + 100 <= start + len(data):
                words = struct.unpack_from("<17I", data, frame + 32 - start)
        self.assertIsNotNone(words, "the dump holds the FP frame")
        self.assertTrue(any(words[:16]), "the FP context is live: some s register is not 0")
        path = self.write("m4f-fp.bin", variants(dump)["v2.bin"])
        names = [f"s{i}" for i in range(16)] + ["fpscr"]
        text = gdb_via_server(elf, path, ["info registers " + " ".join(names)])
        self.assertEqual(fp_values(text), dict(zip(names, words)), text)

    def test_frame_address_as_sp(self):
        """Zephyr before z_arm_set_fault_sp stored the frame's address as sp: the frame is
        found there and the SP of the faulting code is past it."""
        elf, own = self.crashes[("m3", "div0")]
        dump = scenarios.Dump(own.read_bytes())
        regs, regions = regs_and_regions(dump)
        frame = dump.sp - 32 - (4 if dump.xpsr & (1 << 9) else 0)
        path = self.write("old-sp.bin", zephyr.binary(2, regs, frame, regions))
        got = json.loads(spoor("crash", "--json", "-e", elf, path).stdout)
        self.assertEqual(int(got["registers"]["sp"], 16), dump.sp)

    def test_format_option(self):
        elf, own = self.crashes[("m3", "div0")]
        path = self.write("forced.bin", variants(scenarios.Dump(own.read_bytes()))["v2.bin"])
        self.assertEqual(spoor("crash", "--format", "zephyr", "-e", elf, path).returncode, 0)
        for fmt, target, words in [("spoor", path, "not a spoor crash dump"),
                                   ("zephyr", own, "not a Zephyr coredump"),
                                   ("elf", path, "unknown format 'elf'")]:
            r = spoor("crash", "--format", fmt, "-e", elf, target)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn(words, r.stderr)

    def test_damaged(self):
        elf, own = self.crashes[("m3", "div0")]
        dump = scenarios.Dump(own.read_bytes())
        regs, regions = regs_and_regions(dump)
        v3 = zephyr.binary(3, regs, dump.sp, regions, crc=True)
        v2 = zephyr.binary(2, regs, dump.sp, regions)
        bad_crc = bytearray(v3)
        bad_crc[200] ^= 1  # inside the memory block
        flash = bytearray(zephyr.flash_image(v2))
        flash[40] ^= 1
        flash_err = bytearray(zephyr.flash_image(v2))
        flash_err[12:16] = struct.pack("<i", -5)
        riscv = bytearray(v2)
        riscv[4] = 4
        log = zephyr.log(v2).decode()
        cases = {
            "cut inside a memory block": (v2[:len(v2) - 100], "truncated: memory block"),
            "cut before the CRC trailer": (v3[:-7], "announces a CRC trailer"),
            "bad CRC": (bytes(bad_crc), "bad CRC trailer"),
            "unknown block": (v2 + b"Q\x01\x00", "unknown block id 0x51"),
            "RISC-V target": (bytes(riscv), "target code 4"),
            "log without END": (log[:log.index("#CD:END#")].encode(), "no #CD:END#"),
            "log with bad hex": (log.replace("#CD:5a45", "#CD:5x45").encode(), "hex byte pairs"),
            "log reporting an error": (log.replace("#CD:END#", "#CD:ERROR CANNOT DUMP#").encode(),
                                       "ERROR CANNOT DUMP"),
            "flash bad checksum": (bytes(flash), "bad checksum"),
            "flash cut": (zephyr.flash_image(v2, partition=0)[:200], "truncated"),
            "flash error recorded": (bytes(flash_err), "recorded error -5"),
        }
        for name, (data, words) in cases.items():
            with self.subTest(name):
                r = spoor("crash", "-e", elf, self.write("damaged.bin", data))
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)


class ZephyrThreadsMetadata(unittest.TestCase):
    """The threads-metadata block: the Zephyr-shaped firmware of test_crash_threads_freertos_
    zephyr (tests/e2e/fw/rtos_ctx_fw.c -DCTX_ZEPHYR, four threads that really switch) stopped by
    gdb at fw_checkpoint. Its RAM goes into the dump as memory blocks except the _kernel struct,
    which only the 'T' block carries (as CONFIG_DEBUG_COREDUMP_THREADS_METADATA writes it): spoor
    crash --threads on the dump must list the threads and backtraces `spoor crash --threads
    --gdb` gives on the stopped target; without the 'T' block the kernel's thread list is gone."""

    def test_threads_from_kernel_block(self):
        from test_crash_threads import spoor_functions
        from test_crash_threads_freertos_zephyr import CORES, gdb_reference
        from test_top_sched import stop_parked
        from test_unwind_live import build_test_firmware

        flags, machine, flash, ram_origin, _fpu = CORES["m3"]
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram_origin,
                                      work / "zephyr-m3.elf", extra=["-DCTX_ZEPHYR"])
            symbols = harness.symbol_addresses(elf)
            qemu, _saved = gdb_reference(elf, machine, ram_origin, "zephyr", "m3", work, symbols)
            try:
                stop_parked(qemu.gdb_port)
                live = spoor("crash", "-e", elf, "--gdb", f"127.0.0.1:{qemu.gdb_port}",
                             "--threads", "--json")
            finally:
                qemu.close()
            self.assertEqual(live.returncode, 0, live.stderr)
            ref = json.loads(live.stdout)
            nm = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True,
                                text=True, check=True).stdout
            kernel = next(line.split() for line in nm.splitlines()
                          if line.split()[-1] == "_kernel")
            k_addr, k_size = int(kernel[0], 16), int(kernel[1], 16)
            ram = (work / "ram.bin").read_bytes()
            k_at = k_addr - ram_origin
            regs = {k: int(v, 16) for k, v in ref["registers"].items()
                    if k in CORE + CALLEE + ["r12"]}
            regions = [(start, data) for start, data in
                       [(ram_origin, ram[:k_at]), (k_addr + k_size, ram[k_at + k_size:])] if data]
            meta = zephyr.threads_block(ram[k_at:k_at + k_size])
            with_t = self.write_dump(work, "threads.bin",
                                     zephyr.binary(2, regs, regs["sp"], regions, extra=meta))
            got = spoor("crash", "-e", elf, "--threads", "--json", with_t)
            self.assertEqual(got.returncode, 0, got.stderr)
            report = json.loads(got.stdout)
            self.assertEqual(report["rtos"], "Zephyr")
            self.assertEqual(len(report["threads"]), 4)
            self.assertEqual([(t["name"], t["tcb"], spoor_functions(t)) for t in report["threads"]],
                             [(t["name"], t["tcb"], spoor_functions(t)) for t in ref["threads"]])
            without = self.write_dump(work, "no-threads.bin",
                                      zephyr.binary(2, regs, regs["sp"], regions))
            bare = spoor("crash", "-e", elf, "--threads", "--json", without)
            self.assertNotEqual(
                [t["name"] for t in json.loads(bare.stdout).get("threads") or []]
                if bare.returncode == 0 else [], [t["name"] for t in ref["threads"]])

    def write_dump(self, work, name, data):
        path = work / name
        path.write_bytes(data)
        return path


if __name__ == "__main__":
    unittest.main()
