"""The host unwinder against gdb-multiarch on live QEMU stops (M3, M4F, M33).

tests/e2e/fw/unwind_fw.c is built here with arm-none-eabi-gcc for each core and run in QEMU
with its gdbstub. gdb stops at functions with known stacks (thread mode on MSP, a
frame-pointer/VLA frame, an interrupt handler, a nested interrupt, an extended FP exception
frame, a task on PSP, a HardFault from a call through a bad function pointer); at each stop it prints `bt`, the registers and dumps RAM. tools/unwind_snapshot runs
the spoor unwinder on the same registers and memory, and the frames are compared function
by function:
  * a thread-mode stop: spoor's frames equal gdb's `bt` (gdb stops at main; spoor must go
    on to Reset_Handler, or end at the task's 0xFFFFFFFF return address);
  * a stop inside the interrupt handler: the frames up to the exception row equal gdb's up
    to "<signal handler called>", the exception row has the handler's number, and the
    frames after it equal gdb's `bt` at the breakpoint on the interrupted function just
    before the interrupt was pended (QEMU's gdbstub shows no MSP/PSP, so gdb cannot itself
    unwind an exception frame on PSP; this is the ground truth the issue prescribes).
Each stop is unwound with all methods and with each of CFI, EHABI, prologue analysis alone.

The example firmware of the build (calls-<core>.elf, built with the project's flags) is
checked the same way at level_three, tick_work (SysTick) and irq_work (IRQ3), on M0, M3,
M4F and M33, against gdb's own `bt` (those stacks are all on MSP, which gdb follows).
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Qemu, parse_backtraces, require_tool, run_gdb  # noqa: E402

SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("SPOOR_BUILD_DIR", SOURCE_DIR / "build"))
FW_DIR = SOURCE_DIR / "tests" / "e2e" / "fw"

CORES = {
    # name: (gcc flags, QEMU machine, code origin, RAM origin, has FPU)
    "m3": (["-mcpu=cortex-m3"], "mps2-an385", 0x0, 0x20000000, False),
    "m4f": (["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"], "mps2-an386", 0x0,
            0x20000000, True),
    "m33": (["-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"], "mps2-an505",
            0x10000000, 0x38000000, True),
}
METHOD_SETS = [None, "cfi", "ehabi", "prologue"]
SIGNAL = "<signal handler called>"

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def build_test_firmware(name, flags, flash, ram, elf, extra=()):
    """tests/e2e/fw/NAME.c linked with NAME.ld at the machine's FLASH and RAM addresses."""
    subprocess.run([require_tool("arm-none-eabi-gcc"), *flags, "-mthumb", "-g", "-O1",
                    "-funwind-tables", "-ffreestanding", "-nostdlib", "-Wall", "-Wextra",
                    "-Werror", *extra, "-T", str(FW_DIR / f"{name}.ld"),
                    f"-Wl,--defsym=FW_FLASH={flash:#x},--defsym=FW_RAM={ram:#x}",
                    str(FW_DIR / f"{name}.c"), "-o", str(elf)], check=True)
    return elf


def build_firmware(core, out_dir):
    flags, _, flash, ram, _ = CORES[core]
    return build_test_firmware("unwind_fw", flags, flash, ram, out_dir / f"unwind-fw-{core}.elf")


def snapshot_tool():
    """tools/unwind_snapshot from the build, or built here against libspoor.a."""
    built = BUILD_DIR / "tools" / "unwind_snapshot"
    if built.is_file():
        return built
    library = BUILD_DIR / "libspoor.a"
    if not library.is_file():
        raise RuntimeError(f"neither {built} nor {library} exists")
    out = BUILD_DIR / "unwind_snapshot_e2e"
    cache = (BUILD_DIR / "CMakeCache.txt").read_text()
    sanitize = ["-fsanitize=address,undefined"] if "SPOOR_SANITIZE:BOOL=ON" in cache else []
    libs = subprocess.run(["pkg-config", "--libs", "libdw", "libelf", "capstone"], check=True,
                          capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", *sanitize, "-I",
                    str(SOURCE_DIR / "include"), str(SOURCE_DIR / "tools" / "unwind_snapshot.c"),
                    str(library), *libs, "-liberty", "-lm", "-o", str(out)], check=True)
    return out


