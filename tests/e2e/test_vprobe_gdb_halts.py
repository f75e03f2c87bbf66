"""A debugger halting the target under `spoor vprobe` with its GDB port (the default mode: QEMU
writes only its register log, and at each stop the proxy asks QEMU's gdbstub for r0..r15 to
settle whether the last instruction logged ran; docs/vprobe.md "QEMU's log").

The probe's example (vprobe_sched-m3.elf: ITM ports 0 and 1, exception trace, PC samples every
1024 cycles, DWT comparator 1 on current_thread, CYCCNT on) starts frozen (-S); gdb-multiarch
connects through the probe's port and runs a script: a breakpoint just after the sensor's
store to stimulus port 1, hit twice; there it writes ITM_TER = 1 (port 1 off); two stepi; a
breakpoint on switch_context; stepi 3; then a continue interrupted by SIGINT (gdb sends 0x03:
QEMU stops wherever it is), a stepi, and detach (the firmware runs to its end). At every stop
gdb prints the PC and DWT_CYCCNT (served by the probe: the cycles since the firmware set
CYCCNTENA). The same script runs against the probe with --full-log (QEMU's full log, whose
"Trace" and "Stopped" lines say which instructions ran).

Ground truth, independent of the probe's reading: QEMU's full log of the --full-log run (kept
with --keep-log), read by test_vprobe.py's reader (the exec lines, objdump's disassembly for the
stores). Not a run without a debugger: QEMU's virtual clock moves on when the CPU stops at a
breakpoint or after a step (the firmware's ticks come sooner: it ends after 0.55 M instructions,
not 0.63 M), but the same way in every run of the same script (measured: the same stops, count
and stream each time), and an interrupt (0x03) changes nothing (test_vprobe_top_live.py). Checked,
in both modes:
1. at every stop the instruction gdb says is next (its PC) is instruction number
   CYCCNT + (instructions up to the firmware's store to DWT_CTRL) of the truth, unless the truth
   enters an exception there (QEMU took an interrupt when it resumed): the probe has counted
   exactly the instructions that ran before the stop, at a breakpoint, after a stepi and after
   an interrupt;
2. the instruction count at the end is the truth's;
3. the debugger's write took effect between the last instruction that ran and the next: the
   stream has exactly two port-1 packets, the sensor's first two stores (values 0 and 1), at
   the cycles after those stores (this file's own packet walker, test_vprobe_setup.py's);
4. the two modes give the same stream, byte for byte, the same count and the same stops (all
   but the interrupted one, which lands where it lands).
Without the stop handling (the registers at the stop ignored) 1 to 4 fail: the last instruction
before a stop is counted after it, so CYCCNT reads one short, the store before the breakpoint
is traced after the debugger disabled its port, and stepping makes the register log's rules
miscount.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_vprobe import ground_truth, objdump, wait_listening  # noqa: E402
from test_vprobe_setup import itm_packets  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
TICKS = 20  # 0.6 M instructions: the interrupt, 0.2 s after a continue, lands in the run
DWT_CTRL, DWT_CYCCNT, ITM_TER, ITM_STIM1 = 0xE0001000, 0xE0001004, 0xE0000E00, 0xE0000004
PORT1_WORD = (1 << 3) | 3  # ITM header: stimulus port 1, 4 bytes
STOP = re.compile(r"^STOP ([0-9a-f]+) (\d+)$", re.M)
STOPS = 8


def qemu_command(elf):
    return [harness.require_tool(harness.QEMU), "-M", "mps2-an385", "-nographic", "-monitor",
            "none", "-serial", "none", "-semihosting-config",
            f"enable=on,target=native,arg=vprobe_sched,arg={TICKS}", "-S", "-kernel", str(elf)]


def after_port1_store(elf, insns):
    """The address of the instruction after the sensor's store to stimulus port 1."""
    start = harness.symbol_addresses(elf)["worker_sensor"]
    pcs = sorted(pc for pc in insns if pc >= start)
    for pc, following in zip(pcs, pcs[1:]):
        if insns[pc][0].startswith("str"):
            return following
    raise AssertionError("no store in worker_sensor")


def gdb_script(port, breakpoint):
    stop = f'printf "STOP %x %u\\n", $pc, *(unsigned int *)0x{DWT_CYCCNT:08x}'
    return "\n".join([
        "set pagination off", "set confirm off", f"target remote 127.0.0.1:{port}",
        f"break *0x{breakpoint:x}", "continue", stop, "continue", stop,
        f"set {{unsigned int}}0x{ITM_TER:08x} = 1", "stepi", stop, "stepi", stop, "delete",
        "break switch_context", "continue", stop, "stepi 3", stop, "delete",
        # gdb interrupts the target on SIGINT (0x03 to the gdbstub): sent 0.2 s into a continue
        "shell (sleep 0.2; kill -INT $PPID) &", "continue", stop, "stepi", stop,
        "detach", ""])


