"""spoor crash --threads on RTX5- and ThreadX-shaped firmware that really switches, in QEMU.

tests/e2e/fw/rtos_ctx_fw.c is built here per RTOS (-DCTX_RTX5, -DCTX_THREADX) and per core:
the Cortex-M0 (microbit, ARMv6-M), M3 (mps2-an385), M4F (mps2-an386, hard float) and M33
(mps2-an505, hard float): every variant of the two ports' context switch. Its PendSV_Handler
saves and restores what the RTOS's port does; four tasks yield a few calls deep, one (beta) with
an active FP context on the FP cores. gdb-multiarch stops it at fw_checkpoint (the monitor task
running, the other three parked in task_yield), prints each task's name and the TCB members the
port writes (RTX5: sp, stack_frame; ThreadX: tx_thread_stack_ptr) and dumps RAM. Then:
  * `spoor crash --threads --json --gdb` against QEMU's gdbstub lists the four tasks, the
    running one first, with gdb's names;
  * for each parked task, the registers it will resume with are computed here from the RAM dump
    and the port's layout as docs/crash.md writes it down from the port sources (independently
    of spoor's RTOS layer), given to gdb-multiarch (`set $r4 = ...`, `bt`): spoor's backtrace
    must equal gdb's, both from `crash --threads --json` and through `spoor gdbserver
    --threads` (`thread apply all bt`), and the registers gdb sees for the thread through spoor
    gdbserver (`thread apply all info registers`: r0-r12, sp, lr, pc) must equal those computed;
  * on the FP cores beta's saved EXC_RETURN says FP extended frame (bit 4 clear) and alpha's
    basic frame: both paths of the layouts are taken.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Qemu, run_gdb, symbol_addresses  # noqa: E402
from test_crash_threads import (each_rtos_and_core, gdb_backtraces,  # noqa: E402
                                served_threads, spoor_functions)
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
CORES = {
    # name: (gcc flags, QEMU machine, code origin, RAM origin, ARMv6-M, FPU)
    "m0": (["-mcpu=cortex-m0"], "microbit", 0x0, 0x20000000, True, False),
    "m3": (["-mcpu=cortex-m3"], "mps2-an385", 0x0, 0x20000000, False, False),
    "m4f": (["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"], "mps2-an386", 0x0,
            0x20000000, False, True),
    "m33": (["-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"], "mps2-an505",
            0x10000000, 0x38000000, False, True),
}
# RTOS: (define, spoor's name for it, the TCB's saved SP, the byte with EXC_RETURN[7:0] or None,
#        the state of a parked task)
RTOSES = {
    "rtx5": ("CTX_RTX5", "RTX5", "sp", "stack_frame", "ready"),
    "threadx": ("CTX_THREADX", "ThreadX", "tx_thread_stack_ptr", None, "ready"),
}
TASKS = ["alpha", "beta", "gamma", "monitor"]
RUNNING = "monitor"
SIGNAL = "<signal handler called>"


def saved_registers(word, rtos, v6m, sp, stack_frame):
    """(registers, EXC_RETURN) a parked task resumes with, from the port's saved context at sp
    (docs/crash.md, "Saved contexts"), then the hardware frame the PendSV exception stacked."""
    if rtos == "rtx5":
        # irq_armv7m.S / irq_armv8mml.S: [s16-s31] r4-r11 at sp, EXC_RETURN 0xFFFFFF00 |
        # stack_frame; irq_armv6m.S: r4-r7, r8-r11 at sp, EXC_RETURN 0xFFFFFFFD
        exc_return = 0xFFFFFFFD if v6m else 0xFFFFFF00 | stack_frame
        at = sp + (0 if exc_return & 0x10 else 64)
        regs = {f"r{4 + i}": word(at + 4 * i) for i in range(8)}
        frame = at + 32
    else:
        # tx_thread_schedule.S: EXC_RETURN, [s16-s31], r4-r11; cortex_m0: EXC_RETURN, r8-r11,
        # r4-r7
        exc_return = word(sp)
        if v6m:
            regs = {f"r{8 + i}": word(sp + 4 + 4 * i) for i in range(4)}
            regs.update({f"r{4 + i}": word(sp + 20 + 4 * i) for i in range(4)})
            frame = sp + 36
        else:
            at = sp + 4 + (0 if exc_return & 0x10 else 64)
            regs = {f"r{4 + i}": word(at + 4 * i) for i in range(8)}
            frame = at + 32
    # the hardware frame (ARMv7-M ARM B1.5.6): r0-r3, r12, lr, pc, xpsr, then s0-s15, fpscr
    # and a reserved word in an extended frame; xPSR bit 9: a padding word above it
    r0, r1, r2, r3, r12, lr, pc, xpsr = (word(frame + 4 * i) for i in range(8))
    regs.update(r0=r0, r1=r1, r2=r2, r3=r3, r12=r12, lr=lr, pc=pc)
    size = 32 if exc_return & 0x10 else 104
    regs["sp"] = frame + size + (4 if xpsr & (1 << 9) else 0)
    return regs, exc_return


def gdb_reference(elf, machine, ram_origin, rtos, work):
    """Runs to fw_checkpoint; each task's name and saved-context members, RAM dumped; QEMU is
    left running (parked in fw_checkpoint)."""
    _, _, sp_member, frame_member, _ = RTOSES[rtos]
    name_expr = "name" if rtos == "rtx5" else "tx_thread_name"
    commands = ["break fw_checkpoint", "continue"]
    for task in TASKS:
        frame = f"{task}_tcb.{frame_member}" if frame_member else "0"
        commands.append(f'printf "@@{task} %s %u %u\\n", {task}_tcb.{name_expr}, '
                        f"(unsigned){task}_tcb.{sp_member}, (unsigned){frame}")
    commands.append(f"dump binary memory {work}/ram.bin {ram_origin:#x} &__stack_top")
    qemu = Qemu(elf, machine, gdb=True).__enter__()
    text = run_gdb(elf, qemu.gdb_port, commands)
    ref = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0].startswith("@@"):
            ref[parts[0][2:]] = (parts[1], int(parts[2]), int(parts[3]))
    check(set(ref) == set(TASKS), f"{elf.name}: gdb printed {sorted(ref)}: {text[-800:]}")
    return qemu, ref


def run_one(rtos, core, work):
    flags, machine, flash, ram_origin, v6m, fpu = CORES[core]
    define, spoor_name, _, _, parked_state = RTOSES[rtos]
    label = f"{rtos} {core}"
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram_origin,
                              work / f"rtos-ctx-{rtos}-{core}.elf", [f"-D{define}"])
    symbols = symbol_addresses(elf)
    tcbs = {task: symbols[f"{task}_tcb"] for task in TASKS}
    qemu, ref = gdb_reference(elf, machine, ram_origin, rtos, work)
    try:
        if set(ref) != set(TASKS):
            return
        stop_parked(qemu.gdb_port)
        result = subprocess.run([SPOOR, "crash", "-e", str(elf), "--gdb",
                                 f"127.0.0.1:{qemu.gdb_port}", "--threads", "--json"],
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, f"{label}: spoor crash: {result.stderr}")
        report = json.loads(result.stdout) if result.returncode == 0 else {"threads": []}
        threads = {t["tcb"]: t for t in report["threads"]}
        check(report.get("rtos") == spoor_name and len(threads) == len(TASKS),
              f"{label}: threads {report.get('rtos')} {list(threads)}")
        first = report["threads"][0] if report["threads"] else {}
        check(first.get("tcb") == f"0x{tcbs[RUNNING]:08x}" and first.get("current") and
              first.get("state") == "running", f"{label}: the running task is not first: {first}")
        served = served_threads(elf, qemu.gdb_port, len(TASKS))
        ram = (work / "ram.bin").read_bytes()

        def word(addr):
            return struct.unpack_from("<I", ram, addr - ram_origin)[0]

        saved, order, exc_returns = [], [], {}
        for task in TASKS:
            t = threads.get(f"0x{tcbs[task]:08x}")
            check(t is not None, f"{label}: {task} not listed")
            if not t:
                continue
            check(t["name"] == ref[task][0], f"{label}: {task}: name {t['name']} != gdb's "
                  f"{ref[task][0]}")
            if task == RUNNING:
                continue
            check(not t["current"] and t["state"] == parked_state,
                  f"{label}: {task}: {t['state']} current={t['current']}")
            regs, exc_returns[task] = saved_registers(word, rtos, v6m, ref[task][1], ref[task][2])
            got = served.get(tcbs[task], ([], {}))[1]
            check(got == regs, f"{label}: {task}: registers through spoor gdbserver "
                  f"{ {k: hex(v) for k, v in got.items()} } != the saved context's "
                  f"{ {k: hex(v) for k, v in regs.items()} }")
            saved.append(regs)
            order.append(task)
        if fpu:
            check(not exc_returns.get("beta", 0x10) & 0x10 and exc_returns.get("alpha", 0) & 0x10,
                  f"{label}: EXC_RETURN beta {exc_returns.get('beta', 0):#x} alpha "
                  f"{exc_returns.get('alpha', 0):#x}: the FP and basic frames are not both taken")
        traces = gdb_backtraces(elf, qemu.gdb_port, saved, label)
        for task, trace in zip(order, traces):
            thread = threads[f"0x{tcbs[task]:08x}"]
            mine = spoor_functions(thread)
            # the task's first frame returns to 0xFFFFFFFF (the initial LR): gdb shows it as a
            # last "<signal handler called>" row, spoor ends there with "end of stack"
            if trace and trace[-1] == SIGNAL:
                trace = trace[:-1]
                check(thread["stop"] == "end of stack", f"{label}: {task}: stop {thread['stop']}")
            print(f"{label}: {task} (EXC_RETURN {exc_returns[task]:#010x}): gdb {trace}")
            check(mine == trace, f"{label}: {task}: spoor {mine} != gdb {trace}")
            through = list(served.get(tcbs[task], ([], {}))[0])
            if through and through[-1:] == [SIGNAL]:
                through = through[:-1]
            check(through == trace, f"{label}: {task}: thread apply all bt through spoor "
                  f"gdbserver {through} != gdb {trace}")
            check(len(trace) >= 3 and trace[0] == "task_yield" and f"{task}_main" in trace,
                  f"{label}: {task}: not parked in task_yield under {task}_main: {trace}")
    finally:
        qemu.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for rtos, core, work in each_rtos_and_core(RTOSES, CORES, tmp):
            run_one(rtos, core, work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
