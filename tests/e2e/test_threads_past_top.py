"""Backtraces that go past a thread's stack top, or end before the thread's root.

tests/e2e/fw/rtos_ctx_fw.c is built with -DFW_PAST_TOP (and -DFW_STATES) per RTOS (RTX5, ThreadX,
FreeRTOS, Zephyr) and core (Cortex-M0, M3, M4F, M33). Two of its threads never run and have a
saved context the firmware laid out word by word under a chain of frames (chain_leaf, chain_mid,
chain_outer, chain_above: each pushes {r4, lr}, its CFI and EHABI entries say so):
  * sleeper: chain_leaf, chain_mid, then chain_outer whose SP is the stack's top; chain_outer's
    return address lies above the top (in the next stack's red zone) and leads to a frame of
    chain_above there, whose return address is 0xFFFFFFFF. gdb-multiarch's `bt` of the thread
    (through `spoor gdbserver --threads`) goes there: an unwinder walks past the top;
  * pauser: chain_leaf, then chain_mid whose return address is 0, half way down its stack: the
    walk ends before the kernel's thread root (z_thread_entry, _tx_thread_shell_entry, or the
    thread's function returning to osThreadExit / prvTaskExitError).
The firmware records what it laid out (fw_chain[]: the stack's top, each frame's PC and SP), read
through gdb and checked against the ELF's symbols (nm). `spoor crash --threads --json --gdb` must
give sleeper exactly the frames whose SP is not above the top (chain_leaf, chain_mid,
chain_outer), stop "stack top", "root_reached" false, and the text line "(stopped: stack top;
the thread's root ... not reached)"; pauser both frames, stop "end of stack", "root_reached"
false, "(stopped: end of stack; the thread's root ... not reached)". Every other thread still
ends at its root, in the state the firmware gave it (test_rtos_states.check_thread).
"""

import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Qemu, run_gdb, symbol_addresses  # noqa: E402
from test_crash_threads import threads_through_gdbserver  # noqa: E402
from test_rtos_states import (CORES, RTOSES, THREADS, check_thread, crash_views,  # noqa: E402
                              firmware_record)
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
CHAINS = {"sleeper": 0, "pauser": 1}  # thread: its index in fw_chain[]
# chain function: the offset of its PC in the chain (chain_leaf waits after its 2-byte push;
# the others return after their 4-byte bl)
PC_OFFSETS = {"chain_leaf": 2, "chain_mid": 6, "chain_outer": 6, "chain_above": 6}


def chain_record(elf, port):
    """What the firmware laid out: {thread: (top, [(function, pc, sp), ...] innermost first)},
    the function named from the ELF's symbols."""
    commands = []
    for c in CHAINS.values():
        commands.append(f'printf "@@%s|%u|%u\\n", fw_chain[{c}].thread, fw_chain[{c}].top, '
                        f"fw_chain[{c}].nframes")
        for k in range(4):
            commands.append(f'printf "@@{c}|%u|%u\\n", fw_chain[{c}].frame[{k}].pc, '
                            f"fw_chain[{c}].frame[{k}].sp")
    text = run_gdb(elf, port, commands)
    by_pc = {addr + PC_OFFSETS[name]: name
             for name, addr in symbol_addresses(elf).items() if name in PC_OFFSETS}
    record, order = {}, {v: k for k, v in CHAINS.items()}
    for line in text.splitlines():
        if not line.startswith("@@"):
            continue
        fields = line[2:].split("|")
        if fields[0] in CHAINS:
            record[fields[0]] = (int(fields[1]), [], int(fields[2]))
        elif order.get(int(fields[0])) in record:
            top, frames, n = record[order[int(fields[0])]]
            if len(frames) < n:
                pc, sp = int(fields[1]), int(fields[2])
                frames.append((by_pc.get(pc), pc, sp))
    check(sorted(record) == sorted(CHAINS), f"{elf.name}: gdb printed {sorted(record)}: "
          f"{text[-800:]}")
    for name, (top, frames, _) in record.items():
        check(frames and all(f[0] for f in frames),
              f"{elf.name}: {name}: a laid-out PC is no chain function + its offset (nm): {frames}")
    return {name: (top, frames) for name, (top, frames, _) in record.items()}


