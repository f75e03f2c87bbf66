"""The on-target unwinder, spoor_backtrace() (EHABI over .ARM.exidx, run on the core), against
gdb-multiarch in QEMU.

crash-<core>.elf, scenarios `backtrace` (thread mode) and `backtrace_irq` (inside the SysTick
handler), print the PCs spoor_backtrace() returns: pcs[0] returns into print_backtrace, then
one PC per caller, across the exception frame. The reference is gdb stopped at the entry of
print_backtrace in the same program: the PC of every frame above it (a return address, or the
interrupted PC after <signal handler called>), read with gdb's Python API. The printed PCs
after pcs[0] must equal gdb's, address for address, up to main."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

GDB_FRAMES = """python
f = gdb.newest_frame()
while f is not None:
    kind = "signal" if f.type() == gdb.SIGTRAMP_FRAME else (
        "inline" if f.type() == gdb.INLINE_FRAME else "normal")
    print("FRAME %s 0x%x %s" % (kind, f.pc(), f.name()))
    f = f.older()
end
"""


def function_range(elf, name):
    """(start, size) of a function symbol, from arm-none-eabi-nm -S."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == name:
            return int(parts[0], 16) & ~1, int(parts[1], 16)
    raise harness.HarnessError(f"{name} not in {elf}")


def run_case(core, scenario, script):
    elf, machine = harness.example("crash", core)
    args = f"arg=crash,arg={scenario},arg=/dev/null"
    with harness.Qemu(elf, machine, semihosting_args=args) as qemu:
        result = qemu.wait()
    m = re.search(r"backtrace:((?: 0x[0-9a-f]{8})*)", result.output)
    if result.returncode != 0 or not m:
        return False, f"firmware: status {result.returncode}, output {result.output!r}"
    pcs = [int(x, 16) for x in m.group(1).split()]
    with harness.Qemu(elf, machine, gdb=True, semihosting_args=args) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, ["break *print_backtrace", "continue",
                                                    f"source {script}"])
    frames = [l.split(None, 3)[1:] for l in text.splitlines() if l.startswith("FRAME ")]
    if not frames or frames[0][2] != "print_backtrace":
        return False, f"gdb did not stop in print_backtrace:\n{text}"
    names = [f[2] for f in frames]
    upto = names.index("main") + 1 if "main" in names else len(frames)
    # callers' PCs, in order; an inlined frame shares its PC with the frame it sits in
    expected = [int(f[1], 16) for f in frames[1:upto] if f[0] == "normal"]
    start, size = function_range(elf, "print_backtrace")
    first_ok = start < pcs[0] < start + size
    got = pcs[1:1 + len(expected)]
    ok = got == expected and first_ok
    return ok, (f"gdb:   {[hex(x) for x in expected]} {names[1:upto]}\n"
                f"      target: {[hex(x) for x in got]} (pcs[0] {pcs[0]:#x} in print_backtrace: "
                f"{first_ok})")


if __name__ == "__main__":
    failed = 0
    cases = [(c, s) for c in ("m3", "m4f", "m33", "m0") for s in ("backtrace", "backtrace_irq")]
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as script:
        script.write(GDB_FRAMES)
        script.flush()
        for core, scenario in cases:
            try:
                ok, detail = run_case(core, scenario, script.name)
            except harness.HarnessError as e:
                ok, detail = False, str(e)
            print(f"{'ok  ' if ok else 'FAIL'} {core} {scenario}\n      {detail}")
            failed += not ok
    print(f"{len(cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
