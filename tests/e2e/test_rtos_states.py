"""Thread states, wait objects and thread roots on RTOS-shaped firmware that really switches.

tests/e2e/fw/rtos_ctx_fw.c is built with -DFW_STATES per RTOS (RTX5, ThreadX, FreeRTOS, Zephyr)
and core (Cortex-M0, M3, M4F, M33), as the other rtos_ctx_fw tests do. Its threads are left in
every state their kernel has, with the kernel's own state words and objects: blocked on a
semaphore (alpha), a message queue (beta, on FreeRTOS a queue from the heap named by the queue
registry), a mutex (gamma) and event flags (flagger), sleeping (sleeper), suspended (pauser),
terminated (ended), monitor running; each starts where its kernel starts it (z_thread_entry,
_tx_thread_shell_entry, a function returning to osThreadExit or prvTaskExitError). gdb-multiarch
stops it at fw_checkpoint and prints the firmware's own record of each thread (fw_expect[]: the
state, the wait kind, the object's address and name). Then:
  * `spoor crash --threads --json --gdb`: every thread's state, wait kind, object and its name
    equal the firmware's; the text report says "blocked on semaphore sem_ready" and so on;
    Zephyr's thread_state layout is the one of the version the ELF's banner carries (2.5);
  * every thread's backtrace equals gdb-multiarch's `bt` of the thread (through `spoor
    gdbserver --threads`, `thread apply all bt`) as far as spoor goes, and spoor goes no further
    than the thread's root: its last frame is z_thread_entry or _tx_thread_shell_entry (stop
    "thread root") or the thread's function returning to the task-exit hook (stop "task entry"),
    "root_reached" true;
  * gdb's thread names through spoor gdbserver carry the state ("blocked on mutex state_lock");
  * `spoor top --gdb` over a stream switching to every thread: each thread's console row has
    the firmware's state in the State column ("blocked sem sem_ready", "sleeping").
Zephyr's start-up (-DFW_BOOT_STOP): the firmware parks in fw_boot_checkpoint with the current
thread pointer at z_cstart's dummy thread, a TCB on the interrupt stack that holds stack bytes:
`crash --threads` and `gdbserver --threads` show it as on no thread list, with no name.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Qemu, run_gdb, symbol_addresses  # noqa: E402
from test_crash_threads import through_gdbserver, threads_through_gdbserver  # noqa: E402
from test_crash_threads_freertos_zephyr import CORES as FZ_CORES  # noqa: E402
from test_top_rtos_shapes import stream  # noqa: E402
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
CORES = {name: FZ_CORES[name] for name in ("m0", "m3", "m4f", "m33")}
# RTOS: (define, spoor's name, the thread root or None (the task-exit hook ends the walk))
RTOSES = {
    "rtx5": ("CTX_RTX5", "RTX5", None),
    "threadx": ("CTX_THREADX", "ThreadX", "_tx_thread_shell_entry"),
    "freertos": ("CTX_FREERTOS", "FreeRTOS", None),
    "zephyr": ("CTX_ZEPHYR", "Zephyr", "z_thread_entry"),
}
THREADS = ["alpha", "beta", "gamma", "monitor", "flagger", "sleeper", "pauser", "ended"]


def firmware_record(elf, port, work):
    """Runs to fw_checkpoint; the firmware's fw_expect[] per thread name."""
    commands = ["break fw_checkpoint", "continue"]
    for i in range(len(THREADS)):
        commands.append(f'printf "@@%s|%s|%s|%u|%s|%u\\n", task_names[{i}], fw_expect[{i}].state, '
                        f"fw_expect[{i}].wait, (unsigned)fw_expect[{i}].object, "
                        f"fw_expect[{i}].object_name, (unsigned)tcbs[{i}]")
    text = run_gdb(elf, port, commands)
    record = {}
    for line in text.splitlines():
        if line.startswith("@@"):
            name, state, wait, obj, obj_name, tcb = line[2:].split("|")
            record[name] = (state, wait, int(obj), obj_name, int(tcb))
    check(sorted(record) == sorted(THREADS), f"{elf.name}: gdb printed {sorted(record)}: "
          f"{text[-800:]}")
    return record