# The breakpoints, in the order the firmware reaches them. "before" names the stop whose
# gdb bt is the ground truth for the frames below an interrupt's exception row; "gdb" means
# gdb's own bt at the stop is (nested interrupts on MSP, which gdb follows).
# Each entry: (breakpoint, ground truth, exception number of the handler).
def stop_plan(has_fpu):
    plan = [("t_deep", None, None), ("t_interrupted", None, None),
            ("i_deep", "t_interrupted", 16), ("n_deep", "gdb", None)]
    if has_fpu:
        plan += [("t_float", None, None), ("i_deep", "t_float", 16)]
    plan += [("task_deep", None, None)]
    task_pend = "t_float" if has_fpu else "t_interrupted"
    plan += [(task_pend, None, None), ("i_deep", task_pend, 16)]
    # the bad function pointer: gdb's bt in crash_caller is the truth below the HardFault
    plan += [("crash_caller", None, None), ("fault_stop", "crash_caller", 3)]
    return plan


def collect(core, elf, work):
    _, machine, _, ram, has_fpu = CORES[core]
    plan = stop_plan(has_fpu)
    commands = [f"break {name}" for name in sorted({entry[0] for entry in plan})]
    for index, _ in enumerate(plan):
        commands += ["continue", f"echo @@STOP {index}\\n", "bt", "info registers",
                     "printf \"psp 0x%x\\n\", irq_psp",
                     f"dump binary memory {work}/ram{index}.bin {ram:#x} &__stack_top"]
    with Qemu(elf, machine, gdb=True) as qemu:
        text = run_gdb(elf, qemu.gdb_port, commands, timeout=60)
    stops = []
    chunks = text.split("@@STOP ")[1:]
    check(len(chunks) == len(plan), f"{core}: gdb reached {len(chunks)} of {len(plan)} stops")
    for index, chunk in enumerate(chunks):
        traces = parse_backtraces(chunk)
        regs = work / f"regs{index}.txt"
        lines = [line for line in chunk.splitlines()
                 if line.split()[:1] and line.split()[0] in REGISTER_NAMES]
        in_handler = any(line.startswith("xpsr") and int(line.split()[1], 16) & 0x1FF
                         for line in lines)
        if in_handler:
            # In a handler SP is MSP; PSP is what the handler captured.
            sp = next(line.split()[1] for line in lines if line.startswith("sp "))
            lines.append(f"msp {sp}")
            lines += [line for line in chunk.splitlines() if line.startswith("psp ")]
        regs.write_text("\n".join(lines) + "\n")
        stops.append({"name": plan[index][0], "before": plan[index][1],
                      "exception": plan[index][2],
                      "bt": traces[0] if traces else [], "regs": regs,
                      "ram": work / f"ram{index}.bin"})
    return stops


REGISTER_NAMES = {f"r{i}" for i in range(13)} | {"sp", "lr", "pc", "xpsr"}


def unwind(tool, elf, stop, ram, methods):
    command = [str(tool), "-e", str(elf), "--regs", str(stop["regs"]),
               "--mem", f"{ram:#x}:{stop['ram']}"]
    if methods:
        command += ["--methods", methods]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return None, out.stderr.strip()
    rows, reason, frame = [], None, 0
    for line in out.stdout.splitlines():
        fields = line.split("\t")
        if fields[0] == "stop":
            reason = fields[1]
        elif fields[0] == "exception":
            rows.append(("exception", int(fields[4]), fields[5].split(",")))
        else:
            # an inline chain is listed innermost first, as gdb lists it
            rows += [("call", name, frame, fields[1]) for name in fields[4].split(",")]
            frame += 1
    return rows, reason