def stop_line(text, tcb, name):
    """The "(stopped: ...)" line of the thread in the text report."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if f"0x{tcb:08x} {name}  " in line), None)
    if start is None:
        return None
    return next((line.strip() for line in lines[start + 1:] if line.startswith("    (stopped:")),
                None)


def check_chain(label, name, t, text, tcb, laid_out, root):
    """spoor's backtrace of a laid-out thread: the firmware's frames up to its stack's top."""
    top, frames = laid_out
    kept = [(f, pc) for f, pc, sp in frames if sp <= top]
    above = [f for f, _, sp in frames if sp > top]
    past = name == "sleeper"
    check(bool(above) == past, f"{label}: {name}: the firmware laid out {frames} (top 0x{top:08x})")
    mine = [(f["function"], int(f["pc"], 16)) for f in t["backtrace"] if f["kind"] == "frame"]
    check(mine == kept, f"{label}: {name}: spoor's frames {mine} != the firmware's frames below "
          f"its stack top 0x{top:08x} {kept} (above it: {above})")
    stop = "stack top" if past else "end of stack"
    check(t["stop"] == stop and t.get("root_reached") is False,
          f"{label}: {name}: stop {t['stop']!r}, root_reached {t.get('root_reached')!r}; want "
          f"{stop!r}, false")
    want = f"(stopped: {stop}; the thread's root{' ' + root if root else ''} not reached)"
    got = stop_line(text, tcb, name)
    check(got == want, f"{label}: {name}: text {got!r} != {want!r}: {text[-2500:]}")


def run_one(rtos, core, work, with_gdb):
    flags, machine, flash, ram, _ = CORES[core]
    define, display, root = RTOSES[rtos]
    label = f"{rtos} {core}"
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram, work / f"past-{rtos}-{core}.elf",
                              [f"-D{define}", "-DFW_STATES", "-DFW_PAST_TOP"])
    qemu = Qemu(elf, machine, gdb=True).__enter__()
    try:
        record = firmware_record(elf, qemu.gdb_port, work)
        chains = chain_record(elf, qemu.gdb_port)
        if sorted(record) != sorted(THREADS) or sorted(chains) != sorted(CHAINS):
            return
        stop_parked(qemu.gdb_port)
        report, text = crash_views(elf, qemu.gdb_port, label)
        if report is None:
            return
        threads = {int(t["tcb"], 16): t for t in report["threads"]}
        check(report["rtos"] == display, f"{label}: rtos {report['rtos']}")
        for name in THREADS:
            want = record[name]
            t = threads.get(want[4])
            check(t is not None and t["name"] == name, f"{label}: {name} not listed: {t}")
            if not t:
                continue
            if name not in CHAINS:
                check_thread(label, name, t, want, root)
                continue
            check(t["state"] == want[0], f"{label}: {name}: state {t['state']} != {want[0]}")
            check_chain(label, name, t, text, want[4], chains[name], root)
            top, frames = chains[name]
            laid = ", ".join(f"{f} sp 0x{sp:08x}" for f, _, sp in frames)
            print(f"{label}: {name}: spoor {[f['function'] for f in t['backtrace']]} "
                  f"({t['stop']}); laid out: {laid}; stack top 0x{top:08x}")
        if not with_gdb:
            return
        # gdb's own unwinder, from spoor's saved registers of each thread: the layout leads it
        # past sleeper's stack top, and pauser's walk ends where the firmware ended it
        served = threads_through_gdbserver(elf, qemu.gdb_port)
        for name, (_, frames) in chains.items():
            gdb = served.get(record[name][4], [])
            laid = [f for f, _, _ in frames]
            check(gdb[:len(laid)] == laid and (root or f"{name}_main") not in gdb,
                  f"{label}: {name}: gdb's bt {gdb} != the laid-out {laid}")
    finally:
        qemu.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for rtos in RTOSES:
            for core in CORES:
                work = Path(tmp) / f"{rtos}-{core}"
                work.mkdir()
                run_one(rtos, core, work, with_gdb=core == "m3")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
