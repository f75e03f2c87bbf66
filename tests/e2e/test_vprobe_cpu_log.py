"""The virtual probe's reader of QEMU's register log (tools/qemu_log.py, CpuLog) against QEMU's
full log of the same run.

Without a GDB port `spoor vprobe` asks QEMU for `-d cpu,nochain,int` only: a register record
for every one-instruction block QEMU starts, but not the exec lines ("rewound", "Stopped
execution") that say which blocks did not run; CpuLog infers those (qemu_log.py's rules).
Here QEMU writes the full log (`-d exec,nochain,int,cpu`); the truth is what its exec lines say
ran (test_vprobe.py's reader, which follows them, not CpuLog's rules); the same log with the
"Trace", "rewound" and "Stopped" lines taken out is exactly the register log, and CpuLog must
find the same instructions, in the same order between the same exception events, however the
log is cut into chunks. Firmware: the probe's example (I/O stores rewound, SysTick and PendSV
entered after budget stops and after stores to ICSR), examples/sched on the M3 and the M33, and
crash-m3 (faults).
"""
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_vprobe import SOURCE, ground_truth, objdump  # noqa: E402

sys.path.insert(0, str(SOURCE / "tools"))
import qemu_log  # noqa: E402

EXEC_ONLY = (b"Trace ", b"cpu_io_recompile: rewound", b"Stopped execution of TB chain")
ENTRY = re.compile(r"^\.\.\.taking pending (?:non)?secure exception (\d+)")
RUNS = [("vprobe_sched", "m3", "arg=vprobe_sched,arg=6"), ("sched", "m3", "arg=sched,arg=8"),
        ("sched", "m33", "arg=sched,arg=8"), ("crash", "m3", "arg=crash")]


def full_log(elf, machine, semihosting, log):
    subprocess.run([harness.require_tool(harness.QEMU), "-M", machine, "-nographic", "-monitor",
                    "none", "-serial", "none", "-semihosting-config",
                    f"enable=on,target=native,{semihosting}", "-kernel", str(elf), "-icount",
                    "shift=5,sleep=off", "-singlestep", "-d", "exec,nochain,int,cpu", "-D",
                    str(log)], capture_output=True, timeout=300)


def read_registers_only(data, code, chunk_sizes):
    """CpuLog's instructions ([pc]) and entries ([(index, number)]) from the log's bytes cut
    after complete records at the given sizes, as the probe cuts the pipe."""
    reader = qemu_log.CpuLog(code)
    pcs, entries = [], []

    def take(events):
        for ev in events:
            if ev[0] == "insns":
                pcs.extend(int(pc, 16) for pc in ev[1])
            elif ev[0] == "pending":
                entries.append((len(pcs), ev[1]))

    rest, pos = b"", 0
    while pos < len(data):
        n = next(chunk_sizes)
        block = rest + data[pos:pos + n]
        pos += n
        cut = block.rfind(b"\n") + 1
        start = block.rfind(qemu_log.RECORD, 0, cut)
        if start >= 0 and block.find(b"\nXPSR=", start, cut) < 0:
            cut = start
        rest = block[cut:]
        take(reader.feed(block[:cut]))
    take(reader.feed(rest))
    take(reader.end())
    return pcs, entries


class RegisterLog(unittest.TestCase):
    def test_same_instructions_as_the_full_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            for program, core, semihosting in RUNS:
                with self.subTest(program=program, core=core):
                    elf, machine = harness.example(program, core)
                    log = Path(tmp) / "full.log"
                    full_log(elf, machine, semihosting, log)
                    pcs, _, entries, _ = ground_truth(log, objdump(elf))
                    with open(log, "rb") as f:
                        data = b"".join(line for line in f if not line.startswith(EXEC_ONLY))
                        f.seek(0)
                        cancelled = sum(1 for line in f if line.startswith(EXEC_ONLY[1:]))
                    log.unlink()
                    self.assertGreater(len(pcs), 2000)
                    code = qemu_log.Code(str(elf))
                    rng = random.Random(21)
                    for sizes in (iter(lambda: 1 << 20, None),
                                  iter(lambda: rng.randint(1, 5000), None)):
                        got, got_entries = read_registers_only(data, code, sizes)
                        self.assertEqual(len(got), len(pcs))
                        self.assertEqual(got, pcs)
                        self.assertEqual(got_entries, entries)
                    if program == "vprobe_sched":  # the rules were needed
                        self.assertGreater(cancelled, 50)


if __name__ == "__main__":
    unittest.main()
