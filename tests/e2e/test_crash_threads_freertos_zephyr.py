"""spoor crash --threads on FreeRTOS- and Zephyr-shaped firmware that really switches, in QEMU.

tests/e2e/fw/rtos_ctx_fw.c is built here per RTOS (-DCTX_FREERTOS, -DCTX_ZEPHYR) and per core:
the Cortex-M0 (microbit, ARMv6-M: FreeRTOS's ARM_CM0 port, Zephyr's ARMv6-M path), M3
(mps2-an385: ARM_CM3), M4F (mps2-an386, hard float: ARM_CM4F, Zephyr with CONFIG_FPU_SHARING;
once more with -mfloat-abi=softfp, still ARM_CM4F) and M33 (mps2-an505, hard float:
ARM_CM33_NTZ, Zephyr's ARMv8-M mainline path). Its PendSV handler saves and restores what the
port does; four tasks yield a few calls deep (with distinct r4-r11, a frame pointer, a
recursion), beta with an active FP context on the FP cores. gdb-multiarch stops it at
fw_checkpoint (monitor running, the other three parked in task_yield), prints the TCB members the
port writes (FreeRTOS: pxTopOfStack; Zephyr: callee_saved, arch.mode_exc_return when the build
has it) and dumps RAM. Then:
  * `spoor crash --threads --json --gdb` against QEMU's gdbstub lists the four tasks, the
    running one first, with their names;
  * for each parked task the registers it will resume with are computed here from the RAM dump
    and the port's layout as docs/crash.md writes it down from the port sources (independently
    of spoor's RTOS layer), given to gdb-multiarch (`set $r4 = ...`, `bt`): spoor's backtrace
    must equal gdb's, both from `crash --threads --json` and through `spoor gdbserver
    --threads` (`thread apply all bt`), and the registers gdb sees for the thread through spoor
    gdbserver (r0-r12, sp, lr, pc) must equal those computed;
  * on the FP cores beta's saved EXC_RETURN says FP extended frame (bit 4 clear) and the
    others' basic frame: both paths of the layouts are taken;
  * built with the ARM_CM33 TrustZone port's words (-DFREERTOS_TRUSTZONE) the M33 firmware still
    runs in the secure state, where the real port would have kept the tasks' registers on the
    secure stack: spoor must say so for each parked task, with no backtrace.
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
from harness import Qemu, run_gdb, symbol_addresses  # noqa: E402
from test_crash_threads import (REGS, each_rtos_and_core, gdb_backtraces,  # noqa: E402
                                served_threads, spoor_functions)
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
CORES = {
    # name: (gcc flags, QEMU machine, code origin, RAM origin, FPU)
    "m0": (["-mcpu=cortex-m0"], "microbit", 0x0, 0x20000000, False),
    "m3": (["-mcpu=cortex-m3"], "mps2-an385", 0x0, 0x20000000, False),
    "m4f": (["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"], "mps2-an386", 0x0,
            0x20000000, True),
    # the FP core with the soft-float calling convention: still FreeRTOS's ARM_CM4F port (the
    # float ABI does not tell the port)
    "m4f-softfp": (["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=softfp"], "mps2-an386",
                   0x0, 0x20000000, True),
    "m33": (["-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"], "mps2-an505",
            0x10000000, 0x38000000, True),
}
# RTOS: (define, spoor's name for it); each task's TCB is NAME_tcb
RTOSES = {
    "freertos": ("CTX_FREERTOS", "FreeRTOS"),
    "zephyr": ("CTX_ZEPHYR", "Zephyr"),
}
TASKS = ["alpha", "beta", "gamma", "monitor"]
RUNNING = "monitor"
SIGNAL = "<signal handler called>"
BASIC_FRAME = 0xFFFFFFFD  # thread mode, PSP, no FP state (and, on the M33, secure)


def crash_threads(elf, qemu_port, label):
    """`spoor crash --threads --json --gdb` against QEMU's gdbstub: the report, or None."""
    result = subprocess.run([SPOOR, "crash", "-e", str(elf), "--gdb", f"127.0.0.1:{qemu_port}",
                             "--threads", "--json"], capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"{label}: spoor crash: {result.stderr}")
    return json.loads(result.stdout) if result.returncode == 0 else None


