"""A call to a noreturn function as a function's LAST instruction, against gdb-multiarch.

The return address of such a call is the first byte after the calling function: the next
function's first byte, or the end of .text when the caller is the last function there. The
caller's frame must be found (and named) from the instruction before the return address,
as gdb does (it looks up pc - 1). tests/e2e/fw/noreturn_fw.c is built for each core and run
in QEMU with its gdbstub; gdb stops in the noreturn callee in two stacks:
  * mid: main -> chain_mid -> mid_caller -> fatal_mid, where mid_caller's return address is
    Reset_Handler's first instruction (noreturn_fw.ld places it there);
  * end: main -> chain_end -> end_caller -> fatal_end, where end_caller is the last function
    of .text, so its return address is the end of .text (no code).
At each stop gdb prints `bt` (the reference), the registers and the RAM (the snapshot).
Then, each compared with gdb's bt function by function (spoor goes on past main to
Reset_Handler and must stop there with "reset handler"):
  1. tools/unwind_snapshot on the snapshot with all methods and with each of CFI, EHABI,
     prologue analysis and the stack scan alone;
  2. `spoor crash --json --regs --mem`: the functions, and the caller's line equal to gdb's;
     `spoor crash` text: the caller's row is `mid_caller+0xN` / `end_caller+0xN` with N the
     return address minus the function's start (arm-none-eabi-nm);
  3. `spoor gdbserver` serving the snapshot, asked by a second gdb for `bt` (at the end of
     .text gdb reads the bytes at the return address: the padding of the read-only segment).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_crash_snapshot import gdb_via_spoor_server  # noqa: E402
from test_unwind_live import build_test_firmware, snapshot_tool  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
METHODS = [None, "cfi", "ehabi", "prologue", "scan"]

CORES = {
    # name: (gcc flags, QEMU machine, code origin, RAM origin)
    "m3": (["-mcpu=cortex-m3"], "mps2-an385", 0x0, 0x20000000),
    "m0": (["-mcpu=cortex-m0"], "microbit", 0x0, 0x20000000),
    "m33": (["-mcpu=cortex-m33", "-mfloat-abi=soft"], "mps2-an505", 0x10000000, 0x38000000),
}
# (scenario number, noreturn callee where gdb stops, the caller whose last insn calls it)
SCENARIOS = [(1, "fatal_mid", "mid_caller"), (2, "fatal_end", "end_caller")]
_GDB_FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) .* at (\S+):(\d+)$")

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def build_firmware(core, out_dir):
    flags, _, flash, ram = CORES[core]
    # -funwind-tables refers to the EHABI personality routines; nothing here throws.
    no_personality = ",".join(f"--defsym=__aeabi_unwind_cpp_pr{i}=0" for i in range(3))
    return build_test_firmware("noreturn_fw", flags, flash, ram,
                               out_dir / f"noreturn-fw-{core}.elf",
                               ["-ffunction-sections", f"-Wl,{no_personality}"])


def text_end(elf):
    """End address of the .text section (arm-none-eabi-readelf)."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-readelf"), "-S", "-W", str(elf)],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".text":
            return int(fields[3], 16) + int(fields[5], 16)
    raise harness.HarnessError(f"{elf} has no .text")


def take_snapshot(core, elf, scenario, stop_at, work):
    _, machine, _, ram = CORES[core]
    ram_bin = work / f"ram-{scenario}.bin"
    commands = [f"set var scenario = {scenario}", f"break {stop_at}", "continue", "bt",
                "info registers", f"dump binary memory {ram_bin} {ram:#x} &__stack_top"]
    with harness.Qemu(elf, machine, gdb=True) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, commands, timeout=60)
    lines = [line.split() for line in text.splitlines()]
    regs = {f[0]: f[1] for f in lines if len(f) > 1 and f[0] in REGS and f[1].startswith("0x")}
    if len(regs) != len(REGS):
        raise harness.HarnessError(f"gdb did not show all of {REGS}:\n{text}")
    regs_json = work / f"regs-{scenario}.json"
    regs_json.write_text(json.dumps(regs))
    regs_txt = work / f"regs-{scenario}.txt"  # unwind_snapshot reads gdb's format
    regs_txt.write_text("".join(f"{name} {value}\n" for name, value in regs.items()))
    frames = {}
    for line in text.splitlines():
        m = _GDB_FRAME.match(line)
        if m:
            frames[m.group(3)] = (int(m.group(2), 16) if m.group(2) else None, m.group(5))
    return {"bt": harness.parse_backtrace(text), "frames": frames, "regs_json": regs_json,
            "regs_txt": regs_txt, "mem": f"{ram:#x}:{ram_bin}"}


