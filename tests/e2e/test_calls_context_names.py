"""Recorded context ids that are TCB addresses print in hex with the thread's name.

The example scheduler (examples/sched/sched.c: four named tasks, struct sched_task, the RTOS
layer's "sched" kind) is built here with the call recorder's SPOOR_CALLS_CONTEXT=1 and a
spoor_calls_context() that returns sched_current (the running task's TCB), sched.c compiled
with -finstrument-functions and its main wrapped to call spoor_calls_init first. QEMU runs it
under gdb-multiarch (with -icount: the ticks land where the instructions put them, whatever the
machine's load) to sched_checkpoint (every task has run), where gdb/spoor.py's
spoor-snapshot saves registers and RAM.

`spoor calls` on that snapshot labels each record's context `ctx 0xID (NAME)`: every id that
gdb says is a task's address (`print &task_sensor`, ...) must carry that task's name as gdb reads
it (`print task_sensor.name`), in hex; `--json` has "context" (the id) and "thread" (the name);
`spoor crash --calls` labels them the same way. Before, they printed as `ctx 536872976`.
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

SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SPOOR = os.environ["SPOOR_BIN"]
TASKS = ["sensor", "control", "logger", "idle"]
WRAPPER = r"""
#include <stdint.h>
#include "sched.h"
#include "spoor/calls.h"
#include "spoor/no_instrument.h"
int sched_example_main(void);
static uint32_t ring[16384]; /* 64 KiB: every record of the run, no wrap */
SPOOR_NO_INSTRUMENT uint32_t spoor_calls_context(void)
{
    return (uint32_t)sched_current;
}
SPOOR_NO_INSTRUMENT int main(void)
{
    spoor_calls_init(ring, sizeof ring);
    return sched_example_main();
}
"""


def build(work):
    gcc = harness.require_tool("arm-none-eabi-gcc")
    cpu = ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"]
    target = SOURCE / "target"
    inc = ["-I", str(target / "include"), "-I", str(target / "src"), "-I",
           str(SOURCE / "examples" / "common"), "-I", str(SOURCE / "examples" / "sched")]
    common = [*cpu, "-g", "-O1", "-ffunction-sections", "-fdata-sections", *inc,
              '-DSPOOR_EXAMPLE_CPU="m3"', '-DSPOOR_EXAMPLE_MACHINE="mps2-an385"']
    (work / "wrapper.c").write_text(WRAPPER)
    objects = []
    units = [(SOURCE / "examples" / "sched" / "sched.c",
              ["-finstrument-functions", "-Dmain=sched_example_main",
               # the naked context switch: a hook before its context is saved clobbers the
               # interrupted task's r4/r5 and EXC_RETURN (docs/integrating.md, naked handlers)
               "-finstrument-functions-exclude-function-list=PendSV_Handler"]),
             (work / "wrapper.c", []),
             (SOURCE / "examples" / "common" / "startup.c", []),
             (SOURCE / "examples" / "common" / "semihost.c", [])]
    units += [(src, ["-DSPOOR_CALLS_CONTEXT=1"] if src.name == "calls_recorder.c" else [])
              for src in sorted((target / "src").glob("*.c")) + sorted(
                  (target / "src" / "cortexm").glob("*.c"))]
    for src, extra in units:
        obj = work / (src.parent.name + "_" + src.stem + ".o")
        subprocess.run([gcc, *common, *extra, "-c", str(src), "-o", str(obj)], check=True)
        objects.append(str(obj))
    elf = work / "sched_calls.elf"
    ld = SOURCE / "examples" / "ld"
    subprocess.run([gcc, *cpu, "-nostartfiles", f"-L{ld}", f"-T{ld / 'mps2-an385.ld'}",
                    "-Wl,--gc-sections", "-Wl,--build-id=sha1", *objects, "-o", str(elf)],
                   check=True)
    return elf


class ContextNames(unittest.TestCase):
    def test_context_ids_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            elf = build(work)
            snap = work / "snap"
            prints = [f"print/x (unsigned)&task_{t}" for t in TASKS] + \
                     [f"print task_{t}.name" for t in TASKS]
            with harness.Qemu(elf, "mps2-an385", gdb=True, semihosting_args="arg=sched,arg=100",
                              icount=5) as qemu:  # the ticks where the instructions put them
                text = harness.run_gdb(elf, qemu.gdb_port, [
                    "break sched_checkpoint", "continue", *prints,
                    f"source {SOURCE}/gdb/spoor.py", f"spoor-snapshot {snap}", "disconnect"])
            addrs = [int(a, 16) for a in re.findall(r"^\$\d+ = (0x[0-9a-f]+)$", text, re.M)]
            names = re.findall(r'^\$\d+ = 0x[0-9a-f]+ "([^"]*)"$', text, re.M)
            self.assertEqual(len(addrs), 4, text)
            self.assertEqual(names, TASKS, text)
            tcbs = dict(zip(addrs, names))
            mems = [f"{p.stem}:{p}" for p in sorted(snap.glob("0x*.bin"))]
            inp = ["--regs", str(snap / "regs.json")] + [a for m in mems for a in ("--mem", m)]

            out = subprocess.run([SPOOR, "calls", "-e", str(elf), *inp], capture_output=True,
                                 text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            labels = set(re.findall(r"^(ctx [^|]*?)\s*\|", out.stdout, re.M))
            seen = set()
            for label in labels:
                m = re.fullmatch(r"ctx 0x([0-9a-f]{8})(?: \((.*)\))?", label)
                self.assertTrue(m, f"not a hex TCB label: {label!r}")
                tcb = int(m.group(1), 16)
                if tcb in tcbs:
                    self.assertEqual(m.group(2), tcbs[tcb], label)
                    seen.add(tcbs[tcb])
            self.assertEqual(seen, set(TASKS), f"labels {labels}")

            js = subprocess.run([SPOOR, "calls", "--json", "-e", str(elf), *inp],
                                capture_output=True, text=True, check=True).stdout
            records = [json.loads(line) for line in js.splitlines()]
            for r in records:
                if r["context"] in tcbs:
                    self.assertEqual(r.get("thread"), tcbs[r["context"]], r)
            self.assertTrue(any("thread" in r for r in records))

            crash = subprocess.run([SPOOR, "crash", "-e", str(elf), "--calls", "8", *inp],
                                   capture_output=True, text=True)
            self.assertEqual(crash.returncode, 0, crash.stderr)
            section = crash.stdout.split("last calls", 1)[1]
            self.assertRegex(section, r"ctx 0x[0-9a-f]{8} \((" + "|".join(TASKS) + r")\)")


if __name__ == "__main__":
    unittest.main()