def saved_registers(word, rtos, core, saved):
    """The registers a parked task resumes with, from the port's layout (docs/crash.md):
    FreeRTOS, at pxTopOfStack: ARM_CM0 and ARM_CM3 r4-r11; ARM_CM4F r4-r11, EXC_RETURN;
    ARM_CM33_NTZ PSPLIM, EXC_RETURN, r4-r11; then s16-s31 when EXC_RETURN bit 4 is 0, then the
    hardware frame. Zephyr: r4-r11 in callee_saved v1-v8, the hardware frame at callee_saved.psp,
    EXC_RETURN 0xFFFFFF00 | arch.mode_exc_return (0xFFFFFFFD without it). The hardware frame:
    r0-r3, r12, lr, pc, xPSR, then s0-s15, FPSCR and a reserved word when EXC_RETURN bit 4 is 0,
    then the padding word when xPSR bit 9 is set. Returns (registers, EXC_RETURN)."""
    if rtos == "freertos":
        at = saved["pxTopOfStack"]
        exc_return = BASIC_FRAME
        if core == "m33":
            exc_return = word(at + 4)
            at += 8
        regs = {f"r{4 + i}": word(at + 4 * i) for i in range(8)}
        at += 32
        if core.startswith("m4f"):
            exc_return = word(at)
            at += 4
        if not exc_return & 0x10:
            at += 64  # s16-s31
        frame = at
    else:
        regs = {f"r{4 + i}": saved[f"v{1 + i}"] for i in range(8)}
        frame = saved["psp"]
        exc_return = (0xFFFFFF00 | saved["mode_exc_return"] if "mode_exc_return" in saved
                      else BASIC_FRAME)
    r0, r1, r2, r3, r12, lr, pc, xpsr = (word(frame + 4 * i) for i in range(8))
    regs.update(r0=r0, r1=r1, r2=r2, r3=r3, r12=r12, lr=lr, pc=pc)
    size = 0x20 if exc_return & 0x10 else 0x68
    regs["sp"] = frame + size + (4 if xpsr & (1 << 9) else 0)
    return regs, exc_return


def gdb_reference(elf, machine, ram_origin, rtos, core, work, symbols):
    """Runs to fw_checkpoint; prints what each task's port saved in its TCB and dumps RAM.
    Leaves QEMU running parked (the running task spins)."""
    members = (["pxTopOfStack"] if rtos == "freertos" else
               [f"callee_saved.v{i}" for i in range(1, 9)] + ["callee_saved.psp"] +
               (["arch.mode_exc_return"] if CORES[core][4] else []))
    commands = ["break fw_checkpoint", "continue"]
    for name in TASKS:
        tcb = f"{name}_tcb"
        commands += [f'printf "@@{name} {m.split(".")[-1]} %u\\n", {tcb}.{m}' for m in members]
        commands += [f'printf "@@{name} name %s\\n", {tcb}.'
                     f'{"pcTaskName" if rtos == "freertos" else "name"}']
    end = symbols["__stack_top"]
    commands += [f"dump binary memory {work}/ram.bin {ram_origin:#x} {end:#x}"]
    qemu = Qemu(elf, machine, gdb=True).__enter__()
    text = run_gdb(elf, qemu.gdb_port, commands)
    saved = {name: {} for name in TASKS}
    for name, member, value in re.findall(r"^@@(\w+) (\w+) (\S+)$", text, re.M):
        saved[name][member] = value if member == "name" else int(value)
    for name in TASKS:
        check("name" in saved[name], f"{rtos} {core}: gdb printed nothing for {name}: "
              f"{text[-1500:]}")
    return qemu, saved


