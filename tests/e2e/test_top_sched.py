"""spoor top on the example scheduler (examples/sched) in QEMU, M3 and M4F.

QEMU has no ITM, so the trace is written here, from a known schedule, by an ITM encoder of this
test's own (from the ARMv7-M ARM, appendix D4), with the real TCB addresses of the firmware (from
arm-none-eabi-nm). The TCBs themselves are real: the firmware runs in QEMU to sched_checkpoint
(every task has run), where gdb-multiarch prints each task's name, priority and entry function
(the reference) and dumps RAM; then the firmware parks with its tasks frozen.

  * offline: spoor top --mem RAM --input STREAM: names, priorities and entry functions equal
    gdb's; every per-thread time, CPU %, switch count and every exception statistic of each
    interval, as JSON (-j FILE), equals the schedule's; the ftrace file passes a strict parser
    of the ftrace text format written from the kernel's documentation
    (Documentation/trace/ftrace.rst "Output format"; the sched_switch and irq_handler_entry/exit
    formats of include/trace/events/sched.h and irq.h); the Chrome file is valid trace-event
    JSON whose slices add up to the schedule;
  * live: spoor top --gdb against QEMU's gdbstub (the parked target): the same names,
    priorities and functions, read with one GDB round trip per new thread (plus one for the
    idle-task pointer at start and, per interval, the priority re-read: one page), counted by
    --stats.
"""

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Qemu, example, require_tool, run_gdb, symbol_addresses  # noqa: E402
from top_testlib import check, run_cores  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
HZ = 25_000_000
INTERVAL_MS = 1
L = HZ // 1000 * INTERVAL_MS  # 25000 cycles per interval
TASKS = ["sensor", "control", "logger", "idle"]

# ---------------------------------------------------------------- the ITM encoder (ARMv7-M D4)


class Encoder:
    """Each event: a source packet, then a local timestamp (format 1: header 0b11TT0000, TC 0,
    then 7-bit groups, least significant first, bit 7 = continuation) with the cycles since the
    previous timestamp: a local timestamp dates the packets before it."""

    def __init__(self):
        self.out = bytearray(b"\x00" * 5 + b"\x80")  # synchronization packet
        self.now = 0

    def at(self, time):
        delta = time - self.now
        assert delta >= 0
        self.out.append(0xC0)
        while True:
            group, delta = delta & 0x7F, delta >> 7
            self.out.append(group | 0x80 if delta else group)
            if not delta:
                break
        self.now = time

    def switch(self, time, tcb, comparator=1):
        # data trace data value: discriminator 16 + 2*CMPN + W(1), hardware source bit, SS=0b11
        self.out.append((16 + 2 * comparator + 1) << 3 | 0x4 | 0x3)
        self.out += tcb.to_bytes(4, "little")
        self.at(time)

    def exception(self, time, number, fn):  # fn: 1 enter, 2 exit, 3 return
        self.out += bytes([0x0E, number & 0xFF, (number >> 8 & 1) | fn << 4])
        self.at(time)

    def end(self, time):
        self.out += b"\x01\x00"  # instrumentation packet, port 0, 1 byte
        self.at(time)


ENTER, EXIT, RETURN = 1, 2, 3