def crash_views(elf, port, label):
    """`spoor crash --threads` against the halted QEMU: (the JSON report or None, the text)."""
    target = ["-e", str(elf), "--gdb", f"127.0.0.1:{port}", "--threads"]
    result = subprocess.run([SPOOR, "crash", *target, "--json"], capture_output=True, text=True,
                            timeout=60)
    check(result.returncode == 0, f"{label}: spoor crash: {result.stderr}")
    text = subprocess.run([SPOOR, "crash", *target], capture_output=True, text=True,
                          timeout=60).stdout
    return (json.loads(result.stdout) if result.returncode == 0 else None), text


def check_thread(label, name, t, want, root):
    state, wait, obj, obj_name, _ = want
    check(t["state"] == state, f"{label}: {name}: state {t['state']} ({t.get('kernel_state')}) != "
          f"the firmware's {state}")
    if state == "blocked":
        w = t.get("wait") or {}
        check((w.get("kind"), w.get("object"), w.get("name")) == (wait, f"0x{obj:08x}", obj_name),
              f"{label}: {name}: waits on {w} != the firmware's {wait} 0x{obj:08x} {obj_name}")
    else:
        check(t.get("wait") is None, f"{label}: {name}: a wait object when {state}: {t.get('wait')}")
    frames = [f["function"] for f in t["backtrace"] if f["kind"] == "frame"]
    check(t.get("root_reached") is True, f"{label}: {name}: root not reached: {t['stop']} {frames}")
    if root:
        check(t["stop"] == "thread root" and frames[-1:] == [root],
              f"{label}: {name}: the walk does not end at {root}: {t['stop']} {frames}")
    else:
        check(t["stop"] == "task entry" and frames[-1:] == [f"{name}_main"],
              f"{label}: {name}: the walk does not end at {name}_main: {t['stop']} {frames}")


# spoor top's State column: the wait kind shortened (the firmware's names), Zephyr's "object"
# (a kind the kernel does not record) left out
SHORT_KINDS = {"semaphore": "sem", "mutex": "mutex", "message queue": "queue",
               "message queue (send)": "queue-send", "event flags": "flags",
               "thread flags": "thread-flags", "object": None}


def top_states(elf, port, record, work, label):
    """`spoor top --gdb` over a stream switching to every thread once: the console row of each
    thread carries the state the firmware records, as the State column shortens it (24 chars)."""
    itm = work / "all.itm"
    itm.write_bytes(stream([want[4] for want in record.values()]))
    result = subprocess.run([SPOOR, "top", "-e", str(elf), "--gdb", f"127.0.0.1:{port}",
                             "--input", str(itm), "-F", "1000000"], capture_output=True,
                            text=True, timeout=60)
    check(result.returncode == 0, f"{label}: spoor top: {result.stderr}")
    header = next((line for line in result.stdout.splitlines() if "Thread Name" in line), "")
    columns = [c.strip() for c in header.split("|")]
    check("State" in columns, f"{label}: spoor top has no State column: {header}")
    if "State" not in columns:
        return
    rows = {}
    for line in result.stdout.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == len(columns) and cells[2].startswith("0x"):
            rows[int(cells[2], 16)] = cells[columns.index("State")]
    for name, (state, wait, obj, obj_name, tcb) in record.items():
        want = state
        if state == "blocked":
            kind = SHORT_KINDS.get(wait, wait)
            want = " ".join(x for x in ("blocked", kind, obj_name or f"0x{obj:08x}") if x)[:24]
        check(rows.get(tcb) == want, f"{label}: {name}: spoor top's State {rows.get(tcb)!r} != "
              f"the firmware's {want!r}: {result.stdout[-1500:]}")


