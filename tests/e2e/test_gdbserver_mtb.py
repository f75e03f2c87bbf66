"""spoor gdbserver serves the Micro Trace Buffer as GDB branch trace (docs/gdbserver.md).

The MTB captures are test_mtb's: QEMU runs examples/mtb (Cortex-M33, and the Cortex-M0 standing
in for an M0+), tools/virtual_mtb.py builds from QEMU's execution log the register block and
buffer a real MTB would hold at the fault, with the instructions QEMU executed between the
oldest packet's destination and the newest packet's source (the ground truth); a second run
with those images in RAM writes a crash dump whose MTB record holds them.

For each case (a loop whose 1 KiB buffer wrapped, interrupt preemption on the M0, a 64-byte
buffer that wrapped many times, a jump to a non-executable address) and each input (the crash
dump; --regs with the --mem images and --mtb-regs), stock gdb-multiarch connected to
`spoor gdbserver`:

1. says "Target is recording using Branch Trace Store" at connect (nothing typed);
2. `record instruction-history` lists exactly QEMU's instructions, which are also the ones
   `spoor mtb --flow --json` lists for the same window, same order and addresses; a wrapped
   buffer starts with one gap (GDB's "[decode error (1): instruction overflow]");
3. `info record` counts those instructions plus the gap, `record goto begin` reaches the oldest
   instruction, `record goto end` the stop pc;
4. five `reverse-step`s (after a `reverse-stepi` off the bad jump's address, where GDB has no
   function to step in) walk back through the history: each stop is the history's instruction
   at the position `info record` gives, on the source line `spoor mtb --flow` shows for it,
   each further back than the one before.

Live: QEMU halted at reset with the images in RAM, spoor gdbserver --gdb --mtb-regs reads the
MTB through QEMU's gdbstub: the same history, then a gap (from the fault handler to the reset pc
nothing is known) before the stop pc.

Then: an empty MTB (POSITION 0, not wrapped) gives GDB a history of no instructions; a damaged
buffer (all zeros) gives one warning and GDB no branch trace, the session otherwise as before;
random bytes as packets give GDB a history with gaps and no abort; without an MTB, the
qSupported reply offers no btrace.
"""
import json
import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import unittest
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_mtb  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")

# (core, name, scenario, buffer size)
CASES = [
    ("m33", "loop", "loop", 1024),
    ("m0", "preempt", "preempt", 1024),
    ("m33", "wrapped", "loop", 64),
    ("m33", "badjump", "badjump", 1024),
]

HISTORY = re.compile(r"^(\d+)\t(?:\s*(?:=> )?0x([0-9a-f]+) <|\[decode error \((\d+)\): ([^\]]*)\])",
                     re.M)