def check_outer(label, calls, gdb_bt, reason):
    """spoor's frames equal gdb's; gdb stops at main (spoor must go on to Reset_Handler)
    or at the task's 0xFFFFFFFF return address (spoor must end there too)."""
    expect = [name for name in gdb_bt if name != SIGNAL]
    if "main" in expect:
        expect.append("Reset_Handler")
        want_reason = "reset handler"
    else:
        want_reason = "end of stack"
    check(len(expect) > 1 and calls == expect and reason == want_reason,
          f"{label}: spoor {calls} (stop {reason}) != gdb {expect} (stop {want_reason})")


def index_in_task(stops, stop):
    """True for stops after the task started (the firmware's last phase runs on PSP)."""
    names = [s["name"] for s in stops]
    return stops.index(stop) > names.index("task_deep")


def compare(core, tool, elf, stops):
    ram = CORES[core][3]
    bt_of = {}
    for stop in stops:
        gdb = stop["bt"]
        if stop["before"] is None:
            bt_of[stop["name"]] = gdb
        for methods in METHOD_SETS:
            label = f"{core} {stop['name']} [{methods or 'all'}]"
            rows, reason = unwind(tool, elf, stop, ram, methods)
            if rows is None:
                check(False, f"{label}: unwind_snapshot failed: {reason}")
                continue
            calls = [row[1] for row in rows if row[0] == "call"]
            if stop["before"] is None:
                check_outer(label, calls, stop["bt"], reason)
                continue
            if stop["before"] == "gdb":
                got = gdb_style(rows, gdb[0] if gdb else None)
                check(got == gdb + ["Reset_Handler"] and reason == "reset handler",
                      f"{label}: spoor {got} (stop {reason}) != gdb {gdb}")
                numbers = [row[1] for row in rows if row[0] == "exception"]
                check(numbers == [17, 16], f"{label}: exception rows {numbers}, want [17, 16]")
                continue
            # inside the handler
            cut = gdb.index(SIGNAL) if SIGNAL in gdb else len(gdb)
            exc = [i for i, row in enumerate(rows) if row[0] == "exception"]
            check(len(exc) == 1, f"{label}: {len(exc)} exception rows in {rows}")
            if len(exc) != 1:
                continue
            inner = [row[1] for row in rows[:exc[0]]]
            outer = [row[1] for row in rows[exc[0] + 1:] if row[0] == "call"]
            check(inner == gdb[:cut], f"{label}: handler part spoor {inner} != gdb {gdb[:cut]}")
            check(rows[exc[0]][1] == stop["exception"],
                  f"{label}: exception {rows[exc[0]][1]} != {stop['exception']}")
            flags = rows[exc[0]][2]
            # the FP context is active in t_float, and in the task once t_float ran there
            want_fp = stop["before"] == "t_float" or (stop["name"] == "fault_stop"
                                                      and CORES[core][4])
            want_psp = index_in_task(stops, stop)
            check(("fp" in flags) == want_fp and ("psp" in flags) == want_psp,
                  f"{label}: exception frame flags {flags}, want fp={want_fp} psp={want_psp}")
            # the interrupt came while pend_irq0 (inlined) ran inside the interrupted function
            got = [name for name in outer if name != "pend_irq0"]
            if stop["name"] == "fault_stop":
                # PC 0xbf00de4c is no function; the walk goes on from LR
                methods_after = [row[3] for row in rows[exc[0] + 1:] if row[0] == "call"]
                check(got[:1] == ["??"] and methods_after[1:2] == ["lr"],
                      f"{label}: bad-pointer frame {got[:1]} then {methods_after[1:2]}")
                got = got[1:]
            check_outer(f"{label} (interrupted part, gdb at {stop['before']})", got,
                        bt_of.get(stop["before"], []), reason)
        print(f"{core} {stop['name']}: gdb {stop['bt']}")


