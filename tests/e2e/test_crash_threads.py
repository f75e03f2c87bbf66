"""spoor crash --threads on the example scheduler (examples/sched) in QEMU, M3 and M4F.

The firmware runs to sched_checkpoint (every task has run and was switched away from in
sched_sleep) and parks there. `spoor crash --threads --json --gdb` against QEMU's gdbstub must
list the four tasks (the current one first, "running"), with names and priorities as gdb prints
them, and for each task that is not running a backtrace whose functions equal gdb-multiarch's
`bt` when gdb is given the registers the task saved. Those registers are computed here from a
RAM dump, from the scheduler's own context layout (examples/sched/sched.c: PendSV pushes r4-r11
and EXC_RETURN below the hardware frame r0-r3, r12, lr, pc, xpsr; xPSR bit 9 marks a padding
word), independently of spoor's RTOS layer.
"""

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import example, parse_backtraces, run_gdb, symbol_addresses  # noqa: E402
from top_testlib import check, run_cores  # noqa: E402
from test_top_sched import TASKS, gdb_reference, stop_parked  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
RAM = 0x20000000
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc"]  # what gdb shows per thread


def saved_registers(ram, tcb):
    """A task's registers from its TCB (sp is the first member) and its saved context."""
    def word(addr):
        return struct.unpack_from("<I", ram, addr - RAM)[0]
    sp = word(tcb)
    regs = {f"r{4 + i}": word(sp + 4 * i) for i in range(8)}
    exc_return = word(sp + 32)
    frame = sp + 36 + (0 if exc_return & 0x10 else 64)
    r0, r1, r2, r3, r12, lr, pc, xpsr = (word(frame + 4 * i) for i in range(8))
    regs.update(r0=r0, r1=r1, r2=r2, r3=r3, r12=r12, lr=lr, pc=pc)
    regs["sp"] = frame + 32 + (4 if xpsr & (1 << 9) else 0)
    return regs


