"""GDB's own core files of a bare-metal target: `spoor crash` on gdb-multiarch's `gcore` of a
QEMU example stopped at a fault equals `spoor crash --gdb` at the same stop.

The crash example faults in QEMU under its gdbstub; gdb-multiarch stops at the first
instruction of the fault handler (`break *UsageFault_Handler`, HardFault on the M0), writes
`gcore` (an ELF core: NT_PRSTATUS, NT_ARM_VFP on the FP cores, NT_GDB_TDESC, a LOAD segment per
memory range) and disconnects, which leaves QEMU stopped. `spoor crash --json --gdb` then reads
the same stop live. Backtrace (every field) and core registers must be equal; on the M4F the
FP registers gdb put in NT_ARM_VFP, read back through `spoor gdbserver` serving the core, must
equal what gdb showed at the stop. A core cut short or not an ARM core gives one line, exit 2.

The scheduler example (examples/sched, four tasks with their own TCBs and saved contexts) stopped
in a task at sched_checkpoint: `spoor crash --threads` on gdb's gcore lists the threads, each with
its state, registers and backtrace, as `spoor crash --threads --gdb` does at the same stop.
"""
import json
import struct
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import test_crash_scenarios as scenarios  # noqa: E402
from harness import fp_values, gdb_via_server, spoor  # noqa: E402

CASES = [("m3", "div0", "UsageFault_Handler"), ("m4f", "div0", "UsageFault_Handler"),
         ("m33", "div0", "UsageFault_Handler"), ("m0", "badptr", "HardFault_Handler")]
CORE = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
FP = [f"s{i}" for i in range(32)] + ["fpscr"]


class ElfCore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = {}
        for core, scenario, handler in CASES:
            elf, machine = harness.example("crash", core)
            path = Path(cls.tmp.name) / f"{core}.core"
            fp = ["info registers " + " ".join(FP)] if core == "m4f" else []
            with scenarios.CrashQemu(elf, machine, ["crash", scenario, "/dev/null"],
                                     gdb=True) as qemu:
                text = harness.run_gdb(elf, qemu.gdb_port, [f"break *{handler}", "continue",
                                                            *fp, f"gcore {path}", "disconnect"])
                live = spoor("crash", "--json", "-e", elf, "--gdb",
                             f"127.0.0.1:{qemu.gdb_port}")
            cls.results[core] = (elf, path, text, live)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_same_as_live(self):
        for core, (elf, path, text, live) in self.results.items():
            with self.subTest(core=core):
                self.assertTrue(path.is_file(), text)
                self.assertEqual(live.returncode, 0, live.stderr)
                ref = json.loads(live.stdout)
                got = spoor("crash", "--json", "-e", elf, path)
                self.assertEqual(got.returncode, 0, got.stderr)
                report = json.loads(got.stdout)
                for reg in CORE:
                    self.assertEqual(report["registers"][reg], ref["registers"][reg], reg)
                self.assertEqual(report["backtrace"], ref["backtrace"])
                self.assertGreater(len(report["backtrace"]), 3)
                self.assertEqual(report["stop"], ref["stop"])

    def test_fp_registers(self):
        elf, path, text, _live = self.results["m4f"]
        want = fp_values(text)
        self.assertEqual(len(want), 33, text)
        self.assertTrue(any(want.values()), "the FP context is live: some register is not 0")
        got = fp_values(gdb_via_server(elf, path, ["info registers " + " ".join(FP)]))
        self.assertEqual(got, want)

    def test_format_option(self):
        elf, path, _text, _live = self.results["m3"]
        self.assertEqual(spoor("crash", "--format", "elfcore", "-e", elf, path).returncode, 0)
        r = spoor("crash", "--format", "elfcore", "-e", elf, elf)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a core file", r.stderr)

    def test_damaged(self):
        elf, path, _text, _live = self.results["m3"]
        data = path.read_bytes()
        not_arm = bytearray(data)
        struct.pack_into("<H", not_arm, 18, 62)  # e_machine EM_X86_64
        cases = {
            "cut in the memory": (data[:len(data) // 2], "ELF core: truncated"),
            "cut in the headers": (data[:200], "ELF core: truncated"),
            "not ARM": (bytes(not_arm), "not of an ARM target"),
        }
        for name, (blob, words) in cases.items():
            with self.subTest(name):
                damaged = Path(self.tmp.name) / "damaged.core"
                damaged.write_bytes(blob)
                r = spoor("crash", "-e", elf, damaged)
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)

    def test_rtos_threads(self):
        elf, machine = harness.example("sched", "m3")
        path = Path(self.tmp.name) / "sched.core"
        with harness.Qemu(elf, machine, gdb=True) as qemu:
            text = harness.run_gdb(elf, qemu.gdb_port, ["break sched_checkpoint", "continue",
                                                        f"gcore {path}", "disconnect"])
            live = spoor("crash", "--threads", "--json", "-e", elf, "--gdb",
                         f"127.0.0.1:{qemu.gdb_port}")
        self.assertTrue(path.is_file(), text)
        self.assertEqual(live.returncode, 0, live.stderr)
        got = spoor("crash", "--threads", "--json", "-e", elf, path)
        self.assertEqual(got.returncode, 0, got.stderr)
        ref, report = json.loads(live.stdout), json.loads(got.stdout)
        self.assertEqual(len(ref["threads"]), 4)
        self.assertEqual(report["threads"], ref["threads"])
        self.assertEqual(report["backtrace"], ref["backtrace"])
        for reg in CORE:
            self.assertEqual(report["registers"][reg], ref["registers"][reg], reg)


if __name__ == "__main__":
    unittest.main()
