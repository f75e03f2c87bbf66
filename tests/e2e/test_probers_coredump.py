"""probe-rs coredumps: spoor crash on a probe-rs `.coredump` of a crash equals spoor crash on the
same crash as spoor's own dump.

The crash examples fault in QEMU and write spoor's dump (test_crash_scenarios.crash_and_collect).
The same crash is then written as probe-rs's `.coredump` would hold it by probers_coredump_gen
(a C program writing MessagePack with msgpack-c, built by the tests), in the layout probe-rs's
CoreDump::store writes: rmp_serde::encode::write_named of struct CoreDump
(probe-rs/src/core/dump.rs at github.com/probe-rs/probe-rs commit
67993c4b6f3fcbabfc811d1df334acfe66cef150): a map of the field names "registers" (register id ->
{"U32": value}), "data" ([{"start", "end"}, [bytes as integers]] per range), "instruction_set",
"supports_native_64bit_access", "core_type" ("armv6m", "armv7m", "armv7em", "armv8m"),
"fpu_support", "floating_point_register_count". The register ids are probe-rs's Cortex-M ids
(probe-rs/src/architecture/arm/core/registers/cortex_m.rs): 0-15 r0-r15, 16 xPSR, 17 MSP, 18 PSP,
20 EXTRA (CONTROL in bits 31:24), 33 FPSCR, 64-95 s0-s31. The registers are those of the code
that faulted, as a core halted at the faulting instruction holds them; the memory is the dump's.

`spoor crash` on each must print the backtrace spoor's own dump gives (text and --json) and the
same registers; gdb-multiarch over `spoor gdbserver` reads back the M4F's s0-s15 and FPSCR as
written. Damaged files each give one error line and exit 2. Real files probe-rs wrote (its own
test data, tests/fuzz/corpus_probers/README.md) are checked by tests/unit/snapshot/test_dump_probers.c.

With SPOOR_WRITE_SEEDS=DIR the files of the fuzz seeds (tests/fuzz/corpus_probers) are written
there: every register and the 512 bytes of stack above SP.
"""
import concurrent.futures
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_crash_scenarios as scenarios  # noqa: E402
from harness import fp_values, gdb_via_server, spoor  # noqa: E402
from test_zephyr_coredump import backtrace_text, collect  # noqa: E402

GEN = os.environ.get("SPOOR_PROBERS_GEN", "probers_coredump_gen")
CASES = [("m0", "badptr"), ("m3", "div0"), ("m3", "psp"), ("m3", "nested"), ("m4f", "div0"),
         ("m33", "busfault")]
CORE_TYPE = {"m0": "armv6m", "m3": "armv7m", "m4f": "armv7em", "m33": "armv8m"}
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr", "msp", "psp", "control"]


def fp_words(dump):
    """s0-s15 and fpscr of the REGISTERS record (words 24-40), valid with SPOOR_REGS_FP_VALID."""
    words = struct.unpack_from("<41I", dump.record(1), 0)
    return list(words[24:40]), words[40]


def spec(core, dump, tmp, name, stack_only=False, extra=()):
    """The generator's input for the crash in dump: its registers and memory."""
    lines = [f"core_type {CORE_TYPE[core]}", f"fpu {1 if core == 'm4f' else 0}"]
    values = dump.r + [dump.sp, dump.lr, dump.pc, dump.xpsr]
    lines += [f"reg {i} {v:#x}" for i, v in enumerate(values)]
    lines += [f"reg 17 {dump.msp:#x}", f"reg 18 {dump.psp:#x}",
              f"reg 20 {dump.control << 24:#x}"]
    if core == "m4f":
        s, fpscr = fp_words(dump)
        lines += [f"reg {64 + i} {v:#x}" for i, v in enumerate(s)] + [f"reg 33 {fpscr:#x}"]
    for n, (_, rtype, payload) in enumerate(dump.records):
        if rtype != 3:  # MEMORY: u32 address, u16 kind, u16 reserved, bytes
            continue
        start, data = struct.unpack_from("<I", payload, 0)[0], payload[8:]
        if stack_only:
            if not start <= dump.sp < start + len(data):
                continue
            data = data[dump.sp - start:dump.sp - start + 512]
            start = dump.sp
        path = Path(tmp) / f"{name}-mem{n}.bin"
        path.write_bytes(data)
        lines.append(f"mem {start:#x} {path}")
    return "\n".join(list(lines) + list(extra)) + "\n"


def generate(text, out):
    subprocess.run([GEN, str(out)], input=text, text=True, check=True, timeout=30)
    return out


