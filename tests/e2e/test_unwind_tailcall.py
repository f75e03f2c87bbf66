"""Tail-call frames against gdb-multiarch: -O2 firmware in QEMU (M3, M33).

tests/e2e/fw/tailcall_fw.c is built with -O2, where GCC turns a function's last call into a
branch (`b.w callee`). gdb-multiarch rebuilds the frames those functions left out from the
DWARF call sites (DW_TAG_call_site with DW_AT_call_tail_call) and shows them in `bt`; spoor
must give the same frames. The firmware is built twice, with DWARF 5 (DW_TAG_call_site,
DW_AT_call_return_pc, DW_AT_call_origin) and with DWARF 4 (DW_TAG_GNU_call_site,
DW_AT_low_pc, DW_AT_abstract_origin, DW_AT_GNU_tail_call); readelf must show each form in
its build. gdb stops at five places (see the firmware): one tail call, a chain of three, an
ambiguous chain (two fit: gdb shows only the part both share), a tail call inside an
interrupt handler and, below an exception frame, interrupted code reached by a tail call.
At each stop gdb prints `bt` (the reference: names and the PC of every frame above #0),
the registers and RAM. Then:
  1. tools/unwind_snapshot with all methods and with each of CFI, EHABI and prologue
     analysis alone: the functions equal gdb's (plus Reset_Handler, where spoor stops),
     every frame's PC equals gdb's, the frames of the functions that tail-called (known from
     the source, and each one a `b.w` to the next in arm-none-eabi-objdump) are marked
     `tailcall`, and only the ambiguous stop's innermost frame is marked
     `tailcalls-possible`;
  2. `spoor crash --json` and text: the same functions, `"method": "tailcall"` and
     `[tailcall]` on those frames, `"tailcalls_possible": true` and the text note at the
     ambiguous stop;
  3. `spoor gdbserver` serving the snapshot to a second gdb (thread-mode stops): gdb finds
     the same frames from the served registers and memory alone.
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_crash_snapshot import gdb_via_spoor_server  # noqa: E402
from test_unwind_live import build_test_firmware, snapshot_tool  # noqa: E402
from test_unwind_noreturn import spoor_crash  # noqa: E402

REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
SIGNAL = "<signal handler called>"
METHODS = [None, "cfi", "ehabi", "prologue"]
CORES = {
    # name: (gcc flags, QEMU machine, code origin, RAM origin)
    "m3": (["-mcpu=cortex-m3"], "mps2-an385", 0x0, 0x20000000),
    "m33": (["-mcpu=cortex-m33", "-mfloat-abi=soft"], "mps2-an505", 0x10000000, 0x38000000),
}
DWARF = {"dwarf5": ("-gdwarf-5", "DW_TAG_call_site"), "dwarf4": ("-gdwarf-4",
                                                                  "DW_TAG_GNU_call_site")}
# (stop, the functions that tail-called and so have no frame of their own, ambiguous stop)
STOPS = [("single_leaf", ["single_tail"], False),
         ("chain_leaf", ["chain_c", "chain_b", "chain_a"], False),
         ("amb_leaf", ["amb_pick"], True),
         ("h_leaf", ["h_work"], False),
         ("x_irq_leaf", ["x_tail"], False)]
_GDB_FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(<signal handler called>|[^\s(]+)")

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def build(core, dwarf, work):
    flags, _, flash, ram = CORES[core]
    elf = build_test_firmware("tailcall_fw", flags, flash, ram,
                              work / f"tailcall-fw-{core}-{dwarf}.elf",
                              ["-O2", DWARF[dwarf][0]])
    info = subprocess.run([harness.require_tool("arm-none-eabi-readelf"), "--debug-dump=info",
                           str(elf)], check=True, capture_output=True, text=True).stdout
    tag = DWARF[dwarf][1]
    check(f"({tag})" in info, f"{core} {dwarf}: readelf shows no {tag}")
    return elf


def tail_branches(elf):
    """{function: [targets of its b.w tail calls]} from arm-none-eabi-objdump."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d", str(elf)],
                         check=True, capture_output=True, text=True).stdout
    branches, current = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(\w+)>:$", line)
        if m:
            current = m.group(1)
        m = re.search(r"\sb\.w\s+[0-9a-f]+ <(\w+)>", line)
        if m and current:
            branches.setdefault(current, []).append(m.group(1))
    return branches


def take_snapshots(core, elf, work, breakpoints, extra=lambda index: []):
    """Runs elf in QEMU and stops at each breakpoint in turn; per stop, gdb's frames (name, PC
    or None), the registers (JSON for spoor crash, gdb's format for unwind_snapshot), RAM,
    and the text gdb printed for the stop (with the output of the commands extra(index))."""
    _, machine, _, ram = CORES[core]
    commands = [f"break {stop}" for stop in breakpoints]
    for index, _ in enumerate(breakpoints):
        commands += ["continue", f"echo @@STOP {index}\\n", "bt", "info registers",
                     *extra(index),
                     f"dump binary memory {work}/ram{index}.bin {ram:#x} &__stack_top"]
    with harness.Qemu(elf, machine, gdb=True) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, commands, timeout=90)
    chunks = text.split("@@STOP ")[1:]
    check(len(chunks) == len(breakpoints),
          f"{elf.name}: gdb reached {len(chunks)} of {len(breakpoints)} stops")
    snaps = []
    for index, chunk in enumerate(chunks):
        regs = {}
        frames = []
        for line in chunk.splitlines():
            fields = line.split()
            if len(fields) > 1 and fields[0] in REGS and fields[1].startswith("0x"):
                regs[fields[0]] = fields[1]
            m = _GDB_FRAME.match(line)
            if m and int(m.group(1)) == len(frames):  # the bt, not `frame N` output after it
                frames.append((m.group(3), int(m.group(2), 16) if m.group(2) else None))
        regs_json = work / f"regs{index}.json"
        regs_json.write_text(json.dumps(regs))
        regs_txt = work / f"regs{index}.txt"
        regs_txt.write_text("".join(f"{k} {v}\n" for k, v in regs.items()))
        snaps.append({"frames": frames, "regs_json": regs_json, "regs_txt": regs_txt,
                      "mem": f"{ram:#x}:{work}/ram{index}.bin", "text": chunk,
                      "in_handler": int(regs.get("xpsr", "0"), 16) & 0x1FF != 0})
    return snaps


