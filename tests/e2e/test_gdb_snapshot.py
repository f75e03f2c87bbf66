"""The gdb command `spoor-snapshot DIR` (gdb/spoor.py) against gdb-multiarch's own bt.

An example firmware runs in QEMU and gdb-multiarch stops it at a breakpoint (the first
instruction of a function deep in a call chain, in a SysTick or IRQ handler, in a crash
scenario before its fault). There gdb prints `bt` (the
reference), then `source gdb/spoor.py` and `spoor-snapshot DIR`. The command must write
DIR/regs.json with the registers gdb shows in `info registers`, one DIR/ADDR.bin per RAM region
of the ELF's writable sections, and print a `spoor crash` command line; that command, run as
printed (with this build's spoor), must list the same functions as gdb's bt (an exception row
where gdb says <signal handler called>), and every image must hold what gdb's `x` reads there.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SOURCE = Path(os.environ["SPOOR_SOURCE_DIR"])
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]

# (program, core, gdb commands that stop it)
CASES = [
    ("calls", "m3", ["break *level_three", "continue"]),
    ("calls", "m3", ["break *tick_work", "continue"]),
    ("calls", "m33", ["break *irq_work", "continue"]),
    ("calls", "m4f", ["break *irq_work", "continue"]),
    ("calls", "m0", ["break *tick_work", "continue"]),
    ("crash", "m3", ["break *average", "continue"], "arg=crash,arg=div0,arg=/dev/null"),
    ("crash", "m33", ["break *read_sensor_register", "continue"],
     "arg=crash,arg=busfault,arg=/dev/null"),
]


def run_case(program, cpu, stops, semihosting=None):
    elf, machine = harness.example(program, cpu)
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "snap"
        with harness.Qemu(elf, machine, gdb=True, semihosting_args=semihosting) as qemu:
            text = harness.run_gdb(elf, qemu.gdb_port, [
                *stops, "bt", "info registers", f"source {SOURCE / 'gdb' / 'spoor.py'}",
                f"spoor-snapshot {snap}", "x/4wx $sp", "disconnect"])
        reference = harness.parse_backtrace(text)
        lines = [line for line in text.splitlines() if line.startswith("spoor crash ")]
        if len(lines) != 1:
            return f"no spoor crash line printed:\n{text}"
        regs = json.loads((snap / "regs.json").read_text())
        for line in text.splitlines():
            m = re.match(r"^(\w+)\s+(0x[0-9a-f]+)\s", line)
            if m and m.group(1) in REGS and int(regs[m.group(1)], 16) != int(m.group(2), 16):
                return f"regs.json {m.group(1)} {regs[m.group(1)]}, gdb {m.group(2)}"
        if any(r not in regs for r in REGS):
            return f"regs.json lacks registers: {regs}"
        # The top of the stack as gdb's x/4wx shows it must be in one of the images.
        sp = int(regs["sp"], 16)
        words = re.search(r"^0x[0-9a-f]+:\s+((?:0x[0-9a-f]+\s*){4})$", text, re.M)
        want = b"".join(int(w, 16).to_bytes(4, "little") for w in words.group(1).split())
        images = {int(p.stem, 16): p.read_bytes() for p in snap.glob("0x*.bin")}
        held = [img[sp - a:sp - a + 16] for a, img in images.items() if a <= sp < a + len(img)]
        if held != [want]:
            return f"the stack at {sp:#x} is {held} in the images, gdb reads {want.hex()}"
        command = shlex.split(lines[0])
        result = subprocess.run([SPOOR, *command[1:], "--json"], capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0:
            return f"{lines[0]}: exit {result.returncode}: {result.stderr}"
        got = []
        for frame in json.loads(result.stdout)["backtrace"]:
            got.append("<signal handler called>" if frame["kind"] == "exception"
                       else frame["function"] or "??")
        # gdb stops at main (backtrace past-main is off); spoor goes on to the reset handler.
        if "main" in got:
            got = got[:got.index("main") + 1]
        if got != reference:
            return f"gdb bt:      {reference}\n    spoor crash: {got}\n    ({lines[0]})"
    return None


def main():
    failed = 0
    for case in CASES:
        name = f"{case[0]}-{case[1]} at {case[2][0].split()[-1]}"
        try:
            problem = run_case(*case)
        except harness.HarnessError as e:
            problem = f"error: {e}"
        print(f"{'FAIL' if problem else 'ok  '} {name}" + (f"\n    {problem}" if problem else ""))
        failed += problem is not None
    print(f"{len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