def unwind_snapshot(tool, elf, snap, methods):
    command = [str(tool), "-e", str(elf), "--regs", str(snap["regs_txt"]), "--mem", snap["mem"]]
    if methods:
        command += ["--methods", methods]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return None, out.stderr.strip()
    names, reason = [], None
    for line in out.stdout.splitlines():
        fields = line.split("\t")
        if fields[0] == "stop":
            reason = fields[1]
        elif fields[0] == "call":
            names += fields[4].split(",")
        else:
            names.append("<signal handler called>")
    return names, reason


def spoor_crash(elf, snap, json_output):
    command = [SPOOR, "crash", "-e", str(elf), "--regs", str(snap["regs_json"]),
               "--mem", snap["mem"]]
    if json_output:
        command.insert(2, "--json")
    r = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise harness.HarnessError(f"spoor crash failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout) if json_output else r.stdout


def compare(core, tool, elf, scenario, stop_at, caller, snap):
    label = f"{core} {stop_at}"
    gdb = snap["bt"]
    want = gdb + ["Reset_Handler"]
    check(gdb[:2] == [stop_at, caller] and gdb[-1] == "main",
          f"{label}: gdb's own bt {gdb} is not the firmware's chain")
    syms = harness.symbol_addresses(elf)
    return_address, gdb_line = snap["frames"].get(caller, (None, None))
    if scenario == 2:
        check(return_address == text_end(elf),
              f"{label}: {caller} returns to {return_address}, not the end of .text")
    else:
        check(return_address == syms["Reset_Handler"],
              f"{label}: {caller} returns to {return_address}, not Reset_Handler")
    for methods in METHODS:
        names, reason = unwind_snapshot(tool, elf, snap, methods)
        check(names == want and reason == "reset handler",
              f"{label} [{methods or 'all'}]: spoor {names} (stop {reason}) != gdb {want}")
    report = spoor_crash(elf, snap, True)
    names = [f["function"] or "??" for f in report["backtrace"]]
    check(names == want and report["stop"] == "reset handler",
          f"{label} spoor crash --json: {names} (stop {report['stop']}) != gdb {want}")
    rows = [f for f in report["backtrace"] if f["function"] == caller]
    check(len(rows) == 1 and rows[0]["line"] == int(gdb_line or 0)
          and int(rows[0]["pc"], 16) == return_address,
          f"{label} spoor crash --json: {caller} row {rows}, gdb at line {gdb_line}, "
          f"pc {return_address}")
    text = spoor_crash(elf, snap, False)
    offset = (return_address or 0) - syms[caller]
    row = f"{return_address or 0:#010x} {caller}+{offset:#x} at "
    check(row in text and "(stopped: reset handler)" in text,
          f"{label} spoor crash text: no row '{row}' or not stopped at the reset handler:\n"
          f"{text}")
    served = gdb_via_spoor_server(elf, str(snap["regs_json"]), snap["mem"])
    # At the end of .text gdb reads 4 bytes at the frame's pc, which lie in the padding after
    # .text: spoor serves the read-only PT_LOAD segment (padding included), as flash would.
    check(served == gdb, f"{label} gdb via spoor gdbserver: {served} != gdb live {gdb}")
    print(f"{label}: gdb {gdb}")


def main():
    tool = snapshot_tool()
    with tempfile.TemporaryDirectory(prefix="spoor-noreturn-") as tmp:
        for core in CORES:
            work = Path(tmp) / core
            work.mkdir()
            elf = build_firmware(core, work)
            for scenario, stop_at, caller in SCENARIOS:
                snap = take_snapshot(core, elf, scenario, stop_at, work)
                compare(core, tool, elf, scenario, stop_at, caller, snap)
    total = len(CORES) * len(SCENARIOS)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"all {total} noreturn stops match gdb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