def unwind(tool, elf, snap, methods):
    """tools/unwind_snapshot's frames (name, method, PC, tailcalls-possible; exception rows as
    gdb names them) and its stop line's fields (reason, and the hook for task entry)."""
    command = [str(tool), "-e", str(elf), "--regs", str(snap["regs_txt"]), "--mem", snap["mem"]]
    if methods:
        command += ["--methods", methods]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return [], [out.stderr.strip()]
    rows, stop = [], []
    for line in out.stdout.splitlines():
        fields = line.split("\t")
        if fields[0] == "stop":
            stop = fields[1:]
        elif fields[0] == "call":
            rows.append({"name": fields[4].split(",")[0], "method": fields[1],
                         "pc": int(fields[2], 16),
                         "possible": len(fields) > 5 and fields[5] == "tailcalls-possible"})
        else:
            rows.append({"name": SIGNAL, "method": "exception", "pc": None, "possible": False})
    return rows, stop


def compare(label, tool, elf, snap, stop, tailcallers, ambiguous, branches):
    gdb = snap["frames"]
    gdb_names = [name for name, _ in gdb]
    check(gdb_names[:1] == [stop] and gdb_names[-1] == "main",
          f"{label}: gdb's bt {gdb_names} is not the firmware's chain")
    for caller in tailcallers:  # the source's tail calls are b.w in the code, and gdb shows them
        check(caller in branches, f"{label}: {caller} makes no b.w tail call in the code")
        check(caller in gdb_names, f"{label}: gdb shows no tail-call frame for {caller}")
    want = gdb_names + ["Reset_Handler"]
    for methods in METHODS:
        rows, reason = unwind(tool, elf, snap, methods)
        names = [row["name"] for row in rows]
        tag = f"{label} [{methods or 'all'}]"
        check(names == want and reason == ["reset handler"],
              f"{tag}: spoor {names} (stop {reason}) != gdb {want}")
        if names != want:
            continue
        for row, (name, pc) in zip(rows[1:], gdb[1:]):  # gdb omits a PC at a line start
            check(pc is None or row["pc"] == pc, f"{tag}: {name} at {row['pc']}, gdb at {pc}")
        marked = [row["name"] for row in rows if row["method"] == "tailcall"]
        check(marked == tailcallers, f"{tag}: tailcall frames {marked} != {tailcallers}")
        possible = [row["name"] for row in rows if row["possible"]]
        check(possible == ([stop] if ambiguous else []),
              f"{tag}: tail calls possible above {possible}")
    report = spoor_crash(elf, snap, True)
    entries = report["backtrace"]
    names = [e["function"] if e["kind"] == "frame" else SIGNAL for e in entries]
    check(names == want, f"{label} spoor crash --json: {names} != {want}")
    marked = [e["function"] for e in entries if e["method"] == "tailcall"]
    check(marked == tailcallers, f"{label} spoor crash --json: tailcall {marked}")
    possible = [e["function"] for e in entries if e.get("tailcalls_possible")]
    check(possible == ([stop] if ambiguous else []),
          f"{label} spoor crash --json: tailcalls_possible on {possible}")
    text = spoor_crash(elf, snap, False)
    for caller in tailcallers:
        check(re.search(rf"^  #\d+\s+0x[0-9a-f]+ {caller}\+0x[0-9a-f]+ at .*\[tailcall\]$", text,
                        re.M), f"{label} spoor crash text: no [tailcall] row for {caller}:\n{text}")
    check(("tail calls possible here" in text) == ambiguous,
          f"{label} spoor crash text: note of possible tail calls wrong:\n{text}")
    if not snap["in_handler"]:
        served = gdb_via_spoor_server(elf, str(snap["regs_json"]), snap["mem"])
        check(served == gdb_names, f"{label} gdb via spoor gdbserver: {served} != {gdb_names}")
    print(f"{label}: gdb {gdb_names}")


def main():
    tool = snapshot_tool()
    count = 0
    with tempfile.TemporaryDirectory(prefix="spoor-tailcall-") as tmp:
        for core in CORES:
            for dwarf in DWARF:
                work = Path(tmp) / f"{core}-{dwarf}"
                work.mkdir()
                elf = build(core, dwarf, work)
                branches = tail_branches(elf)
                snaps = take_snapshots(core, elf, work, [stop for stop, _, _ in STOPS])
                for snap, (stop, tailcallers, ambiguous) in zip(snaps, STOPS):
                    compare(f"{core} {dwarf} {stop}", tool, elf, snap, stop, tailcallers,
                            ambiguous, branches)
                    count += 1
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"all {count} tail-call stops match gdb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
