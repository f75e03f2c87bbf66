"""The reference tools agree with the examples' sources: gdb-multiarch's backtraces under
QEMU's gdbstub show the call chains written in calls.c, QEMU's execution log shows the
instructions and exceptions the programs must run, and a non-zero exit status reaches the host.

These are the ground-truth channels spoor's own tests compare against, so this test proves
the plumbing works before anything depends on it. The expected call chains below are read off
examples/calls/calls.c, not taken from any tool's output.
"""

import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

CORES = ["m3", "m33", "m0", "m4f"]

# calls.c: main -> compute_report -> level_one -> level_two -> level_three (gdb stops at main)
DEEPEST_CHAIN = ["level_three", "level_two", "level_one", "compute_report", "main"]
# calls.c: main -> raise_tick pends SysTick -> SysTick_Handler -> tick_work
TICK_CHAIN = ["tick_work", "SysTick_Handler", "<signal handler called>", "raise_tick", "main"]
# calls.c: main -> raise_irq pends IRQ 3 -> IRQ3_Handler -> irq_work
IRQ_CHAIN = ["irq_work", "IRQ3_Handler", "<signal handler called>", "raise_irq", "main"]
# The exception is taken on or just after the barrier that raise_tick/raise_irq inline; which
# one is QEMU's choice, so the inlined barrier frame may or may not be the interrupted frame.
OPTIONAL_INLINE_FRAMES = {"barrier_dsb_isb"}

SYSTICK_EXCEPTION = 15
IRQ3_EXCEPTION = 16 + 3


def without_optional(frames):
    return [name for name in frames if name not in OPTIONAL_INLINE_FRAMES]


class GdbBacktraces(unittest.TestCase):
    def test_deepest_function(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu):
                elf, machine = harness.example("calls", cpu)
                session = harness.debug_example(
                    elf, machine, ["break level_three", "continue", "bt"])
                self.assertEqual(harness.parse_backtrace(session.gdb_output), DEEPEST_CHAIN,
                                 session.gdb_output)
                self.assertEqual(session.qemu.returncode, 0, session.qemu.output)

    def test_through_exception_entry(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu):
                elf, machine = harness.example("calls", cpu)
                session = harness.debug_example(
                    elf, machine,
                    ["break tick_work", "break irq_work", "continue", "bt", "continue", "bt"])
                traces = harness.parse_backtraces(session.gdb_output)
                self.assertEqual(len(traces), 2, session.gdb_output)
                self.assertEqual(without_optional(traces[0]), TICK_CHAIN, session.gdb_output)
                self.assertEqual(without_optional(traces[1]), IRQ_CHAIN, session.gdb_output)

    def test_exit_status_reaches_host(self):
        # Change the status main returned to 7 on entry to semihost_exit: QEMU must exit with 7.
        elf, machine = harness.example("hello", "m3")
        session = harness.debug_example(
            elf, machine, ["break *semihost_exit", "continue", "set $r0 = 7", "continue"])
        self.assertEqual(session.qemu.returncode, 7, session.gdb_output)


class QemuExecLog(unittest.TestCase):
    def traced_run(self, program, cpu):
        elf, machine = harness.example(program, cpu)
        with tempfile.TemporaryDirectory() as scratch:
            log = os.path.join(scratch, "exec.log")
            result = harness.run_example(elf, machine, exec_log=log)
            self.assertEqual(result.returncode, 0, result.output)
            return harness.symbol_addresses(elf), harness.parse_exec_log(log)

    def test_hello_runs_main(self):
        symbols, trace = self.traced_run("hello", "m3")
        self.assertGreater(len(trace.pcs), 50)
        self.assertEqual(trace.pcs[0], symbols["Reset_Handler"])
        self.assertIn(symbols["main"], trace.pcs)
        self.assertIn(symbols["semihost_exit"], trace.pcs)

    def test_calls_exceptions(self):
        for cpu in ("m3", "m33"):
            with self.subTest(cpu=cpu):
                symbols, trace = self.traced_run("calls", cpu)
                entries = [(e.number, e.handler) for e in trace.exceptions]
                self.assertEqual(entries, [(SYSTICK_EXCEPTION, symbols["SysTick_Handler"]),
                                           (IRQ3_EXCEPTION, symbols["IRQ3_Handler"])])
                for entry in trace.exceptions:
                    self.assertEqual(trace.pcs[entry.position], entry.handler)
                tick = trace.exceptions[0].position
                self.assertIn(symbols["tick_work"], trace.pcs[tick:])
                self.assertNotIn(symbols["tick_work"], trace.pcs[:tick])


if __name__ == "__main__":
    unittest.main(verbosity=2)