def through_gdbserver(elf, qemu_port, commands):
    """What gdb-multiarch prints for commands through spoor gdbserver --threads (itself a client
    of QEMU's gdbstub); "" when the server did not start."""
    server = subprocess.Popen([SPOOR, "gdbserver", "-e", str(elf), "--port", "0", "--threads",
                               "--gdb", f"127.0.0.1:{qemu_port}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        match = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not match:
            server.kill()
            check(False, f"spoor gdbserver: {line} {server.stderr.read()}")
            return ""
        return run_gdb(elf, int(match.group(1)), commands + ["detach"])
    finally:
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def threads_through_gdbserver(elf, qemu_port):
    """`info threads` and `thread apply all bt` through spoor gdbserver --threads: the backtrace
    of each thread by TCB."""
    text = through_gdbserver(elf, qemu_port, ["info threads", "thread apply all bt"])
    check(text.count("TCB 0x") >= 8, f"info threads shows no TCBs: {text[-1500:]}")
    result, tcb = {}, None
    for chunk in re.split(r"\n(?=Thread \d+ )", text):
        match = re.match(r"Thread \d+ .*?TCB (0x[0-9a-f]+)", chunk)
        if match:
            traces = parse_backtraces(chunk)
            result[int(match.group(1), 16)] = traces[0] if traces else []
    return result


def served_threads(elf, qemu_port, ntasks):
    """`thread apply all bt` and `thread apply all info registers` by gdb-multiarch through spoor
    gdbserver --threads, ntasks threads: {TCB: (backtrace, {register: value})}."""
    text = through_gdbserver(elf, qemu_port, ["info threads", "thread apply all bt",
                                              "thread apply all info registers"])
    check(text.count("TCB 0x") >= 3 * ntasks, f"no TCBs through gdbserver: {text[-1500:]}")
    result = {}
    for chunk in re.split(r"\n(?=Thread \d+ )", text):
        match = re.match(r"Thread \d+ .*?TCB (0x[0-9a-f]+)", chunk)
        if not match:
            continue
        trace, regs = result.setdefault(int(match.group(1), 16), ([], {}))
        traces = parse_backtraces(chunk)
        trace += traces[0] if traces else []
        for line in chunk.splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[0] in REGS and fields[1].startswith("0x"):
                regs[fields[0]] = int(fields[1], 16)
    return result


def gdb_backtraces(elf, qemu_port, saved, label):
    """gdb-multiarch's `bt` for each register set in saved ({register: value}), in order; QEMU
    is killed at the end."""
    commands = []
    for regs in saved:
        commands += [f"set ${reg} = {value:#x}" for reg, value in regs.items()]
        commands += ["set $xpsr = 0x01000000", "bt"]
    gdb_text = run_gdb(elf, qemu_port, commands + ["kill"])
    traces = parse_backtraces(gdb_text)
    check(len(traces) == len(saved), f"{label}: gdb gave {len(traces)} backtraces: "
          f"{gdb_text[-1500:]}")
    return traces


def each_rtos_and_core(rtoses, cores, tmp):
    """(rtos, core, work) for every RTOS and core, work a fresh directory below tmp."""
    for rtos in rtoses:
        for core in cores:
            work = Path(tmp) / f"{rtos}-{core}"
            work.mkdir()
            yield rtos, core, work


def spoor_functions(thread):
    return [f["function"] if f["kind"] == "frame" else "<signal handler called>"
            for f in thread["backtrace"]]


def run_core(core, work):
    elf, machine = example("sched", core)
    symbols = symbol_addresses(elf)
    tcbs = {name: symbols[f"task_{name}"] for name in TASKS}
    qemu, ref = gdb_reference(elf, machine, work)
    try:
        stop_parked(qemu.gdb_port)
        result = subprocess.run([SPOOR, "crash", "-e", str(elf), "--gdb",
                                 f"127.0.0.1:{qemu.gdb_port}", "--threads", "--json"],
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, f"{core}: spoor crash: {result.stderr}")
        report = json.loads(result.stdout)
        text = subprocess.run([SPOOR, "crash", "-e", str(elf), "--gdb",
                               f"127.0.0.1:{qemu.gdb_port}", "--threads"],
                              capture_output=True, text=True, timeout=60).stdout
        check("threads (sched, 4):" in text, f"{core}: text report: {text[-600:]}")
        threads = {t["tcb"]: t for t in report["threads"]}
        check(report["rtos"] == "sched" and len(threads) == 4,
              f"{core}: threads {report.get('rtos')} {list(threads)}")
        check(report["threads"][0]["current"] and report["threads"][0]["state"] == "running",
              f"{core}: the current thread is not first: {report['threads'][0]}")
        gdbserver_bts = threads_through_gdbserver(elf, qemu.gdb_port)
        ram = (work / "ram.bin").read_bytes()
        current = struct.unpack_from("<I", ram, symbols["sched_current"] - RAM)[0]
        saved, order = [], []
        for name in TASKS:
            t = threads.get(f"0x{tcbs[name]:08x}")
            check(t is not None, f"{core}: {name} not listed")
            if not t:
                continue
            check((t["name"], t["prio"]) == ref[name][:2], f"{core}: {name}: {t['name']} "
                  f"{t['prio']} != gdb's {ref[name][:2]}")
            check(t["current"] == (tcbs[name] == current), f"{core}: {name} current flag")
            if t["current"]:
                continue
            saved.append(saved_registers(ram, tcbs[name]))
            order.append(name)
        traces = gdb_backtraces(elf, qemu.gdb_port, saved, core)
        for name, trace in zip(order, traces):
            thread = threads[f"0x{tcbs[name]:08x}"]
            mine = spoor_functions(thread)
            # the task's first frame returns to 0xFFFFFFFF (sched.c's initial LR): gdb shows it
            # as a last "<signal handler called>" row, spoor ends there with "end of stack" (as
            # in test_unwind_live.py)
            if trace and trace[-1] == "<signal handler called>":
                trace = trace[:-1]
                check(thread["stop"] == "end of stack", f"{core}: {name}: stop {thread['stop']}")
            check(mine == trace, f"{core}: {name}: spoor {mine} != gdb {trace}")
            served = gdbserver_bts.get(tcbs[name])
            check(served is not None and served == trace + (["<signal handler called>"]
                                                              if served and served[-1:] ==
                                                              ["<signal handler called>"] else []),
                  f"{core}: {name}: thread apply all bt through spoor gdbserver {served} != "
                  f"gdb {trace}")
            check(len(trace) >= 2 and f"{name}_main" in trace,
                  f"{core}: {name}: no {name}_main in {trace}")
    finally:
        qemu.close()


def main():
    return run_cores(run_core)


if __name__ == "__main__":
    sys.exit(main())