def halted_run(d, elf, breakpoint, *mode):
    """The probe under gdb's script: (gdb's stops [(pc, cyccnt)], stream, stats, gdb output)."""
    name = "full" if "--full-log" in mode else "fast"
    stream, stats, script = d / f"{name}.itm", d / f"{name}.json", d / f"{name}.gdb"
    port = harness.free_port()
    script.write_text(gdb_script(port, breakpoint))
    probe = subprocess.Popen(
        [SPOOR, "vprobe", "-q", "--gdb", str(port), "-p", "0", "-o", stream, "--stats", stats,
         *mode, "--", *qemu_command(elf)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True)
    try:
        wait_listening(port, probe, "gdb port")
        gdb = subprocess.run([harness.require_tool(harness.GDB), "-batch", "-nx", str(elf), "-x",
                              str(script)], capture_output=True, text=True, timeout=180)
        _, err = probe.communicate(timeout=300)
    finally:
        if probe.poll() is None:
            os.killpg(probe.pid, signal.SIGKILL)
            probe.wait()
    if probe.returncode != 0:
        raise AssertionError(f"spoor vprobe {' '.join(mode)}: status {probe.returncode}: {err}")
    stops = [(int(pc, 16), int(cycles)) for pc, cycles in STOP.findall(gdb.stdout)]
    return {"stops": stops, "stream": stream.read_bytes(),
            "stats": json.loads(stats.read_text()), "gdb": gdb.stdout + gdb.stderr}


class DebuggerHalts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.elf, _ = harness.example("vprobe_sched", "m3")
        insns = objdump(cls.elf)
        cls.breakpoint = after_port1_store(cls.elf, insns)
        cls.fast = halted_run(d, cls.elf, cls.breakpoint)
        log = d / "qemu.log"
        cls.full = halted_run(d, cls.elf, cls.breakpoint, "--full-log", "--keep-log", str(log))
        cls.pcs, stores, entries, _ = ground_truth(log, insns)
        cls.entered = {i for i, _ in entries}
        log.unlink()  # large
        cls.enabled = [i + 1 for i, a, s, v in stores if a == DWT_CTRL][0]
        cls.port1 = [(i + 1, v) for i, a, s, v in stores if a == ITM_STIM1]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def runs(self):
        return (("fast", self.fast), ("full-log", self.full))

    def test_script_ran(self):
        for mode, run in self.runs():
            with self.subTest(mode=mode):
                self.assertEqual(len(run["stops"]), STOPS, run["gdb"])
                self.assertIn("SIGINT", run["gdb"])
                self.assertEqual(run["stops"][0][0], self.breakpoint)
                self.assertEqual(run["stops"][1][0], self.breakpoint)
        self.assertGreater(len(self.port1), 2)

    def test_each_stop_is_after_exactly_the_instructions_that_ran(self):
        for mode, run in self.runs():
            checked = 0
            for k, (pc, cycles) in enumerate(run["stops"]):
                with self.subTest(mode=mode, stop=k, pc=hex(pc), cyccnt=cycles):
                    count = self.enabled + cycles
                    if count in self.entered:  # QEMU took an interrupt when it resumed
                        continue
                    self.assertEqual(self.pcs[count], pc)
                    checked += 1
            self.assertGreaterEqual(checked, STOPS - 2, mode)

    def test_instruction_count_is_the_logs(self):
        for mode, run in self.runs():
            with self.subTest(mode=mode):
                self.assertEqual(run["stats"]["instructions"], len(self.pcs))

    def test_the_debuggers_write_took_effect_at_the_stop(self):
        for mode, run in self.runs():
            with self.subTest(mode=mode):
                got = [(t, int.from_bytes(p, "little")) for t, h, p in itm_packets(run["stream"])
                       if h == PORT1_WORD]
                self.assertEqual(got, self.port1[:2])
                self.assertEqual([v for _, v in got], [0, 1])

    def test_same_as_the_full_log_mode(self):
        self.assertEqual(self.fast["stream"], self.full["stream"])
        self.assertEqual(self.fast["stats"]["instructions"], self.full["stats"]["instructions"])
        self.assertEqual(self.fast["stops"][:-2], self.full["stops"][:-2])


if __name__ == "__main__":
    unittest.main()
