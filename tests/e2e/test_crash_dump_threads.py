"""Thread-aware crash dumps on an 8 KiB buffer, and spoor_crash_init()'s wiring check, in QEMU.

tests/e2e/fw/rtos_dump_fw.c is built for the Cortex-M3 (mps2-an385) once per RTOS shape
(FreeRTOS, Zephyr, RTX5, ThreadX: the kernels' TCB types and globals, their Cortex-M3 ports'
saved contexts) and for the Cortex-M33 (mps2-an505, Secure state, soft float: SecureFault is
checked too) once per RTOS whose Armv8-M Mainline port saves what the Cortex-M3 port does
(Zephyr, RTX5, ThreadX; FreeRTOS's ARM_CM33_NTZ port saves PSPLIM and EXC_RETURN too) with spoor's target library from the sources and a vendor-style startup file
(rtos_dump_startup.c), an 8 KiB .noinit dump buffer and the RTOS's spoor_crash_add_*() call.
Four tasks switch; the running one hits an undefined instruction; spoor's UsageFault handler
writes the dump and resets; the firmware writes it to dump.bin over semihosting.

1. With -DSTATIC_HANDLER the startup file's vector table holds its own `static
   HardFault_Handler` and Default_Handler for MemManage/BusFault/UsageFault (it links without a
   word): spoor_crash_init() must return false, and the reason the firmware prints must name
   the table entry and spoor's handler by the addresses arm-none-eabi-nm gives for the two
   HardFault_Handler symbols (M3, and M33 with VTOR at 0x10000000). On the M33 a table with
   spoor's handlers but Default_Handler for SecureFault must be reported the same way. A
   vendor's handlers whose first instruction is B.W to spoor's (-DBRANCH_HANDLER) are accepted,
   and the UsageFault's dump arrives through them.
2. Fixed (the table names spoor's handlers, spoor/handlers.h): the dump arrives, fits the 8 KiB
   buffer, holds more than 8 memory records, thread stacks among them (kind 6), read here with
   a parser written from spoor/dump_format.h.
3. The ground truth: the same firmware under QEMU's gdbstub, stopped at monitor_fault (the
   faulting instruction: nothing moves between there and the fault). gdb-multiarch's `bt` is the
   running task's; each parked task's registers are computed here from a RAM dump and the saved
   context as the port leaves it (gdb prints the TCB member), given to gdb (`set $r4 = ...`,
   `bt`). `spoor crash --threads --json` on the dump must list every task (names, the running
   one current) with backtraces equal to gdb's.
4. The gdb hand-over (FreeRTOS): the firmware run again under gdb, stopped after the reset
   before it hands the dump over; gdb/spoor.py's `spoor-dump FILE dump_buffer` and `spoor-dump
   FILE` (the buffer spoor_crash_init() was given) must write the very bytes the firmware
   writes through semihosting.
5. The capture's cost: QEMU's exec log (one instruction per block) counts the instructions from
   the UsageFault entry to the reset; printed, and bounded.
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Qemu, parse_backtraces, parse_exec_log, require_tool, run_gdb  # noqa: E402
from test_crash_threads import spoor_functions  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FW_DIR = SOURCE_DIR / "tests" / "e2e" / "fw"
TARGET = SOURCE_DIR / "target"
# core: (gcc flags, QEMU machine, code origin, RAM origin, the RTOSes run on it)
CORES = {
    "m3": (["-mcpu=cortex-m3"], "mps2-an385", 0x0, 0x20000000,
           ["freertos", "zephyr", "rtx5", "threadx"]),
    "m33": (["-mcpu=cortex-m33", "-mfloat-abi=soft"], "mps2-an505", 0x10000000, 0x38000000,
            ["zephyr", "rtx5", "threadx"]),
}
RAM_SIZE = 0x10000
BUFFER = 8192
TASKS = ["alpha", "beta", "gamma", "monitor"]
RUNNING = "monitor"
SIGNAL = "<signal handler called>"
# RTOS: (define, spoor's name for it, gdb expressions of what the port saved, per TCB)
RTOSES = {
    "freertos": ("DUMP_FREERTOS", "FreeRTOS", {"top": "(unsigned)((TCB_t *){t})->pxTopOfStack"}),
    "zephyr": ("DUMP_ZEPHYR", "Zephyr",
               {**{f"v{i}": f"((struct k_thread *){{t}})->callee_saved.v{i}" for i in range(1, 9)},
                "psp": "((struct k_thread *){t})->callee_saved.psp"}),
    "rtx5": ("DUMP_RTX5", "RTX5", {"top": "((osRtxThread_t *){t})->sp"}),
    "threadx": ("DUMP_THREADX", "ThreadX",
                {"top": "(unsigned)((TX_THREAD *){t})->tx_thread_stack_ptr"}),
}
MAX_CAPTURE_INSTRUCTIONS = 200000


def build(rtos, core, out, static_handler=False, extra=()):
    define = RTOSES[rtos][0]
    flags, _, flash, ram, _ = CORES[core]
    sources = [FW_DIR / "rtos_dump_fw.c", FW_DIR / "rtos_dump_startup.c",
               *sorted((TARGET / "src").glob("*.c")), *sorted((TARGET / "src" / "cortexm").glob("*.c"))]
    subprocess.run([require_tool("arm-none-eabi-gcc"), *flags, "-mthumb", "-g", "-O1",
                    "-funwind-tables", "-ffreestanding", "-ffunction-sections", "-fdata-sections",
                    "-Wall", "-Wextra", "-Werror", f"-D{define}",
                    *(["-DSTATIC_HANDLER"] if static_handler else []), *extra,
                    "-I", str(TARGET / "include"), "-I", str(TARGET / "include" / "spoor" / "freertos"),
                    "-I", str(FW_DIR), "-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections",
                    "-Wl,--build-id=sha1", "-T", str(FW_DIR / "rtos_dump_fw.ld"),
                    f"-Wl,--defsym=FW_FLASH={flash:#x},--defsym=FW_RAM={ram:#x}",
                    *map(str, sources), "-o", str(out)], check=True)
    return out


def nm(elf):
    """[(address, type letter, name)] from arm-none-eabi-nm."""
    text = subprocess.run([require_tool("arm-none-eabi-nm"), str(elf)], check=True,
                          capture_output=True, text=True).stdout
    return [(int(a, 16), k, n) for a, k, n in (line.split() for line in text.splitlines()
                                                 if len(line.split()) == 3)]


def symbol(elf, name):
    return next(a for a, _, n in nm(elf) if n == name)


def memory_records(dump):
    """(address, kind, length) of every MEMORY record, and the dump's total size
    (spoor/dump_format.h: 16-byte header, records of type u16, flags u16, length u32)."""
    assert dump[:4] == b"SPDM", "not a dump"
    total = struct.unpack_from("<I", dump, 8)[0]
    out, off = [], 16
    while off + 8 <= total:
        rtype, _, length = struct.unpack_from("<HHI", dump, off)
        if rtype == 0:
            break
        if rtype == 3:
            addr, kind = struct.unpack_from("<IH", dump, off + 8)
            out.append((addr, kind, length - 8))
        off += 8 + ((length + 3) & ~3)
    return out, total


def run_static(core, work):
    """1: the vendor's static HardFault_Handler is found and named."""
    machine, flash = CORES[core][1], CORES[core][2]
    elf = build(CORES[core][4][0], core, work / f"static-{core}.elf", static_handler=True)
    symbols = nm(elf)
    vendor = [a for a, k, n in symbols if n == "HardFault_Handler" and k == "t"]
    spoor = [a for a, k, n in symbols if n == "HardFault_Handler" and k == "T"]
    check(len(vendor) == 1 and len(spoor) == 1, f"static: HardFault_Handler symbols {symbols}")
    with Qemu(elf, machine) as qemu:
        result = qemu.wait(30)
    want = (f"spoor_crash_init: HardFault entry of the vector table at {flash:#010x} is "
            f"{vendor[0] | 1:#010x}, not spoor's HardFault_Handler {spoor[0] | 1:#010x}")
    check(result.returncode == 1 and want in result.output,
          f"static {core}: exit {result.returncode}, output {result.output!r}, want {want!r}")