EXAMPLE_STOPS = [("level_three", None), ("tick_work", 15), ("irq_work", 19)]
EXAMPLE_MACHINES = {"m0": "microbit", "m3": "mps2-an385", "m4f": "mps2-an386",
                    "m33": "mps2-an505"}


def gdb_style(rows, gdb_first):
    """spoor's rows as gdb's bt lists them: exception rows become <signal handler called>.
    At a breakpoint on the first instruction of an inlined call gdb shows the function it
    was inlined into, so inline entries of frame 0 before gdb's first function are dropped."""
    names = [SIGNAL if row[0] == "exception" else row[1] for row in rows]
    inline0 = [row[1] for row in rows if row[0] == "call" and row[2] == 0]
    if gdb_first in inline0:
        names = names[inline0.index(gdb_first):]
    return names


def compare_examples(tool, work):
    value = os.environ.get("SPOOR_FIRMWARE_DIR")
    examples = Path(value) / "examples" if value else None
    if examples is None or not examples.is_dir():
        print(f"note: no example firmware ({examples}); only the test firmware was checked")
        return
    for core, machine in EXAMPLE_MACHINES.items():
        elf = examples / f"calls-{core}.elf"
        check(elf.is_file(), f"{elf} is missing")
        if not elf.is_file():
            continue
        commands = []
        for index, (name, _) in enumerate(EXAMPLE_STOPS):
            # level_three runs several times; each stop is the first hit after the last
            commands += ["delete", f"break {name}", "continue", f"echo @@STOP {index}\\n", "bt", "info registers",
                         f"dump binary memory {work}/{core}-stack{index}.bin $sp &__stack_top"]
        with Qemu(elf, machine, gdb=True) as qemu:
            text = run_gdb(elf, qemu.gdb_port, commands, timeout=60)
        chunks = text.split("@@STOP ")[1:]
        check(len(chunks) == len(EXAMPLE_STOPS), f"calls-{core}: gdb reached {len(chunks)} stops")
        for index, chunk in enumerate(chunks):
            name, number = EXAMPLE_STOPS[index]
            traces = parse_backtraces(chunk)
            gdb = traces[0] if traces else []
            lines = [line for line in chunk.splitlines()
                     if line.split()[:1] and line.split()[0] in REGISTER_NAMES]
            sp = next((line.split()[1] for line in lines if line.startswith("sp ")), "0")
            regs = work / f"{core}-regs{index}.txt"
            regs.write_text("\n".join(lines) + "\n")
            stop = {"regs": regs, "ram": work / f"{core}-stack{index}.bin"}
            for methods in METHOD_SETS:
                label = f"calls-{core} {name} [{methods or 'all'}]"
                rows, reason = unwind(tool, elf, stop, int(sp, 16), methods)
                if rows is None:
                    check(False, f"{label}: unwind_snapshot failed: {reason}")
                    continue
                got = gdb_style(rows, gdb[0] if gdb else None)
                expect = gdb + ["Reset_Handler"]
                check(len(gdb) > 1 and gdb[-1] == "main" and got == expect
                      and reason == "reset handler",
                      f"{label}: spoor {got} (stop {reason}) != gdb {expect}")
                numbers = [row[1] for row in rows if row[0] == "exception"]
                check(numbers == ([number] if number else []),
                      f"{label}: exception rows {numbers}, want {number}")
            print(f"calls-{core} {name}: gdb {gdb}")


def main():
    tool = snapshot_tool()
    with tempfile.TemporaryDirectory(prefix="spoor-unwind-") as tmp:
        work = Path(tmp)
        for core in CORES:
            elf = build_firmware(core, work)
            core_dir = work / core
            core_dir.mkdir()
            stops = collect(core, elf, core_dir)
            compare(core, tool, elf, stops)
        compare_examples(tool, work)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all unwinds match gdb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