@contextmanager
def gdbserver(*args):
    """spoor gdbserver ARGS on a free port: yields (port, stderr lines read at the end)."""
    server = subprocess.Popen([SPOOR, "gdbserver", "--port", "0", *map(str, args)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, preexec_fn=harness._die_with_parent)
    err = []
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        line = server.stdout.readline() if ready else ""
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not match:
            server.kill()
            raise AssertionError(f"spoor gdbserver said {line!r}: {server.communicate()[1]}")
        yield int(match.group(1)), err
    finally:
        try:
            _, stderr = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            harness._kill_group(server)
            _, stderr = server.communicate()
        err.extend(stderr.splitlines())


def between(text, n):
    """The n-th block of gdb output between 'echo <<<' and 'echo >>>'."""
    return text.split("<<<\n")[n + 1].split(">>>\n")[0]


def history(text):
    """[(number, pc or None for a gap, gap text)] of record instruction-history."""
    return [(int(m[1]), int(m[2], 16) if m[2] else None, m[4]) for m in HISTORY.finditer(text)]


def flow_of(elf, args):
    rows = [json.loads(line) for line in
            test_mtb.spoor("-e", elf, "--flow", "--json", *args).stdout.splitlines()]
    return [r for r in rows if "pc" in r]


class GdbserverMtb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cases = {(core, name): test_mtb.Case(cls.tmp.name, core, name, scenario, size)
                     for core, name, scenario, size in CASES}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def regs_json(self, c):
        """The dump's registers (as GDB reads them from spoor gdbserver) as a regs.json."""
        path = Path(c.dir) / "regs.json"
        if path.exists():
            return path
        with gdbserver("-e", c.elf, c.dump) as (port, _):
            text = harness.run_gdb(c.elf, port, ["info registers", "detach"])
        regs = dict(re.findall(r"^(r\d+|sp|lr|pc|xpsr)\s+(0x[0-9a-f]+)", text, re.M))
        self.assertEqual(len(regs), 17, text)
        path.write_text(json.dumps(regs))
        return path

    def inputs(self, c):
        """(name, gdbserver arguments, spoor mtb arguments) of the two inputs of a case."""
        yield "dump", [c.dump], [c.dump]
        yield "mem", ["--regs", self.regs_json(c), *c.mem], c.mem

    def session(self, c, args, steps=5):
        """gdb's view of the MTB through spoor gdbserver: (text, stderr lines, stops)."""
        commands = ["set record instruction-history-size unlimited",
                    "echo <<<\\n", "info record", "echo >>>\\n",
                    "echo <<<\\n", "record instruction-history", "echo >>>\\n",
                    "echo <<<\\n", "p/x $pc", "echo >>>\\n"]
        if c.name == "badjump":  # no function at the stop pc: GDB steps by lines within one
            commands += ["reverse-stepi"]
        for _ in range(steps):
            commands += ["reverse-step", "echo <<<\\n", "p/x $pc", "info record",
                         "info line *$pc", "echo >>>\\n"]
        commands += ["record goto begin", "echo <<<\\n", "p/x $pc", "info record", "echo >>>\\n",
                     "record goto end", "echo <<<\\n", "p/x $pc", "echo >>>\\n", "detach"]
        with gdbserver("-e", c.elf, *args) as (port, err):
            text = harness.run_gdb(c.elf, port, commands, timeout=120)
        return text, err, steps

    def test_history_is_what_qemu_executed(self):
        for key, c in self.cases.items():
            for name, served, mtb_args in self.inputs(c):
                with self.subTest(core=key[0], case=key[1], input=name):
                    self.check_case(c, served, mtb_args)

    def check_case(self, c, served, mtb_args):
        expect = [int(pc, 16) for pc in c.expect["flow"]]
        flow = flow_of(c.elf, mtb_args)
        self.assertEqual([int(r["pc"], 16) for r in flow], expect)
        stop = int(c.expect["packets"][-1]["src"], 16)  # the fault's exception entry
        text, err, steps = self.session(c, served)
        self.assertIn("Target is recording using Branch Trace Store.", text)
        self.assertEqual(len([e for e in err if "MTB" in e]), 1, err)
        self.assertNotIn("warning", "\n".join(err).replace("build-id", ""))
        rows = history(between(text, 1))
        gaps = 1 if c.expect["wrapped"] else 0
        self.assertEqual([pc for _, pc, _ in rows[gaps:]], expect, between(text, 1)[-2000:])
        if gaps:
            self.assertEqual(rows[0], (1, None, "instruction overflow"))
            self.assertIn("Recorded trace may be corrupted at instruction 0", text)
        self.assertEqual([n for n, _, _ in rows], list(range(1, len(rows) + 1)))
        self.assertIn(f"Recorded {len(expect) + gaps} instructions in ", between(text, 0))
        self.assertIn(f"({gaps} gaps)", between(text, 0))
        self.assertIn(f"= {stop:#x}", between(text, 2))
        # reverse-step: each stop is the history's instruction at its position, on the line
        # spoor mtb --flow gives that instruction, another line than the stop before
        position = len(expect) + gaps + 1
        for k in range(steps):
            out = between(text, 3 + k)
            pc = int(re.search(r"= (0x[0-9a-f]+)", out)[1], 16)
            at = int(re.search(r"At instruction (\d+)\.", out)[1])
            self.assertLess(at, position, out)
            row = flow[at - 1 - gaps]
            self.assertEqual(int(row["pc"], 16), pc, out)
            got = re.search(r'Line (\d+) of "([^"]+)"', out)
            self.assertEqual((int(got[1]), got[2]), (row["line"], row["file"]), out)
            position = at
        begin = between(text, 3 + steps)
        self.assertIn(f"= {expect[0]:#x}", begin)
        self.assertIn(f"At instruction {1 + gaps}.", begin)
        self.assertIn(f"= {stop:#x}", between(text, 4 + steps))

    def test_live_relay(self):
        # QEMU halted at reset with the MTB images in RAM (test_mtb's live targets): spoor
        # gdbserver --gdb reads the register block and the buffer through QEMU's gdbstub. The
        # stop is not the trace's fault: what ran from the fault handler to the reset pc is
        # unknown, a gap before the stop pc's block
        for key in (("m33", "loop"), ("m0", "preempt")):
            c = self.cases[key]
            expect = [int(pc, 16) for pc in c.expect["flow"]]
            gaps = 1 if c.expect["wrapped"] else 0
            reset = harness.symbol_addresses(c.elf)["Reset_Handler"]
            with self.subTest(core=key[0], case=key[1]), test_mtb.live(c) as upstream:
                with gdbserver("-e", c.elf, "--gdb", f"127.0.0.1:{upstream}", "--mtb-regs",
                               hex(c.area)) as (port, err):
                    text = harness.run_gdb(c.elf, port, [
                        "set record instruction-history-size unlimited",
                        "echo <<<\\n", "info record", "record instruction-history", "p/x $pc",
                        "echo >>>\\n", "record goto begin", "echo <<<\\n", "p/x $pc",
                        "echo >>>\\n", "detach"], timeout=120)
                self.assertIn("Target is recording using Branch Trace Store.", text)
                rows = history(between(text, 0))
                self.assertEqual([pc for _, pc, _ in rows[gaps:-1]], expect)
                self.assertEqual(rows[-1][1:], (None, "instruction overflow"))
                self.assertIn(f"Recorded {len(expect) + gaps + 1} instructions in ",
                              between(text, 0))
                self.assertIn(f"({gaps + 1} gaps)", between(text, 0))
                self.assertIn(f"= {reset:#x}", between(text, 0))
                self.assertIn(f"= {expect[0]:#x}", between(text, 1))
                self.assertEqual(len([e for e in err if "MTB" in e]), 1, err)

    def images(self, c, regs=None, buf=None):
        """--regs and --mem arguments with the register block or buffer replaced."""
        d = Path(c.dir)
        args = ["--regs", self.regs_json(c), "--mtb-regs", hex(c.area)]
        if regs is not None:
            (d / "regs2.bin").write_bytes(regs)
        if buf is not None:
            (d / "buf2.bin").write_bytes(buf)
        return args + ["--mem", f"{c.area:#x}:{d / 'regs2.bin' if regs else c.regs}",
                       "--mem", f"{c.buffer_at:#x}:{d / 'buf2.bin' if buf else c.buf}"]

    def test_empty_damaged_and_none(self):
        c = self.cases["m33", "loop"]
        position, master, flow, base = struct.unpack("<4I", c.regs.read_bytes()[:16])
        commands = ["echo <<<\\n", "info record", "echo >>>\\n",
                    "echo <<<\\n", "record instruction-history", "echo >>>\\n",
                    "echo <<<\\n", "bt", "echo >>>\\n", "detach"]
        # empty: POSITION 0, not wrapped (nothing written since the MTB started)
        empty = self.images(c, regs=struct.pack("<4I", 0, master, flow, base))
        with gdbserver("-e", c.elf, *empty) as (port, err):
            text = harness.run_gdb(c.elf, port, commands)
        self.assertIn("Target is recording using Branch Trace Store.", text)
        self.assertIn("Recorded 0 instructions in 0 functions", between(text, 0))
        self.assertEqual(history(between(text, 1)), [])
        self.assertIn("0 instructions", "\n".join(err))
        # damaged: the buffer all zeros: a warning, no branch trace, bt as without an MTB
        zeros = self.images(c, buf=bytes(c.buf.stat().st_size))
        with gdbserver("-e", c.elf, *zeros) as (port, err):
            text = harness.run_gdb(c.elf, port, commands)
        self.assertNotIn("Branch Trace Store", text)
        self.assertIn("No recording is currently active.", between(text, 0))
        self.assertIn("#0  ", between(text, 2))
        self.assertEqual(len(err), 1, err)
        self.assertRegex(err[0], r"^spoor gdbserver: warning: .*holds only zeros.*; GDB gets no "
                                 r"branch trace$")
        # random packets: gaps where no straight run leads on; GDB does not abort
        rng = random.Random(37)
        noise = bytes(rng.randrange(256) for _ in range(c.buf.stat().st_size))
        with gdbserver("-e", c.elf, *self.images(c, buf=noise)) as (port, err):
            text = harness.run_gdb(c.elf, port, commands)
        self.assertIn("Target is recording using Branch Trace Store.", text)
        self.assertRegex(between(text, 0), r"Recorded \d+ instructions in \d+ functions "
                                           r"\(\d+ gaps\)")
        self.assertIn("decode error", between(text, 1))
        self.assertIn("[Inferior 1 (Remote target) detached]", text)
        self.assertNotIn("internal-error", text)

    def test_no_mtb_offers_no_btrace(self):
        # the crash example's dump has no MTB record: qSupported as before, no note
        elf, machine = harness.example("crash", "m3")
        dump = Path(self.tmp.name) / "crash.dump"
        result = test_mtb.qemu(elf, machine, f"arg=crash,arg=undef,arg={dump}", [])
        self.assertEqual(result.returncode, 0, result.stdout)
        with gdbserver("-e", elf, dump) as (port, err):
            with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
                s.sendall(b"+$qSupported#37")
                reply = b""
                while not reply.endswith(b"#cc") and len(reply) < 100:
                    reply += s.recv(100)
                s.sendall(b"+$D#44")
                s.recv(100)
            text = reply.decode()
        self.assertEqual(text, "+$PacketSize=1000;qXfer:features:read+#cc")
        self.assertEqual([e for e in err if "MTB" in e], [])
        with gdbserver("-e", elf, dump) as (port, err):
            text = harness.run_gdb(elf, port, ["info record", "detach"])
        self.assertIn("No recording is currently active.", text)


if __name__ == "__main__":
    unittest.main()