def run_securefault(work):
    """1 on the Cortex-M33 in the Secure state: a table with spoor's HardFault, MemManage,
    BusFault and UsageFault handlers but Default_Handler for SecureFault is reported too."""
    machine, flash = CORES["m33"][1], CORES["m33"][2]
    elf = build("rtx5", "m33", work / "securefault.elf", extra=["-DSECUREFAULT_DEFAULT"])
    default = symbol(elf, "Default_Handler")
    mine = next(a for a, k, n in nm(elf) if n == "SecureFault_Handler" and k == "T")
    with Qemu(elf, machine) as qemu:
        result = qemu.wait(30)
    want = (f"spoor_crash_init: SecureFault entry of the vector table at {flash:#010x} is "
            f"{default | 1:#010x}, not spoor's SecureFault_Handler {mine | 1:#010x}")
    check(result.returncode == 1 and want in result.output,
          f"securefault: exit {result.returncode}, output {result.output!r}, want {want!r}")


def reason_code(dump):
    """The REASON record's code (spoor/dump_format.h: type 5, u32 reason, u32 code)."""
    total, off = struct.unpack_from("<I", dump, 8)[0], 16
    while off + 8 <= total:
        rtype, _, length = struct.unpack_from("<HHI", dump, off)
        if rtype == 5:
            return struct.unpack_from("<I", dump, off + 12)[0]
        if rtype == 0:
            break
        off += 8 + ((length + 3) & ~3)
    return None