def run_one(rtos, core, work):
    flags, machine, flash, ram, _ = CORES[core]
    define, display, root = RTOSES[rtos]
    label = f"{rtos} {core}"
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram, work / f"states-{rtos}-{core}.elf",
                              [f"-D{define}", "-DFW_STATES"])
    qemu = Qemu(elf, machine, gdb=True).__enter__()
    try:
        record = firmware_record(elf, qemu.gdb_port, work)
        if sorted(record) != sorted(THREADS):
            return
        stop_parked(qemu.gdb_port)
        report, text = crash_views(elf, qemu.gdb_port, label)
        if report is None:
            return
        threads = {int(t["tcb"], 16): t for t in report["threads"]}
        check(report["rtos"] == display and len(threads) == len(THREADS),
              f"{label}: {report['rtos']} threads {sorted(t['name'] for t in report['threads'])}")
        if rtos == "zephyr":
            check("Zephyr 2.5" in (report.get("states_layout") or "") and "_THREAD_PRESTART" in
                  report["states_layout"], f"{label}: layout {report.get('states_layout')}")
        top_states(elf, qemu.gdb_port, record, work, label)
        served = threads_through_gdbserver(elf, qemu.gdb_port)
        names = through_gdbserver(elf, qemu.gdb_port, ["info threads"])
        for name in THREADS:
            want = record[name]
            t = threads.get(want[4])
            check(t is not None and t["name"] == name, f"{label}: {name} not listed: {t}")
            if not t:
                continue
            check_thread(label, name, t, want, root)
            if want[0] == "blocked":
                line = f"blocked on {want[1]} {want[3]}"
                check(re.search(rf"0x{want[4]:08x} {name}  {line} \(", text) is not None,
                      f"{label}: {name}: no '{line}' in the text report: {text[-2000:]}")
                check(f"{name} ({line}, prio" in names,
                      f"{label}: {name}: gdb's thread name through spoor gdbserver lacks "
                      f"'{line}': {names[-1500:]}")
            mine = [f["function"] for f in t["backtrace"] if f["kind"] == "frame"]
            gdb = [f for f in served.get(want[4], []) if f != "<signal handler called>"]
            print(f"{label}: {name}: {t['state']} ({t.get('kernel_state')}); spoor {mine}; "
                  f"gdb {gdb}")
            check(mine and gdb[:len(mine)] == mine,
                  f"{label}: {name}: spoor {mine} != gdb's bt {gdb} as far as spoor goes")
    finally:
        qemu.close()


def run_boot(core, work):
    """Zephyr before its first switch: the current thread is z_cstart's dummy TCB on the
    interrupt stack."""
    flags, machine, flash, ram, _ = CORES[core]
    label = f"zephyr boot {core}"
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram, work / f"boot-{core}.elf",
                              ["-DCTX_ZEPHYR", "-DFW_STATES", "-DFW_BOOT_STOP"])
    symbols = symbol_addresses(elf)
    qemu = Qemu(elf, machine, gdb=True).__enter__()
    try:
        text = run_gdb(elf, qemu.gdb_port, ["break fw_boot_checkpoint", "continue",
                                            'printf "@@%u\\n", (unsigned)_kernel.cpus[0].current'])
        match = re.search(r"@@(\d+)", text)
        check(match is not None, f"{label}: gdb: {text[-800:]}")
        if not match:
            return
        dummy = int(match.group(1))
        check(not any(dummy == symbols.get(f"{n}_tcb") for n in THREADS),
              f"{label}: the current thread 0x{dummy:08x} is a listed TCB")
        stop_parked(qemu.gdb_port)
        report, text = crash_views(elf, qemu.gdb_port, label)
        if report is None:
            return
        first = report["threads"][0]
        check(first["tcb"] == f"0x{dummy:08x}" and first["current"] and
              first["state"] == "unlisted" and first["name"] is None and first["prio"] is None,
              f"{label}: the dummy thread is read as a thread: {first}")
        check(f"* 0x{dummy:08x} (start-up or deleted: on no thread list)  unlisted" in text,
              f"{label}: text report: {text[-1500:]}")
        names = through_gdbserver(elf, qemu.gdb_port, ["info threads"])
        check(f"(start-up or deleted: on no thread list) (TCB 0x{dummy:08x})" in names,
              f"{label}: gdb's thread list through spoor gdbserver: {names[-1500:]}")
    finally:
        qemu.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for rtos in RTOSES:
            for core in CORES:
                work = Path(tmp) / f"{rtos}-{core}"
                work.mkdir()
                run_one(rtos, core, work)
        for core in ("m0", "m3"):
            work = Path(tmp) / f"boot-{core}"
            work.mkdir()
            run_boot(core, work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