def schedule(tcbs):
    """The stream, and the expected numbers per interval: (thread cycles, switches) by name and
    exception statistics by number."""
    enc = Encoder()
    s, c, lg, i = (tcbs[n] for n in TASKS)
    enc.switch(0, s)
    enc.switch(5000, c)
    enc.switch(12000, lg)
    enc.switch(20000, i)
    enc.exception(24000, 15, ENTER)
    enc.exception(24300, 15, EXIT)
    enc.exception(24310, 0, RETURN)
    enc.exception(26000, 19, ENTER)  # IRQ 3
    enc.exception(26100, 15, ENTER)  # SysTick preempts it
    enc.exception(26200, 15, EXIT)
    enc.exception(26210, 19, RETURN)
    enc.exception(26500, 19, EXIT)
    enc.exception(26510, 0, RETURN)
    enc.switch(30000, s)
    enc.switch(40000, i)
    enc.end(50000)
    intervals = [
        {"threads": {"sensor": (5000, 1), "control": (7000, 1), "logger": (8000, 1),
                     "idle": (5000, 1)},
         "cpu": 80.0,
         # num: count maxd total min max maxwall
         "exceptions": {15: (1, 1, 300, 300, 300, 300)}},
        {"threads": {"sensor": (10000, 1), "control": (0, 0), "logger": (0, 0),
                     "idle": (15000, 1)},
         "cpu": 40.0,
         # 19: own 100 before SysTick, 300 after its exit (26200-26500); wall 500
         "exceptions": {19: (1, 1, 400, 400, 400, 500), 15: (1, 2, 100, 100, 100, 100)}},
    ]
    return bytes(enc.out), intervals


# ---------------------------------------------------------------- ftrace, strictly

FTRACE_HEADER = [
    "# tracer: nop",
    "#",
    None,  # entries-in-buffer/entries-written: N/N   #P:1
    "#",
    "#                                _-----=> irqs-off",
    "#                               / _----=> need-resched",
    "#                              | / _---=> hardirq/softirq",
    "#                              || / _--=> preempt-depth",
    "#                              ||| /     delay",
    "#           TASK-PID     CPU#  ||||   TIMESTAMP  FUNCTION",
    "#              | |         |   ||||      |         |",
]
ENTRIES = re.compile(r"^# entries-in-buffer/entries-written: *(\d+)/(\d+) +#P:(\d+)$")
# TASK-PID, [CPU], the four latency flags (irqs-off d/X/., need-resched N/n/p/./..., hardirq/
# softirq h/s/H/., preempt-depth hex digit or .), TIMESTAMP seconds.microseconds, event: fields
EVENT = re.compile(r"^ *(?P<task>\S.*)-(?P<pid>\d+) +\[(?P<cpu>\d{3})\] "
                   r"(?P<flags>[dX.][NnpP.][hsHz.][0-9a-f.]) +(?P<ts>\d+\.\d{6}): "
                   r"(?P<event>[a-z_]+): (?P<fields>.*)$")
SCHED_SWITCH = re.compile(r"^prev_comm=(\S+) prev_pid=(\d+) prev_prio=(-?\d+) "
                          r"prev_state=([RSDTtXZPIK+]+) ==> next_comm=(\S+) next_pid=(\d+) "
                          r"next_prio=(-?\d+)$")
IRQ_ENTRY = re.compile(r"^irq=(\d+) name=(\S+)$")
IRQ_EXIT = re.compile(r"^irq=(\d+) ret=(handled|unhandled)$")


def parse_ftrace(text):
    """The events of an ftrace text file, or raises ValueError naming the first bad line."""
    lines = text.split("\n")
    if lines[-1] != "":
        raise ValueError("no newline at the end")
    lines = lines[:-1]
    for index, want in enumerate(FTRACE_HEADER):
        if index >= len(lines):
            raise ValueError("header cut short")
        if want is None:
            match = ENTRIES.match(lines[index])
            if not match or match.group(1) != match.group(2) or match.group(3) != "1":
                raise ValueError(f"bad entries line {lines[index]!r}")
            count = int(match.group(1))
        elif lines[index] != want:
            raise ValueError(f"header line {index + 1}: {lines[index]!r}")
    events, last, running = [], -1.0, None
    for line in lines[len(FTRACE_HEADER):]:
        match = EVENT.match(line)
        if not match:
            raise ValueError(f"bad event line {line!r}")
        ts = float(match.group("ts"))
        if ts < last:
            raise ValueError(f"time goes back at {line!r}")
        last = ts
        task = (match.group("task").strip(), int(match.group("pid")))
        event, fields = match.group("event"), match.group("fields")
        if event == "sched_switch":
            sw = SCHED_SWITCH.match(fields)
            if not sw:
                raise ValueError(f"bad sched_switch {fields!r}")
            prev = (sw.group(1), int(sw.group(2)))
            if task != prev:  # the event is recorded in the context of the previous task
                raise ValueError(f"task {task} is not prev {prev}")
            if running is not None and prev != running:
                raise ValueError(f"prev {prev} is not the running task {running}")
            running = (sw.group(5), int(sw.group(6)))
            events.append(("switch", ts, prev, running, int(sw.group(7))))
        elif event in ("irq_handler_entry", "irq_handler_exit"):
            irq = (IRQ_ENTRY if event == "irq_handler_entry" else IRQ_EXIT).match(fields)
            if not irq:
                raise ValueError(f"bad {event} {fields!r}")
            if running is not None and task != running:
                raise ValueError(f"{event} in {task}, not the running {running}")
            events.append((event, ts, int(irq.group(1))))
        else:
            raise ValueError(f"unknown event {event}")
    if count != len(events):
        raise ValueError(f"header says {count} entries, the file has {len(events)}")
    return events


