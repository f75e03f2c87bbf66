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
5. An MTB-M0+ whose register block is not at the MTB-M33's address (--mtb-regs): mtb-m0.elf
   (examples/mtb for the M0, standing in for an M0+ as in test_mtb.py; the register block is
   its .noinit array mtb_fake_area, found with nm) runs the `loop` scenario; the virtual MTB of
   the first run is loaded into RAM for a second one, stopped by gdb-multiarch at
   HardFault_Handler and saved with spoor-snapshot. On that snapshot (--regs/--mem) and live
   on the same stop (--gdb), `spoor crash --mtb-regs ADDR` lists the newest N packets of the
   virtual MTB, equal to `spoor mtb --mtb-regs ADDR`'s on the same input, text and JSON;
   without --mtb-regs there is no section (nothing at 0xE0043000); the page of `spoor report
   --mtb-regs` holds that same report. A block given but not readable, or all zero, gets the
   section with why; a misaligned address is one error line, exit 2.
"""
import json
import os
import re
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


def virtual_mtb(elf, machine, args, d, size, base):
    """A first run of args (the program's semihosting words) with QEMU's execution log, which
    tools/virtual_mtb.py turns into an MTB of size bytes at base: (register block image, buffer
    image, ground truth), and the -device loader arguments that put both images at (register
    block, buffer) addresses given to the returned function."""
    log = d / "exec.log"
    r = subprocess.run(harness.qemu_command(elf, machine, semihosting_args=args + f",arg="
                                            f"{d / 'first.dump'}") +
                       ["-icount", "shift=0", "-singlestep", "-d", "exec,nochain,int", "-D",
                        str(log)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    regs, buf, expect = d / "regs.bin", d / "buf.bin", d / "expect.json"
    subprocess.run([sys.executable, str(VIRTUAL_MTB), "--elf", str(elf), "--log", str(log),
                    "--size", str(size), "--base", hex(base), "--regs-out", str(regs),
                    "--buffer-out", str(buf), "--expect-out", str(expect)], check=True,
                   timeout=120)
    log.unlink()  # large

    def loaders(area, buffer_at):
        return ["-device", f"loader,file={regs},addr={area:#x},force-raw=on",
                "-device", f"loader,file={buf},addr={buffer_at:#x},force-raw=on"]
    return regs, json.loads(expect.read_text()), loaders


def dump_with(elf, machine, args, loaders, dump):
    """The dump of a run of args with the virtual MTB's images loaded."""
    r = subprocess.run(harness.qemu_command(elf, machine, semihosting_args=f"{args},arg={dump}")
                       + loaders, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and dump.is_file(), r.stdout + r.stderr
    return dump


def calls_mtb_dump(d):
    """calls_trace_mtb-m33's `fault` dump, holding both the MTB record and the call ring:
    (elf, machine, dump, register block image, ground truth, loaders)."""
    elf, machine = harness.example("calls_trace_mtb", "m33")
    args = "arg=calls_trace,arg=fault"
    regs, expect, loaders = virtual_mtb(elf, machine, args, d, SIZE, BUFFER)
    loaders = loaders(AREA, BUFFER)
    return elf, machine, dump_with(elf, machine, args, loaders, d / "crash.dump"), regs, \
        expect, loaders


class CrashSections(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.elf, cls.machine, cls.dump, cls.regs, cls.expect, cls.loaders = calls_mtb_dump(
            Path(cls.tmp.name))

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
            deadline = time.monotonic() + 120
            # until the port is up and the demo has run: its ring ends with DEMO_Run's return
            # (the firmware then waits in calls_done())
            while time.monotonic() < deadline:
                time.sleep(0.2)
                r = run("calls", "-e", self.elf, "--json", "--gdb", f"127.0.0.1:{port}",
                        check=False)
                last = r.stdout.splitlines()[-1:] if r.returncode == 0 else []
                if last and json.loads(last[0]).get("kind") == "exit" and \
                        json.loads(last[0]).get("function") == "DEMO_Run":
                    break
            else:
                self.fail(f"the demo did not end in 120 s: {r.stdout[-300:]}{r.stderr}")
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


M0_SCENARIO, M0_SIZE = "loop", 1024


class CrashSectionsM0(unittest.TestCase):
    """--mtb-regs: an MTB-M0+ block where the vendor put it (here: the M0 build's RAM)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.elf, cls.machine = harness.example("mtb", "m0")
        cls.area = harness.symbol_addresses(cls.elf)["mtb_fake_area"]
        cls.buffer_at = cls.area + 0x400  # examples/mtb/mtb.c: MTB_FAKE_BUFFER_OFFSET on the M0
        args = f"arg=mtb,arg={M0_SCENARIO}"
        _, cls.expect, loaders = virtual_mtb(cls.elf, cls.machine, args, d, M0_SIZE,
                                             cls.buffer_at)
        assert cls.expect["faulted"] and len(cls.expect["packets"]) > 16
        # the images in RAM: a run to the dump, and one stopped at the fault (its gdb port stays
        # up for --gdb)
        loaders = loaders(cls.area, cls.buffer_at)
        cls.dump = dump_with(cls.elf, cls.machine, args, loaders, d / "crash.dump")
        cls.port = harness.free_port()
        command = harness.qemu_command(cls.elf, cls.machine, gdb_port=cls.port,
                                       semihosting_args=f"arg=mtb,arg={M0_SCENARIO},"
                                                        f"arg={d / 'unused.dump'}")
        cls.qemu = subprocess.Popen(command + loaders, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        harness.wait_until("QEMU's gdb port", lambda: harness._port_is_listening(cls.port))
        snap = d / "snap"
        text = harness.run_gdb(cls.elf, cls.port, [
            "break HardFault_Handler", "continue", f"source {SOURCE / 'gdb' / 'spoor.py'}",
            f"spoor-snapshot {snap}", "disconnect"])
        assert (snap / "regs.json").is_file(), text
        cls.snapshot = ["--regs", snap / "regs.json"]
        for image in sorted(snap.glob("0x*.bin")):
            cls.snapshot += ["--mem", f"{image.stem}:{image}"]
        cls.dir = d

    @classmethod
    def tearDownClass(cls):
        cls.qemu.kill()
        cls.qemu.wait()
        cls.tmp.cleanup()

    def check_input(self, inp, n):
        regs = ["--mtb-regs", hex(self.area)]
        crash = json.loads(run("crash", "-e", self.elf, "--json", "--branches", n, *regs,
                               *inp).stdout)
        self.assertEqual(crash["backtrace"][0]["function"], "HardFault_Handler")
        mtb = lines_json(run("mtb", "-e", self.elf, "--json", *regs, *inp).stdout)
        self.assertEqual(crash["branches"], mtb[-n:])
        truth = self.expect["packets"]
        self.assertEqual([{k: b[k] for k in ("src", "dst", "a", "s")}
                          for b in crash["branches"]], truth[-n:])
        self.assertEqual(crash["branches_info"], {"from": "memory", "total": len(truth),
                                                  "wrapped": self.expect["wrapped"],
                                                  "error": None})
        text = run("crash", "-e", self.elf, "--branches", n, *regs, *inp).stdout
        head, rows = section(text, "last branches (MTB")
        self.assertIn(f"newest {n} of {len(truth)}", head)
        self.assertEqual(rows, run("mtb", "-e", self.elf, *regs, *inp).stdout.splitlines()[-2 * n:])
        # without --mtb-regs: nothing at the MTB-M33's address, no section
        default = json.loads(run("crash", "-e", self.elf, "--json", *inp).stdout)
        self.assertNotIn("branches", default)
        self.assertNotIn("last branches", run("crash", "-e", self.elf, *inp).stdout)
        return crash

    def test_snapshot(self):
        crash = self.check_input(self.snapshot, 6)
        self.assertEqual(crash["branches"][-1]["kind"], "exception_entry")

    def test_dump(self):
        # the dump of the run not stopped holds the MTB record its fault handler saved: the
        # same branches, with or without --mtb-regs (the record is used)
        for regs in ([], ["--mtb-regs", hex(self.area)]):
            crash = json.loads(run("crash", "-e", self.elf, "--json", *regs, self.dump).stdout)
            self.assertEqual([{k: b[k] for k in ("src", "dst", "a", "s")}
                              for b in crash["branches"]], self.expect["packets"][-16:])
            self.assertEqual(crash["branches_info"]["from"], "dump")

    def test_live_gdb(self):
        self.check_input(["--gdb", f"127.0.0.1:{self.port}"], 16)

    def test_report_page(self):
        page = self.dir / "m0.html"
        args = ["-e", self.elf, "--branches", 5, "--mtb-regs", hex(self.area), *self.snapshot]
        run("report", *args, "-o", page)
        m = re.search(r'<script type="application/json" id="spoor-crash">(.*?)</script>',
                      page.read_text(), re.S)
        self.assertEqual(json.loads(m.group(1)),
                         json.loads(run("crash", *args, "--json").stdout))
        self.assertEqual(len(json.loads(m.group(1))["branches"]), 5)

    def test_block_not_there(self):
        for addr, why in ((0x30000000, "cannot read the MTB registers at 0x30000000"),
                          (0x20000000, "the MTB registers at 0x20000000 are all zero")):
            crash = json.loads(run("crash", "-e", self.elf, "--json", "--mtb-regs", hex(addr),
                                   *self.snapshot).stdout)
            self.assertEqual(crash["branches"], [])
            self.assertIn(why, crash["branches_info"]["error"])
            text = run("crash", "-e", self.elf, "--mtb-regs", hex(addr), *self.snapshot).stdout
            self.assertIn(f"last branches (MTB): none: {self.snapshot[1]}: ", text)
            self.assertIn(why, text)
        for cmd, out in (("crash", []), ("report", ["-o", self.dir / "x.html"])):
            bad = run(cmd, "-e", self.elf, *out, "--mtb-regs", "0x20002002", *self.snapshot,
                      check=False)
            self.assertEqual((bad.returncode, bad.stderr),
                             (2, f"spoor {cmd}: --mtb-regs: expected a word-aligned address, "
                                 "got '0x20002002'\n"))


if __name__ == "__main__":
    unittest.main()
