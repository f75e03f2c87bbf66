"""spoor crash shows the last branches (MTB) and the last calls (call recorder) the input holds.

calls_trace_mtb-m33.elf (examples/calls_trace built with CALLS_TRACE_MTB: the call recorder and a
fake MTB-M33 in RAM that the fault handler saves, as examples/mtb) runs its `fault` mode in QEMU:

1. A first run with QEMU's execution log: tools/virtual_mtb.py turns it into the register block
   and buffer a real MTB would hold at the fault, and the packets it wrote (the ground truth).
2. A second run with those images loaded into the fake area: the dump holds the MTB record and
   the call ring. `spoor crash --json --branches N --calls M` must list, oldest first, exactly
   the newest N entries of `spoor mtb --json` and the newest M of `spoor calls --json` on the
   same dump, and the branches must be the newest N packets of the virtual MTB; the text
   report's sections must be the same lines as spoor mtb's and spoor calls' text, and say what
   was lost (the buffer wrapped, the ring did not).
3. Live, over QEMU's gdbstub (`hold` mode, the buffer image loaded, the register block given
   with --mem 0xE0043000:regs.bin on top): the same equalities for --gdb input.
4. Inputs without them (a crash example's dump) have no sections, and --branches 0 --calls 0
   leave them out; a bad count is one error line, exit 2.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
VIRTUAL_MTB = SOURCE / "tools" / "virtual_mtb.py"
AREA, BUFFER, SIZE = 0x38100000, 0x38101000, 1024  # calls_trace.c's fake MTB on the M33
MTB_M33 = 0xE0043000


def run(*args, check=True):
    r = subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise AssertionError(f"spoor {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r


def lines_json(text):
    return [json.loads(line) for line in text.splitlines()]


def section(text, title):
    """The lines of the text report's section whose heading starts with title."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start], lines[start + 1:end]