# ---------------------------------------------------------------- the checks


def gdb_reference(elf, machine, work):
    """Runs to sched_checkpoint, prints the tasks, dumps RAM; leaves QEMU parked."""
    commands = ["break sched_checkpoint", "continue"]
    for name in TASKS:
        commands += [f'printf "@@{name} %s %d\\n", task_{name}.name, task_{name}.priority',
                     f"print task_{name}.entry"]
    commands += [f"dump binary memory {work}/ram.bin 0x20000000 &__noinit_end"]
    qemu = Qemu(elf, machine, gdb=True, semihosting_args="arg=park").__enter__()
    text = run_gdb(elf, qemu.gdb_port, commands)
    ref = {}
    for name in TASKS:
        match = re.search(rf"@@{name} (\S+) (\d+)\n.*?<(\w+)>", text, re.S)
        check(match is not None, f"gdb printed no {name}: {text[-800:]}")
        if match:
            ref[name] = (match.group(1), int(match.group(2)), match.group(3))
    return qemu, ref


def stop_parked(port):
    """QEMU stops a running machine when a GDB client connects and tells that client with an
    unsolicited stop reply (T02). A first connection takes that reply and closes; the machine
    stays stopped, and spoor's connection then starts from a quiet, halted target."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.settimeout(30)
        seen = b""
        while b"$T" not in seen and b"$S" not in seen:
            chunk = sock.recv(4096)
            if not chunk:
                break
            seen += chunk
        sock.sendall(b"+")


def run_top(args):
    result = subprocess.run([SPOOR, "top", *args], capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"spoor top {args}: {result.returncode} {result.stderr}")
    return result


def check_threads(label, lines, tcbs, ref):
    by_tcb = {t["tcb"]: t for t in lines[0]["threads"]}
    for name in TASKS:
        t = by_tcb.get(f"0x{tcbs[name]:08x}")
        check(t is not None, f"{label}: {name} missing")
        if t:
            got = (t["name"], t["prio"], t["func"])
            check(got == ref[name], f"{label}: {name}: {got} != gdb's {ref[name]}")
            check(t["idle"] == (name == "idle"), f"{label}: {name} idle flag {t['idle']}")


def check_numbers(core, lines, tcbs, expected):
    intervals = [line for line in lines if not line["summary"]]
    check(len(intervals) == 2 and lines[-1]["summary"],
          f"{core}: {len(intervals)} intervals and a summary expected 2+1: {lines}")
    names = {f"0x{tcb:08x}": name for name, tcb in tcbs.items()}
    for k, (got, want) in enumerate(zip(intervals, expected)):
        check(got["interval"] == k and not got["partial"], f"{core}: interval {k} header {got}")
        check(abs(got["interval_ms"] - INTERVAL_MS) < 1e-9, f"{core}: interval_ms {got}")
        for t in got["threads"]:
            cycles, switches = want["threads"][names[t["tcb"]]]
            check(t["cycles"] == cycles and t["switches"] == switches,
                  f"{core}: interval {k} {names[t['tcb']]}: {t['cycles']} cycles "
                  f"{t['switches']} switches, expected {cycles} {switches}")
            check(abs(t["cpu"] - cycles * 100 / L) < 1e-3,
                  f"{core}: interval {k} {names[t['tcb']]}: cpu {t['cpu']}")
            check(abs(t["time_ms"] - cycles * 1000 / HZ) < 1e-3,
                  f"{core}: interval {k} {names[t['tcb']]}: time_ms {t['time_ms']}")
        check(abs(got["cpu_usage"] - want["cpu"]) < 1e-3,
              f"{core}: interval {k} cpu_usage {got['cpu_usage']} != {want['cpu']}")
        exc = {e["num"]: e for e in got["exceptions"]}
        check(set(exc) == set(want["exceptions"]),
              f"{core}: interval {k} exceptions {sorted(exc)} != {sorted(want['exceptions'])}")
        for num, (count, maxd, total, lo, hi, wall) in want["exceptions"].items():
            e = exc.get(num)
            if not e:
                continue
            got_t = (e["count"], e["maxd"], e["total"], e["min"], e["max"], e["maxwall"])
            check(got_t == (count, maxd, total, lo, hi, wall),
                  f"{core}: interval {k} exception {num}: {got_t}")
            check(abs(e["pct"] - total * 100 / L) < 1e-3, f"{core}: exception {num} pct")
    check(abs(intervals[0]["cpu_max"] - 80) < 1e-3 and abs(intervals[1]["cpu_max"] - 80) < 1e-3,
          f"{core}: cpu_max {[i['cpu_max'] for i in intervals]}")


def check_ftrace(core, path, tcbs, ref):
    try:
        events = parse_ftrace(Path(path).read_text())
    except ValueError as error:
        check(False, f"{core}: ftrace: {error}")
        return
    switches = [e for e in events if e[0] == "switch"]
    want = [(0, "sensor"), (5000, "control"), (12000, "logger"), (20000, "idle"),
            (30000, "sensor"), (40000, "idle")]
    got = [(round(e[1] * HZ), e[3]) for e in switches]
    expect = [(t, (f"{ref[n][0]}|{ref[n][2]}", tcbs[n])) for t, n in want]
    check(got == expect, f"{core}: ftrace switches {got} != {expect}")
    irqs = [(e[0], round(e[1] * HZ), e[2]) for e in events if e[0] != "switch"]
    check(irqs == [("irq_handler_entry", 24000, 15), ("irq_handler_exit", 24300, 15),
                   ("irq_handler_entry", 26000, 19), ("irq_handler_entry", 26100, 15),
                   ("irq_handler_exit", 26200, 15), ("irq_handler_exit", 26500, 19)],
          f"{core}: ftrace irq events {irqs}")


def check_chrome(core, path, tcbs):
    try:
        doc = json.loads(Path(path).read_text())
    except ValueError as error:
        check(False, f"{core}: chrome JSON: {error}")
        return
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    check(isinstance(events, list) and events, f"{core}: no traceEvents")
    if not isinstance(events, list):
        return
    per_tid, names = {}, {}
    for e in events:
        check(isinstance(e.get("name"), str) and e.get("ph") in ("X", "M")
              and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int),
              f"{core}: bad event {e}")
        if e.get("ph") == "X":
            check(isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float))
                  and e["dur"] >= 0, f"{core}: bad complete event {e}")
            per_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
        elif e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
    for tid, slices in per_tid.items():
        slices.sort()
        if tid != 0:  # a thread's stretches never overlap
            for a, b in zip(slices, slices[1:]):
                check(a[1] <= b[0] + 1e-6, f"{core}: overlapping slices on {tid}: {a} {b}")
    us = {n: sum(b - a for a, b in per_tid.get(tcbs[n], [])) for n in TASKS}
    want = {"sensor": 15000, "control": 7000, "logger": 8000, "idle": 20000}
    for n in TASKS:
        check(abs(us[n] - want[n] * 1e6 / HZ) < 1e-3, f"{core}: chrome {n}: {us[n]} us")
        check(names.get(tcbs[n], "").startswith(n), f"{core}: chrome track name {names}")
    check(len(per_tid.get(0, [])) == 3, f"{core}: chrome exception slices {per_tid.get(0)}")


def run_core(core, work):
    elf, machine = example("sched", core)
    symbols = symbol_addresses(elf)
    tcbs = {name: symbols[f"task_{name}"] for name in TASKS}
    stream, expected = schedule(tcbs)
    (work / "stream.itm").write_bytes(stream)
    qemu, ref = gdb_reference(elf, machine, work)
    try:
        for name in TASKS:
            check(ref.get(name, (None,))[0] == name, f"{core}: gdb's name of {name}: {ref}")
        common = ["-e", str(elf), "--input", str(work / "stream.itm"), "-F", str(HZ),
                  "-I", str(INTERVAL_MS), "-E"]
        # offline, memory from the RAM image
        run_top(common + ["--mem", f"0x20000000:{work}/ram.bin", "-j", str(work / "off.jsonl"),
                          "--ftrace", str(work / "trace.txt"), "--chrome", str(work / "c.json")])
        lines = [json.loads(x) for x in (work / "off.jsonl").read_text().splitlines()]
        check_threads(f"{core} offline", lines, tcbs, ref)
        check_numbers(core, lines, tcbs, expected)
        check_ftrace(core, work / "trace.txt", tcbs, ref)
        check_chrome(core, work / "c.json", tcbs)
        # live: the parked target behind QEMU's gdbstub
        stop_parked(qemu.gdb_port)
        result = run_top(common + ["--gdb", f"127.0.0.1:{qemu.gdb_port}", "--stats",
                                   "-j", str(work / "live.jsonl")])
        live = [json.loads(x) for x in (work / "live.jsonl").read_text().splitlines()]
        check_threads(f"{core} live", live, tcbs, ref)
        check(live == lines, f"{core}: live and offline JSON differ")
        match = re.search(r"(\d+) round trips.*; (\d+) threads", result.stderr)
        check(match is not None, f"{core}: no --stats line: {result.stderr}")
        if match:
            trips, threads = int(match.group(1)), int(match.group(2))
            # one for the idle-task pointer at start, one per new thread (its whole TCB; names
            # are in flash, which the ELF serves), and at the end of each full interval the
            # TCBs of the threads in the table are re-read (priorities, states; the whole TCB of
            # those that ran): the four TCBs share one 256-byte page of the GDB layer's cache,
            # one round trip per interval
            check(threads == 4 and trips == 1 + threads + 2,
                  f"{core}: {trips} GDB round trips for {threads} threads (expected 1 + 4 + 2)")
    finally:
        qemu.close()


def self_test_parser():
    """The strict parser rejects what it must (so that its passing means something)."""
    good = "\n".join(FTRACE_HEADER[:2] + ["# entries-in-buffer/entries-written: 1/1   #P:1"]
                     + FTRACE_HEADER[3:]) + "\n"
    line = ("a|f-1 [000] .... 0.000001: sched_switch: prev_comm=a|f prev_pid=1 prev_prio=0 "
            "prev_state=S ==> next_comm=b|g next_pid=2 next_prio=1\n")
    parse_ftrace(good + line)
    for bad in [good + line.replace("[000]", "[0]"), good + line.replace("0.000001", "0.001"),
                good + line.replace("a|f-1", "b|g-2"), good + line + line,
                good.replace("#P:1", "#P:2") + line, good + line.replace(" ==> ", " => ")]:
        try:
            parse_ftrace(bad)
            check(False, f"the ftrace parser accepted {bad[-200:]!r}")
        except ValueError:
            pass


def main():
    require_tool("arm-none-eabi-nm")
    self_test_parser()
    return run_cores(run_core)


if __name__ == "__main__":
    sys.exit(main())