def run_branch(work):
    """1, accepted wiring: the vendor's HardFault and UsageFault handlers whose first
    instruction is B.W to spoor's. spoor_crash_init() accepts them, and the UsageFault passes
    through the vendor's handler into spoor's: the dump arrives, exception 6."""
    machine = CORES["m3"][1]
    elf = build("freertos", "m3", work / "branch.elf", extra=["-DBRANCH_HANDLER"])
    os.chdir(work)
    with Qemu(elf, machine) as qemu:
        result = qemu.wait(30)
    dump = work / "dump.bin"
    code = reason_code(dump.read_bytes()) if dump.is_file() else None
    check(result.returncode == 0 and "dump written" in result.output and code == 6,
          f"branch: exit {result.returncode}, output {result.output!r}, exception {code}")
    dump.unlink(missing_ok=True)


def saved_registers(rtos, word, saved):
    """A parked task's registers from its saved context (Cortex-M3, basic frames): FreeRTOS
    (pxTopOfStack) and RTX5 (sp): r4-r11 then the hardware frame; ThreadX (tx_thread_stack_ptr):
    EXC_RETURN, r4-r11, the frame; Zephyr: r4-r11 in callee_saved v1-v8, the frame at psp."""
    if rtos == "zephyr":
        regs = {f"r{4 + i}": saved[f"v{1 + i}"] for i in range(8)}
        frame = saved["psp"]
    else:
        at = saved["top"] + (4 if rtos == "threadx" else 0)
        regs = {f"r{4 + i}": word(at + 4 * i) for i in range(8)}
        frame = at + 32
    r0, r1, r2, r3, r12, lr, pc, xpsr = (word(frame + 4 * i) for i in range(8))
    regs.update(r0=r0, r1=r1, r2=r2, r3=r3, r12=r12, lr=lr, pc=pc)
    regs["sp"] = frame + 32 + (4 if xpsr & (1 << 9) else 0)
    return regs