class ProbersCoredump(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            futures = {case: pool.submit(collect, *case, cls.tmp.name) for case in CASES}
            cls.crashes = {case: f.result() for case, f in futures.items()}
        seeds = os.environ.get("SPOOR_WRITE_SEEDS")
        if seeds:
            for (core, scenario), (_elf, own) in cls.crashes.items():
                dump = scenarios.Dump(own.read_bytes())
                text = spec(core, dump, cls.tmp.name, "seed", stack_only=True)
                generate(text, Path(seeds) / f"{core}_{scenario}.coredump")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def probers_file(self, core, scenario, extra=(), name="pr"):
        _elf, own = self.crashes[(core, scenario)]
        dump = scenarios.Dump(own.read_bytes())
        out = Path(self.tmp.name) / f"{core}-{scenario}-{name}.coredump"
        return generate(spec(core, dump, self.tmp.name, name, extra=extra), out)

    def test_same_crash_report(self):
        for (core, scenario), (elf, own) in self.crashes.items():
            with self.subTest(core=core, scenario=scenario):
                path = self.probers_file(core, scenario)
                self.assertEqual(path.read_bytes()[:11], b"\x87\xa9registers")
                ref_text = spoor("crash", "-e", elf, own)
                ref = json.loads(spoor("crash", "--json", "-e", elf, own).stdout)
                text = spoor("crash", "-e", elf, path)
                self.assertEqual(text.returncode, 0, text.stderr)
                self.assertEqual(text.stderr, "")
                self.assertIn("reason: none recorded (a debugger snapshot", text.stdout)
                got = json.loads(spoor("crash", "--json", "-e", elf, path).stdout)
                for reg in REGS:
                    self.assertEqual(got["registers"][reg], ref["registers"][reg], reg)
                # probe-rs has no EXC_RETURN register (registers/cortex_m.rs): not made up
                self.assertIsNone(got["registers"]["exc_return"])
                self.assertIn(f"control {int(ref['registers']['control'], 16):#010x}  "
                              "exc_return unknown (not in the input)\n", text.stdout)
                self.assertEqual(got["backtrace"], ref["backtrace"])
                self.assertEqual(backtrace_text(text.stdout), backtrace_text(ref_text.stdout))
                forced = spoor("crash", "--format", "probe-rs", "--json", "-e", elf, path)
                self.assertEqual(json.loads(forced.stdout)["backtrace"], ref["backtrace"])

    def test_fp_registers(self):
        """M4F: s0-s15 and FPSCR as gdb-multiarch reads them through spoor gdbserver equal the
        words written into the file (the FP frame's, from spoor's own dump)."""
        elf, own = self.crashes[("m4f", "div0")]
        dump = scenarios.Dump(own.read_bytes())
        s, fpscr = fp_words(dump)
        self.assertTrue(any(s), "the FP context is live: some s register is not 0")
        path = self.probers_file("m4f", "div0")
        names = [f"s{i}" for i in range(16)] + ["fpscr"]
        text = gdb_via_server(elf, path, ["info registers " + " ".join(names)])
        self.assertEqual(fp_values(text), dict(zip(names, s + [fpscr])), text)

    def test_format_option(self):
        elf, own = self.crashes[("m3", "div0")]
        path = self.probers_file("m3", "div0")
        for fmt, target, words in [("spoor", path, "not a spoor crash dump"),
                                   ("probe-rs", own, "probe-rs coredump: "),
                                   ("proberss", path, "unknown format 'proberss'")]:
            r = spoor("crash", "--format", fmt, "-e", elf, target)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(words, r.stderr)

    def test_damaged(self):
        elf, own = self.crashes[("m3", "div0")]
        dump = scenarios.Dump(own.read_bytes())
        good = self.probers_file("m3", "div0").read_bytes()
        stack = next(p for _, t, p in dump.records if t == 3 and
                     struct.unpack_from("<I", p, 0)[0] <= dump.sp)
        start = struct.unpack_from("<I", stack, 0)[0]
        other = Path(self.tmp.name) / "other.bin"
        other.write_bytes(bytes(b ^ 0xff for b in stack[8:40]))
        cases = {
            "cut in the memory": (good[:len(good) - 100], "truncated"),
            "cut in the registers": (good[:40], "truncated"),
            "no registers": (["omit registers"], "no \"registers\" field"),
            "no data": (["omit data"], "no \"data\" field"),
            "no core_type": (["omit core_type"], "no \"core_type\" field"),
            "registers a string": (["wrongtype registers"], "\"registers\" is not a map"),
            "data a string": (["wrongtype data"], "\"data\" is not an array"),
            "fpu_support a string": (["wrongtype fpu_support"], "not a boolean"),
            "register value a string": (["regstr 40"], "register 40: not a RegisterValue"),
            "64-bit register value": (["reg64 19 0x100000000"], "wider than 32 bits"),
            "register twice": (["reg 3 0"], "register 3 given twice"),
            "a core register missing": (["noreg 5"], "no value for register 5 (r5)"),
            "range end wrong": ([f"memend 0x10000000 0x10000100 {other}"], "holds 32 bytes"),
            "overlapping ranges": ([f"mem {start + 8:#x} {other}"], "overlap"),
            "RISC-V core": (["core_type riscv"], "core type riscv, not a Cortex-M core"),
            "trailing bytes": (good + b"\xc0", "1 bytes after the CoreDump map"),
            # msgpack-c would allocate 2^32 map entries (128 GiB) before finding them missing
            "huge map count": (good[:11] + b"\xdf\xff\xff\xff\xff" + good[11:200],
                               "a MessagePack array or map declares 85899346"),
            "not MessagePack": (b"\x81\xa9registers\xc1", "not MessagePack data"),
        }
        for name, (what, words) in cases.items():
            with self.subTest(name):
                if isinstance(what, bytes):
                    path = Path(self.tmp.name) / "damaged.coredump"
                    path.write_bytes(what)
                else:
                    path = self.probers_file("m3", "div0", extra=what, name="damaged")
                r = spoor("crash", "-e", elf, path)  # found from the content
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)


if __name__ == "__main__":
    unittest.main()