def run_one(rtos, core, work):
    flags, machine, flash, ram_origin, fpu = CORES[core]
    define, display = RTOSES[rtos]
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram_origin,
                              work / f"{rtos}-{core}.elf", extra=[f"-D{define}"])
    symbols = symbol_addresses(elf)
    # the ELF says which port (an M4F build of FreeRTOS has the CM4F port's vPortEnableVFP)
    tcbs = {name: symbols[f"{name}_tcb"] for name in TASKS}
    label = f"{rtos} {core}"
    qemu, saved = gdb_reference(elf, machine, ram_origin, rtos, core, work, symbols)
    try:
        stop_parked(qemu.gdb_port)
        ram = (work / "ram.bin").read_bytes()

        def word(addr):
            return struct.unpack_from("<I", ram, addr - ram_origin)[0]

        report = crash_threads(elf, qemu.gdb_port, label)
        if not report:
            return
        threads = {int(t["tcb"], 16): t for t in report["threads"]}
        check(report["rtos"] == display and set(threads) == set(tcbs.values()),
              f"{label}: threads {report.get('rtos')} {[hex(t) for t in threads]}")
        check(report["threads"][0]["name"] == RUNNING and report["threads"][0]["current"],
              f"{label}: the running task is not first: {report['threads'][0]}")
        served = served_threads(elf, qemu.gdb_port, len(TASKS))
        order, computed = [], {}
        for name in TASKS:
            t = threads.get(tcbs[name])
            check(t is not None and t["name"] == saved[name].get("name") == name,
                  f"{label}: {name}: {t and t['name']} (gdb: {saved[name].get('name')})")
            if not t or name == RUNNING:
                continue
            regs, exc_return = saved_registers(word, rtos, core, saved[name])
            if fpu:
                # beta computes in floating point before its yield: the extended frame
                check(bool(exc_return & 0x10) == (name != "beta"),
                      f"{label}: {name}: saved EXC_RETURN {exc_return:#x}")
            computed[name] = regs
            order.append(name)
        traces = gdb_backtraces(elf, qemu.gdb_port, [computed[name] for name in order], label)
        for name, trace in zip(order, traces):
            thread = threads[tcbs[name]]
            mine = spoor_functions(thread)
            # the task's first frame returns to 0xFFFFFFFF (the initial LR): gdb shows it as a
            # last "<signal handler called>" row, spoor ends there with "end of stack"
            if trace and trace[-1] == SIGNAL:
                trace = trace[:-1]
                check(thread["stop"] == "end of stack", f"{label}: {name}: stop {thread['stop']}")
            check(mine == trace, f"{label}: {name}: spoor {mine} != gdb {trace}")
            check(len(trace) >= 3 and trace[0] == "task_yield" and f"{name}_main" in trace,
                  f"{label}: {name}: not parked in task_yield under {name}_main: {trace}")
            bt, regs = served.get(tcbs[name], ([], {}))
            if bt[-1:] == [SIGNAL]:
                bt = bt[:-1]
            check(bt == trace, f"{label}: {name}: thread apply all bt through spoor gdbserver "
                  f"{bt} != gdb {trace}")
            want = {reg: value for reg, value in computed[name].items() if reg in REGS}
            got = {reg: regs.get(reg) for reg in want}
            check(got == want, f"{label}: {name}: registers through spoor gdbserver "
                  f"{ {r: hex(v) if v is not None else v for r, v in got.items()} } != "
                  f"{ {r: hex(v) for r, v in want.items()} }")
    finally:
        qemu.close()


def run_trustzone(work):
    """The M33 firmware with the TrustZone port's words (xSecureContext first) runs in the
    secure state: every saved EXC_RETURN has bit 6 set, where the real port keeps a task's
    registers on the secure stack. spoor must tell the port by xSecureContext and say so for each
    parked task, with no backtrace (read as ARM_CM33_NTZ, the words would give a wrong one)."""
    flags, machine, flash, ram_origin, _ = CORES["m33"]
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram_origin, work / "tz.elf",
                              extra=["-DCTX_FREERTOS", "-DFREERTOS_TRUSTZONE"])
    with Qemu(elf, machine, gdb=True) as qemu:
        run_gdb(elf, qemu.gdb_port, ["break fw_checkpoint", "continue"])
        stop_parked(qemu.gdb_port)
        report = crash_threads(elf, qemu.gdb_port, "trustzone")
    if not report:
        return
    threads = {t["name"]: t for t in report["threads"]}
    check(sorted(threads) == sorted(TASKS), f"trustzone: threads {sorted(threads)}")
    for name in TASKS:
        t = threads.get(name, {})
        if name == RUNNING:
            check(t.get("current") and not t.get("error"), f"trustzone: {name}: {t}")
        else:
            check(not t.get("backtrace") and "secure state" in (t.get("error") or ""),
                  f"trustzone: {name}: no secure-state error: {t}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for rtos, core, work in each_rtos_and_core(RTOSES, CORES, tmp):
            run_one(rtos, core, work)
        run_trustzone(Path(tmp))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
