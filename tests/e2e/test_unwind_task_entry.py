"""A task's true outermost frame: RTOS-shaped firmware in QEMU (M3, M33), against gdb-multiarch.

tests/e2e/fw/rtos_fw.c (-Os) runs two tasks on PSP under a tiny FreeRTOS-like scheduler;
each was started with a made-up frame whose LR is a task-exit hook: prvTaskExitError (the
FreeRTOS name; some code also calls it, so only the name tells it is a hook) for task_a,
task_exit_error (no list has the name; nothing calls it) for task_b. The linker script puts
xPortPendSVHandler right before prvTaskExitError, and prvTaskExitError right before
task_exit_error. gdb stops in a_work (task_a), at task_b's first instruction and in b_work
(task_b), and prints `bt`, the registers and RAM. Checked:
  * the firmware is what the test says: arm-none-eabi-objdump shows a `bl prvTaskExitError`
    and no branch to task_exit_error; the task's stacked LR (gdb's `info frame` of the task's
    frame: saved lr) is the hook's address with the Thumb bit;
  * gdb's own bt shows the function before the hook as the task's caller (the problem);
  * tools/unwind_snapshot, all methods and each of CFI, EHABI, prologue alone: the frames
    equal gdb's up to the task function, then the walk stops with "task entry" naming the
    hook;
  * `spoor crash --json`: the same functions, "stop": "task entry", "task_exit_hook" the
    hook; the text says it.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_unwind_live import build_test_firmware, snapshot_tool  # noqa: E402
from test_unwind_noreturn import spoor_crash  # noqa: E402
from test_unwind_tailcall import CORES, METHODS, take_snapshots, unwind  # noqa: E402

# (gdb breakpoint, the functions spoor must give, the task's hook, the function before it)
STOPS = [("a_work", ["a_work", "task_a"], "prvTaskExitError", "xPortPendSVHandler"),
         ("*task_b", ["task_b"], "task_exit_error", "prvTaskExitError"),
         ("b_work", ["b_work", "task_b"], "task_exit_error", "prvTaskExitError")]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def build(core, work):
    flags, _, flash, ram = CORES[core]
    return build_test_firmware("rtos_fw", flags, flash, ram, work / f"rtos-fw-{core}.elf",
                               ["-Os", "-ffunction-sections"])


def check_firmware(core, elf):
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d", str(elf)],
                         check=True, capture_output=True, text=True).stdout
    check(re.search(r"\sbl\s+[0-9a-f]+ <prvTaskExitError>", out),
          f"{core}: no code calls prvTaskExitError: the name rule is not tested")
    check(not re.search(r"\sb[a-z.]*\s+[0-9a-f]+ <task_exit_error>", out),
          f"{core}: some code branches to task_exit_error")


def snapshots(core, elf, work):
    """The stops, each with the task's return address from gdb's `info frame` (saved pc)."""
    snaps = take_snapshots(core, elf, work, [stop for stop, _, _, _ in STOPS],
                           lambda index: [f"frame {len(STOPS[index][1]) - 1}", "info frame"])
    check(len(snaps) == len(STOPS), f"{core}: gdb reached {len(snaps)} of {len(STOPS)} stops")
    for snap in snaps:
        saved = re.search(r"saved pc = (0x[0-9a-f]+)", snap["text"])
        snap["saved_pc"] = int(saved.group(1), 16) if saved else None
        snap["bt"] = [name for name, _ in snap["frames"]]
    return snaps


def compare(core, tool, elf, snap, stop, expect, hook, before):
    label = f"{core} {stop}"
    syms = harness.symbol_addresses(elf)
    gdb = snap["bt"]
    check(gdb[:len(expect)] == expect, f"{label}: gdb's bt {gdb} does not start with {expect}")
    # gdb's caller of the task is the function before the hook: the return address is the
    # hook's first byte, and gdb looks up pc - 1.
    check(gdb[len(expect):len(expect) + 1] == [before],
          f"{label}: gdb's bt {gdb}: the task's caller is not {before}")
    check(snap["saved_pc"] == syms[hook],
          f"{label}: the task's return address {snap['saved_pc']} is not {hook}")
    for methods in METHODS:
        rows, reason = unwind(tool, elf, snap, methods)
        names = [row["name"] for row in rows]
        check(names == expect and reason == ["task entry", hook],
              f"{label} [{methods or 'all'}]: spoor {names} (stop {reason}) != {expect} "
              f"(task entry, {hook})")
    report = spoor_crash(elf, snap, True)
    names = [e["function"] for e in report["backtrace"]]
    check(names == expect and report["stop"] == "task entry"
          and report["task_exit_hook"] == hook,
          f"{label} spoor crash --json: {names}, stop {report['stop']}, hook "
          f"{report['task_exit_hook']}")
    text = spoor_crash(elf, snap, False)
    check(f"(stopped: task entry: the task was started with return address {hook}, not called)"
          in text, f"{label} spoor crash text:\n{text}")
    print(f"{label}: gdb {gdb}; spoor {expect}, task entry ({hook})")


def main():
    tool = snapshot_tool()
    with tempfile.TemporaryDirectory(prefix="spoor-task-entry-") as tmp:
        for core in CORES:
            work = Path(tmp) / core
            work.mkdir()
            elf = build(core, work)
            check_firmware(core, elf)
            for snap, (stop, expect, hook, before) in zip(snapshots(core, elf, work), STOPS):
                compare(core, tool, elf, snap, stop, expect, hook, before)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"all {len(CORES) * len(STOPS)} task stops end at the task function with task entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