def gdb_reference(rtos, core, elf, work):
    """Stops at monitor_fault; gdb's bt there, the TCBs and what each task saved, the RAM.
    Returns (running bt, saved)."""
    members = RTOSES[rtos][2]
    commands = ["break monitor_fault", "continue", "bt"]
    for i in range(len(TASKS)):
        commands.append(f'printf "@@{i} tcb %u\\n", (unsigned)fw_tcbs[{i}]')
        commands += [f'printf "@@{i} {key} %u\\n", {expr.format(t=f"fw_tcbs[{i}]")}'
                     for key, expr in members.items()]
    ram = CORES[core][3]
    commands += [f"dump binary memory {work}/ram.bin {ram:#x} {ram + RAM_SIZE:#x}", "kill"]
    with Qemu(elf, CORES[core][1], gdb=True) as qemu:
        text = run_gdb(elf, qemu.gdb_port, commands)
    traces = parse_backtraces(text)
    saved = [{} for _ in TASKS]
    for i, key, value in re.findall(r"^@@(\d) (\w+) (\d+)$", text, re.M):
        saved[int(i)][key] = int(value)
    check(traces and all("tcb" in s for s in saved), f"{rtos}: gdb: {text[-1500:]}")
    return (traces[0] if traces else []), saved


def gdb_backtraces(elf, machine, registers, label):
    """gdb-multiarch's `bt` for each register set ({register: value}), in a second run of the
    firmware (it runs the same way every time: no timer, no input) stopped at the same place."""
    commands = ["break monitor_fault", "continue"]
    for regs in registers:
        commands += [f"set ${reg} = {value:#x}" for reg, value in regs.items()]
        commands += ["set $xpsr = 0x01000000", "bt"]
    with Qemu(elf, machine, gdb=True) as qemu:
        text = run_gdb(elf, qemu.gdb_port, commands + ["kill"])
    traces = parse_backtraces(text)
    check(len(traces) == len(registers), f"{label}: gdb gave {len(traces)} backtraces: "
          f"{text[-1500:]}")
    return traces


def covered(records, dump, addr, length):
    """True when [addr, addr + length) lies in the dump's memory records."""
    for start, _, n in records:
        if start <= addr < start + n:
            if addr + length <= start + n:
                return True
            return covered(records, dump, start + n, addr + length - start - n)
    return False


def gdb_handover(elf, machine, work, dump):
    """4: spoor-dump from gdb after the reset equals the semihosting hand-over."""
    commands = ["break spoor_crash_to_host_file", "continue",
                f"source {SOURCE_DIR}/gdb/spoor.py", f"spoor-dump {work}/given.bin dump_buffer",
                f"spoor-dump {work}/found.bin", "kill"]
    with Qemu(elf, machine, gdb=True) as qemu:
        text = run_gdb(elf, qemu.gdb_port, commands)
    for name in ("given", "found"):
        path = work / f"{name}.bin"
        line = f"spoor-dump: {len(dump)} bytes of dump (state: waiting) written to {path}"
        check(line in text and path.is_file() and path.read_bytes() == dump,
              f"gdb hand-over ({name}): {text[-1200:]}")


def capture_instructions(elf, machine, work):
    """Instructions from the UsageFault entry to the reset (QEMU's exec log)."""
    log = work / "exec.log"
    with Qemu(elf, machine, exec_log=log) as qemu:
        qemu.wait(120)
    trace = parse_exec_log(log)
    reset = symbol(elf, "Reset_Handler") & ~1
    entries = [e for e in trace.exceptions if e.number == 6]
    if not entries:
        return None
    start = entries[0].position
    end = next((i for i in range(start, len(trace.pcs)) if trace.pcs[i] == reset), None)
    log.unlink()
    return None if end is None else end - start