class CrashSections(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.elf, cls.machine = harness.example("calls_trace_mtb", "m33")
        log = d / "exec.log"
        command = harness.qemu_command(cls.elf, cls.machine,
                                       semihosting_args=f"arg=calls_trace,arg=fault,"
                                                        f"arg={d / 'first.dump'}")
        r = subprocess.run(command + ["-icount", "shift=0", "-singlestep", "-d",
                                      "exec,nochain,int", "-D", str(log)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        cls.regs, cls.buf, expect = d / "regs.bin", d / "buf.bin", d / "expect.json"
        subprocess.run([sys.executable, str(VIRTUAL_MTB), "--elf", str(cls.elf), "--log",
                        str(log), "--size", str(SIZE), "--base", hex(BUFFER), "--regs-out",
                        str(cls.regs), "--buffer-out", str(cls.buf), "--expect-out",
                        str(expect)], check=True, timeout=120)
        log.unlink()
        cls.expect = json.loads(expect.read_text())
        cls.loaders = ["-device", f"loader,file={cls.regs},addr={AREA:#x},force-raw=on",
                       "-device", f"loader,file={cls.buf},addr={BUFFER:#x},force-raw=on"]
        cls.dump = d / "crash.dump"
        command = harness.qemu_command(cls.elf, cls.machine,
                                       semihosting_args=f"arg=calls_trace,arg=fault,"
                                                        f"arg={cls.dump}")
        r = subprocess.run(command + cls.loaders, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and cls.dump.is_file(), r.stdout + r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_input(self, inp, nb, nc, wrapped):
        crash = json.loads(run("crash", "-e", self.elf, "--json", "--branches", nb, "--calls",
                               nc, *inp).stdout)
        mtb = lines_json(run("mtb", "-e", self.elf, "--json", *inp).stdout)
        calls = lines_json(run("calls", "-e", self.elf, "--json", *inp).stdout)
        self.assertGreater(len(mtb), nb)
        self.assertGreater(len(calls), nc)
        self.assertEqual(crash["branches"], mtb[-nb:])
        self.assertEqual(crash["calls"], calls[-nc:])
        self.assertEqual(crash["branches_info"],
                         {"from": "dump" if len(inp) == 1 else "memory", "total": len(mtb),
                          "wrapped": wrapped, "error": None})
        self.assertEqual(crash["calls_info"]["total"], len(calls))
        self.assertIsNone(crash["calls_info"]["error"])
        # the text: the same rows as spoor mtb's and spoor calls' own listings
        text = run("crash", "-e", self.elf, "--branches", nb, "--calls", nc, *inp).stdout
        head, rows = section(text, "last branches (MTB")
        self.assertIn(f"newest {nb} of {len(mtb)}", head)
        self.assertIn("the buffer wrapped" if wrapped else "not wrapped", head)
        mtb_text = run("mtb", "-e", self.elf, *inp).stdout.splitlines()
        self.assertEqual(rows, mtb_text[-2 * nb:])
        head, rows = section(text, "last calls (call recorder")
        self.assertIn(f"newest {nc} of {len(calls)} records", head)
        self.assertIn("not wrapped", head)
        calls_text = run("calls", "-e", self.elf, *inp).stdout.splitlines()
        self.assertEqual(rows, calls_text[-nc:])
        return crash

    def test_dump(self):
        crash = self.check_input([self.dump], 5, 7, self.expect["wrapped"])
        truth = [{"src": p["src"], "dst": p["dst"], "a": p["a"], "s": p["s"]}
                 for p in self.expect["packets"][-5:]]
        self.assertEqual([{k: b[k] for k in ("src", "dst", "a", "s")}
                          for b in crash["branches"]], truth)
        # the newest record is the call into decide(), which faulted; the newest branch the
        # fault's exception entry
        self.assertEqual(crash["calls"][-1]["function"], "decide")
        self.assertEqual(crash["branches"][-1]["kind"], "exception_entry")
        default = json.loads(run("crash", "-e", self.elf, "--json", self.dump).stdout)
        self.assertEqual(len(default["branches"]), 16)
        self.assertEqual(len(default["calls"]), 16)

    def test_live_gdb(self):
        port = harness.free_port()
        command = harness.qemu_command(self.elf, self.machine,
                                       semihosting_args="arg=calls_trace,arg=hold")
        qemu = subprocess.Popen(command + self.loaders + ["-gdb", f"tcp:127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            inp = ["--gdb", f"127.0.0.1:{port}", "--mem", f"{MTB_M33:#x}:{self.regs}"]
            for _ in range(50):  # until the port is up and the demo has run
                time.sleep(0.2)
                r = run("calls", "-e", self.elf, "--json", "--gdb", f"127.0.0.1:{port}",
                        check=False)
                if r.returncode == 0 and len(r.stdout.splitlines()) > 20:
                    break
            self.check_input(inp, 3, 9, self.expect["wrapped"])
        finally:
            qemu.kill()
            qemu.wait()

    def test_without_them(self):
        crash_elf, _ = harness.example("crash", "m33")
        with tempfile.TemporaryDirectory() as tmp:
            dump = Path(tmp) / "crash.bin"
            command = harness.qemu_command(crash_elf, harness.machine_for("m33"),
                                           semihosting_args=f"arg=crash,arg=busfault,"
                                                            f"arg={dump}")
            subprocess.run(command, capture_output=True, timeout=60, check=True)
            report = json.loads(run("crash", "-e", crash_elf, "--json", dump).stdout)
            for key in ("branches", "branches_info", "calls", "calls_info"):
                self.assertNotIn(key, report)
            text = run("crash", "-e", crash_elf, dump).stdout
            self.assertNotIn("last branches", text)
            self.assertNotIn("last calls", text)
        off = run("crash", "-e", self.elf, "--json", "--branches", "0", "--calls", "0",
                  self.dump).stdout
        self.assertNotIn('"branches"', off)
        self.assertNotIn('"calls"', off)
        bad = run("crash", "-e", self.elf, "--calls", "x", self.dump, check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(bad.stderr.count("\n"), 1)
        self.assertIn("--calls", bad.stderr)


if __name__ == "__main__":
    unittest.main()
