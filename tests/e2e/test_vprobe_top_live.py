"""spoor top on a running target: the example scheduler (examples/sched, sched-m3.elf on
mps2-an385) under the virtual trace probe, its live ITM/DWT stream on TCP (-s) and its memory
through QEMU's gdbstub (--gdb), the target running while spoor top reads (what `make demo-top`
shows).

The firmware sets up its own trace with the target library (spoor_itm_watch_current_thread_ex:
comparator 1 on sched_current, exception trace). QEMU starts frozen (-S): spoor top connects to
the gdbstub (the target halted), then to the stream, and lets the target run; each new thread
and each interval's priorities are read by halting it (0x03), reading, continuing it ('c').

Ground truth, independent of spoor: the schedule from QEMU's full log of the same run (QEMU run
again without the debugger: -icount makes it the same; the probe itself reads the register
log and QEMU's registers at each halt, docs/vprobe.md "QEMU's log") (the stores
to sched_current once comparator 1 watches it, evaluated from arm-none-eabi-objdump's
disassembly on the logged registers, and the log's exception entries: test_vprobe.py's reader),
and each task's name, priority, entry function and TCB address as gdb-multiarch prints them from
the ELF.

Checked:
1. every thread of every interval has gdb's name, priority and entry function;
2. per interval, each thread's CPU share within 0.5 points of the log's schedule, the exact
   switch counts and the exact exception entries per exception number;
3. the halts are what the design says: one per new thread (the idle-thread pointer is read in
   the first thread's batch) and one per interval (the priority re-read), and as many 'm'
   round trips (all TCBs share one page of the live layer's cache);
4. halting does not change the target's time: the stream is byte for byte the stream of a run
   with no debugger attached at all (-icount: a stopped machine's clock stands still);
5. the firmware runs to its end after spoor top leaves (QEMU exits 0 with sched's last line).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_vprobe import (full_log_of, ground_truth, interval_truth, objdump,  # noqa: E402
                         wait_listening)

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
TICKS = 12
SHIFT = 5
HZ = 10**9 >> SHIFT
INTERVAL_MS = 2
INTERVALS = 5  # 10 ms of the 12 the firmware runs: spoor top leaves while the target runs
CYCLES = HZ * INTERVAL_MS // 1000
TASKS = ["sensor", "control", "logger", "idle"]
DWT_FUNCTION1 = 0xE0001038


def qemu_command(elf, frozen):
    return [harness.require_tool(harness.QEMU), "-M", "mps2-an385", "-nographic", "-monitor",
            "none", "-serial", "none", "-semihosting-config",
            f"enable=on,target=native,arg=sched,arg={TICKS}", *(["-S"] if frozen else []),
            "-kernel", str(elf)]


def gdb_tasks(elf):
    """{tcb address: (name, priority, entry function)} as gdb-multiarch reads the ELF."""
    commands = []
    for name in TASKS:
        commands += ["-ex", f'printf "@@%u %s %d\\n", &task_{name}, task_{name}.name, '
                            f"task_{name}.priority", "-ex", f"print task_{name}.entry"]
    out = subprocess.run([harness.require_tool(harness.GDB), "-batch", "-nx", str(elf),
                          *commands], capture_output=True, text=True, timeout=120).stdout
    tasks = {}
    for m in re.finditer(r"@@(\d+) (\S+) (\d+)\n.*?<(\w+)>", out, re.S):
        tasks[int(m.group(1))] = (m.group(2), int(m.group(3)), m.group(4))
    if len(tasks) != len(TASKS):
        raise AssertionError(f"gdb printed {tasks}: {out[-800:]}")
    return tasks


def check_intervals(test, intervals, switches, entries, end):
    """Per interval of spoor top's JSON: each thread's CPU share within 0.5 points of the
    log's schedule (switches [(cycle, tcb)], the log ending at cycle end), the exact switch
    counts and the exact exception entries ([(cycle, number)]) per exception number."""
    for k, interval in enumerate(intervals):
        lo, hi = k * CYCLES, (k + 1) * CYCLES
        share, count = interval_truth(switches, end, lo, hi)
        got = {int(t["tcb"], 0): t for t in interval["threads"]}
        for tcb, cycles in share.items():
            with test.subTest(interval=k, tcb=hex(tcb)):
                test.assertAlmostEqual(got[tcb]["cpu"], 100.0 * cycles / CYCLES, delta=0.5)
                test.assertEqual(got[tcb]["switches"], count.get(tcb, 0))
        want = {}
        for t, number in entries:
            if lo <= t < hi:
                want[number] = want.get(number, 0) + 1
        got_exc = {e["num"]: e["count"] for e in interval.get("exceptions", []) if e["count"]}
        with test.subTest(interval=k, what="exceptions"):
            test.assertEqual(got_exc, want)


class TopOnRunningTarget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.elf, _ = harness.example("sched", "m3")
        cls.live_stream, log = d / "live.itm", d / "qemu.log"
        port, gdb_port = harness.free_port(), harness.free_port()
        probe = subprocess.Popen(
            [SPOOR, "vprobe", "-q", "--gdb", str(gdb_port), "-p", str(port), "-o",
             cls.live_stream, "--", *qemu_command(cls.elf, frozen=True)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_listening(port, probe, "trace stream")
            wait_listening(gdb_port, probe, "gdbstub")
            jsonl = d / "top.jsonl"
            cls.top = subprocess.run(
                [SPOOR, "top", "-s", f"127.0.0.1:{port}", "--gdb", f"127.0.0.1:{gdb_port}",
                 "-e", str(cls.elf), "-F", str(HZ), "-I", str(INTERVAL_MS), "-n",
                 str(INTERVALS), "-E", "--stats", "-j", str(jsonl)],
                capture_output=True, text=True, timeout=120)
            cls.probe_out, cls.probe_err = probe.communicate(timeout=300)
        finally:
            if probe.poll() is None:
                probe.kill()
                probe.wait()
        cls.probe_status = probe.returncode
        cls.intervals = ([json.loads(line) for line in jsonl.read_text().splitlines()]
                         if jsonl.exists() else [])
        symbols = harness.symbol_addresses(cls.elf)
        full_log_of(qemu_command(cls.elf, frozen=True), log)
        cls.pcs, stores, cls.entries, _ = ground_truth(log, objdump(cls.elf))
        log.unlink()  # large
        start = max(i for i, a, s, v in stores if a == DWT_FUNCTION1 and v)
        cls.switches = [(i + 1, v) for i, a, s, v in stores
                        if a == symbols["sched_current"] and i > start]
        cls.tasks = gdb_tasks(cls.elf)
        cls.quiet_stream = d / "quiet.itm"
        cls.quiet = subprocess.run(
            [SPOOR, "vprobe", "-q", "--gdb", "0", "-p", "0", "-o", cls.quiet_stream, "--",
             *qemu_command(cls.elf, frozen=False)], capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_runs(self):
        self.assertEqual(self.top.returncode, 0, self.top.stderr)
        self.assertNotIn("warning", self.top.stderr)
        self.assertEqual(len(self.intervals), INTERVALS)
        self.assertEqual(self.probe_status, 0, self.probe_err)
        self.assertIn("sched: sensor ran control ran logger ran idle ran",
                      self.probe_out + self.probe_err)  # semihosting: QEMU's stderr
        self.assertGreater(len(self.pcs), TICKS * 31250)
        self.assertEqual({tcb for _, tcb in self.switches}, set(self.tasks))

    def test_names_priorities_entries_are_gdbs(self):
        seen = set()
        for k, interval in enumerate(self.intervals):
            for t in interval["threads"]:
                tcb = int(t["tcb"], 0)
                with self.subTest(interval=k, tcb=hex(tcb)):
                    self.assertEqual((t["name"], t["prio"], t["func"]), self.tasks[tcb])
                    seen.add(tcb)
        self.assertEqual(seen, set(self.tasks))
        idle = [int(t["tcb"], 0) for t in self.intervals[-1]["threads"] if t["idle"]]
        self.assertEqual([self.tasks[tcb][0] for tcb in idle], ["idle"])

    def test_shares_switches_and_exceptions_match_the_log(self):
        check_intervals(self, self.intervals, self.switches, self.entries, len(self.pcs))

    def test_halts_as_designed(self):
        trips = re.search(r"(\d+) round trips.*; (\d+) threads", self.top.stderr)
        halts = re.search(r"running target: (\d+) halts, ([\d.]+) ms halted", self.top.stderr)
        self.assertIsNotNone(trips, self.top.stderr)
        self.assertIsNotNone(halts, self.top.stderr)
        threads = int(trips.group(2))
        self.assertEqual(threads, len(TASKS))
        self.assertEqual(int(halts.group(1)), threads + INTERVALS)
        self.assertEqual(int(trips.group(1)), threads + INTERVALS)

    def test_halts_do_not_change_the_stream(self):
        self.assertEqual(self.quiet.returncode, 0, self.quiet.stderr)
        quiet = self.quiet_stream.read_bytes()
        self.assertGreater(len(quiet), 200)
        self.assertEqual(self.live_stream.read_bytes(), quiet)


if __name__ == "__main__":
    unittest.main()