def run_one(rtos, core, work):
    display = RTOSES[rtos][1]
    machine, ram_start = CORES[core][1], CORES[core][3]
    label = f"{rtos} {core}"
    elf = build(rtos, core, work / f"{rtos}-{core}.elf")
    os.chdir(work)
    with Qemu(elf, machine) as qemu:
        result = qemu.wait(30)
    dump_path = work / "dump.bin"
    check(result.returncode == 0 and "dump written" in result.output and dump_path.is_file(),
          f"{label}: exit {result.returncode}: {result.output!r}")
    if not dump_path.is_file():
        return
    dump = dump_path.read_bytes()
    records, total = memory_records(dump)
    check(total == len(dump) and total <= BUFFER - 16, f"{label}: dump of {total} bytes")
    check(any(kind == 6 for _, kind, _ in records),
          f"{label}: no thread stack records: {[(hex(a), k, n) for a, k, n in records]}")

    running_bt, saved = gdb_reference(rtos, core, elf, work)
    ram = (work / "ram.bin").read_bytes()

    def word(addr):
        return struct.unpack_from("<I", ram, addr - ram_start)[0]

    tcbs = [s.get("tcb") for s in saved]
    order = [i for i, name in enumerate(TASKS) if name != RUNNING]
    registers = [saved_registers(rtos, word, saved[i]) for i in order]
    for i, regs in zip(order, registers):
        # the TCB and the hardware frame of the saved context are in the dump
        check(covered(records, dump, tcbs[i], 16) and covered(records, dump, regs["sp"] - 32, 32),
              f"{label}: {TASKS[i]}: TCB {tcbs[i]:#x} or stack at {regs['sp']:#x} not in the dump")
    traces = gdb_backtraces(elf, machine, registers, label)
    out = subprocess.run([SPOOR, "crash", "-e", str(elf), str(dump_path), "--threads", "--json"],
                         capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, f"{label}: spoor crash: {out.stderr}")
    if out.returncode != 0:
        return
    report = json.loads(out.stdout)
    threads = {int(t["tcb"], 16): t for t in report.get("threads", [])}
    check(report.get("rtos") == display and set(threads) == set(tcbs),
          f"{label}: threads {report.get('rtos')} {[hex(t) for t in threads]} != "
          f"{[hex(t) for t in tcbs if t]}")
    for i, name in enumerate(TASKS):
        t = threads.get(tcbs[i])
        check(t is not None and t.get("name") == name and bool(t.get("current")) == (name == RUNNING),
              f"{label}: {name}: {t}")
    running = threads.get(tcbs[TASKS.index(RUNNING)])
    if running_bt and running_bt[-1] == SIGNAL:  # the task's entry returns to 0xFFFFFFFF
        running_bt = running_bt[:-1]
    if running:
        check(spoor_functions(running) == running_bt and len(running_bt) >= 3,
              f"{label}: running: spoor {spoor_functions(running)} != gdb {running_bt}")
    for i, trace in zip(order, traces):
        thread = threads.get(tcbs[i])
        if not thread:
            continue
        mine = spoor_functions(thread)
        if trace and trace[-1] == SIGNAL:
            trace = trace[:-1]
        check(mine == trace and len(trace) >= 3 and f"{TASKS[i]}_main" in trace,
              f"{label}: {TASKS[i]}: spoor {mine} != gdb {trace}")

    if rtos == "freertos":
        gdb_handover(elf, machine, work, dump)
    count = capture_instructions(elf, machine, work)
    print(f"{label}: dump {total} bytes, {len(records)} memory records, capture "
          f"{count} instructions (UsageFault entry to reset)")
    check(count is not None and count < MAX_CAPTURE_INSTRUCTIONS,
          f"{label}: capture took {count} instructions")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        run_securefault(Path(tmp))
        run_branch(Path(tmp))
        for core, (_, _, _, _, rtoses) in CORES.items():
            run_static(core, Path(tmp))
            for rtos in rtoses:
                work = Path(tmp) / f"{rtos}-{core}"
                work.mkdir()
                run_one(rtos, core, work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
