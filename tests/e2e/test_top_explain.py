"""spoor top on a stranger's firmware: the output that is empty or partial says why, once, and
the flags users bring from orbtop-rtos are taken.

Streams are made here (test_top_rtos_shapes.stream: data value packets of comparator 1 and
local timestamps, encoded by the test from the ARMv7-M ARM's packet formats), the firmware is
the RTX5-shaped one of test_top_rtos_shapes.py, TPIU frames are test_top_tpiu.py's formatter.

Checked:
- an empty input: one error line, exit 2;
- a stream whose switches come from comparator 2 (read with the default comparator 1): exit 0,
  one warning that counts the packets by type (as the test encoded them) and names comparator
  2 as the one that matched;
- no target memory (the README's usage line): one note naming --mem, --gdb, -W and a dump,
  and no per-thread "memory" warnings;
- a TPIU-framed stream read without --tpiu: "looks TPIU-formatted: try --tpiu", and `spoor
  itm` says the same; a plain stream never does;
- -T rtxv5 (orbtop-rtos's spelling) is rtx5;
- -s X --input Y: "give one of";
- --prescaler 4 (ITM_TCR.TSPrescale /4): the stream's 1000-tick timestamps are 4000 cycles
  each thread ran, and a value the field cannot hold is refused;
- --ftrace -E: an exception before any switch is the task "<unknown>-0", as the first
  switch's prev (one placeholder for no known thread);
- a stream without local timestamps (ITM_TCR.TSENA 0): recorded, one warning that every time
  is 0 and what to enable; live (-s, served here by a TCP server that sends each switch at a
  time it chose), the host's clock times the packets: tables come during the run, one per
  interval, and each thread's share equals the server's schedule (+-15 points of load noise),
  with one note that the times are the host's;
- a live stream whose sync (the ITM sends one when it is enabled) comes half a second before
  its first dated packet (a target halted or idle meanwhile, a slow probe): its own clock
  counts, not the host's: the intervals are the recording's, as the test encoded them, and no
  note about the host's clock."""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import symbol_addresses  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402
from test_top_rtos_shapes import build_with_data, stream  # noqa: E402
from test_top_tpiu import tpiu  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def run(*args):
    return subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True, timeout=60)


def top(elf, itm, *extra):
    return run("top", "-e", elf, "--input", itm, "-F", "1000000", "-I", "1", *extra)


def exception_entry(number):
    """An exception trace packet (ARMv7-M ARM D4.3.2: header 0x0E, FN 0b01 entry)."""
    return bytes([0x0E, number & 0xFF, (number >> 8) & 1 | 1 << 4])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data = build_with_data("RTX5", work)
        mem = ("--mem", f"0x20000000:{data}")
        symbols = symbol_addresses(elf)
        names = ["main_thread", "sensor", "idle", "main_thread"]
        plain = stream([symbols[n] for n in names])
        (work / "plain.itm").write_bytes(plain)

        # 1. empty input
        (work / "empty.itm").write_bytes(b"")
        r = top(elf, work / "empty.itm", *mem)
        check(r.returncode == 2 and r.stdout == ""
              and r.stderr == f"spoor top: {work / 'empty.itm'}: the stream is empty (no byte)\n",
              f"empty input: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")

        # 1. the switches on comparator 2, read for comparator 1: the header byte's comparator
        # bits (D4.3.4, 0b10NNWxSS: NN) made 2 instead of 1
        comp2 = bytearray(plain)
        for i in range(len(comp2)):
            if comp2[i] == ((16 + 2 * 1 + 1) << 3 | 0x4 | 0x3) & 0xFF and i >= 6:
                comp2[i] = (16 + 2 * 2 + 1) << 3 & 0xFF | 0x4 | 0x3
        (work / "comp2.itm").write_bytes(bytes(comp2))
        r = top(elf, work / "comp2.itm", *mem)
        # the test's encoding: one sync, 4 data values, 5 local timestamps and one software
        # packet (the end marker \x01\x00)
        lines = [ln for ln in r.stderr.splitlines() if "no thread switch" in ln]
        check(r.returncode == 0 and len(lines) == 1 and len(r.stderr.splitlines()) == 1,
              f"comparator 2: exit {r.returncode}, stderr {r.stderr!r}")
        if lines:
            ln = lines[0]
            check("1 sync" in ln and "5 ts_local" in ln and "4 dwt_data" in ln
                  and "1 sw" in ln, f"packet counts: {ln}")
            check("comparators that matched: 2)" in ln and "comparator 1 watches" in ln
                  and "--comparator" in ln, f"comparators: {ln}")
        r = top(elf, work / "comp2.itm", *mem, "--comparator", "2")
        check(r.returncode == 0 and r.stderr == "", f"--comparator 2: {r.stderr!r}")

        # 2. no memory: one note, no per-thread warning; with memory no note
        r = top(elf, work / "plain.itm")
        notes = [ln for ln in r.stderr.splitlines() if ln]
        check(r.returncode == 0 and len(notes) == 1 and "no target memory" in notes[0]
              and all(f in notes[0] for f in ("--mem", "--gdb", "-W", "dump")),
              f"no memory: exit {r.returncode}, stderr {r.stderr!r}")
        r = top(elf, work / "plain.itm", *mem)
        check(r.returncode == 0 and r.stderr == "" and "sensor_task" in r.stdout,
              f"with --mem: {r.stderr!r}")

        # 3. TPIU-framed, read as plain ITM
        (work / "framed.itm").write_bytes(tpiu(plain))
        r = top(elf, work / "framed.itm", *mem)
        check(r.returncode == 0 and "looks TPIU-formatted" in r.stderr
              and "try --tpiu" in r.stderr, f"framed without --tpiu: {r.stderr!r}")
        r = top(elf, work / "framed.itm", *mem, "--tpiu")
        check(r.returncode == 0 and r.stderr == "", f"framed with --tpiu: {r.stderr!r}")
        r = run("itm", work / "framed.itm")
        check("looks TPIU-formatted" in r.stderr and "try --tpiu" in r.stderr,
              f"spoor itm, framed without --tpiu: {r.stderr!r}")
        r = run("itm", "--tpiu", work / "framed.itm")
        check("looks TPIU" not in r.stderr, f"spoor itm --tpiu: {r.stderr!r}")
        # a plain stream with lost bytes (a reserved header) is not called TPIU
        (work / "lost.itm").write_bytes(plain + b"\x04\x74\x04")
        r = run("itm", work / "lost.itm")
        check("looks TPIU" not in r.stderr, f"plain with lost bytes: {r.stderr!r}")

        # 7. orbtop-rtos's -T rtxv5
        r = top(elf, work / "plain.itm", *mem, "-T", "rtxv5")
        want = top(elf, work / "plain.itm", *mem, "-T", "rtx5")
        check(r.returncode == 0 and r.stdout == want.stdout and "(RTX5)" in r.stdout,
              f"-T rtxv5: exit {r.returncode}, {r.stderr!r}")

        # 9. the timestamp prescaler: the stream's ticks (1000 apart, as the test encoded them)
        # count 4 cycles each
        r = top(elf, work / "plain.itm", *mem, "-I", "100", "--prescaler", "4", "-j",
                work / "p4.jsonl")
        summary = json.loads((work / "p4.jsonl").read_text().splitlines()[-1]) \
            if r.returncode == 0 else {"threads": []}
        cycles = {t["name"]: t["cycles"] for t in summary["threads"]}
        # main_thread ran twice (the second time up to the end marker's timestamp)
        check(cycles == {"main": 8000, "sensor_task": 4000, "osRtxIdleThread": 4000},
              f"--prescaler 4: exit {r.returncode} {r.stderr!r}, cycles {cycles}")
        r = top(elf, work / "plain.itm", *mem, "--prescaler", "8")
        check(r.returncode == 2 and "--prescaler 8: " in r.stderr, f"--prescaler 8: {r.stderr!r}")

        # 12. both sources
        r = run("top", "-e", elf, "-F", "1000000", "-s", "localhost:1", "--input",
                work / "plain.itm")
        check(r.returncode == 2 and r.stderr.startswith("spoor top: give one of "),
              f"-s and --input: {r.stderr!r}")

        # 10. an exception before the first switch: the running task is "<unknown>-0", as the
        # prev of the first switch
        (work / "exc.itm").write_bytes(plain[:6] + exception_entry(15) + plain[6:])
        r = top(elf, work / "exc.itm", *mem, "-E", "--ftrace", work / "exc.ftrace")
        events = [ln for ln in (work / "exc.ftrace").read_text().splitlines()
                  if not ln.startswith("#")]
        tasks = [re.match(r"\s*(\S+)-(\d+) ", ln).groups() for ln in events[:2]] \
            if len(events) >= 2 else []
        check(r.returncode == 0 and tasks == [("<unknown>", "0"), ("<unknown>", "0")]
              and "irq_handler_entry" in events[0] and "prev_comm=<unknown>" in events[1],
              f"ftrace placeholder: {tasks} {events[:2]}")
        check_no_timestamps(elf, mem, [symbols[n] for n in ("main_thread", "sensor")], work)
        check_sync_long_before_timestamps(elf, mem, plain, [symbols[n] for n in names], work)
    return exit_status()


def switch_packet(tcb):
    """A data value packet of comparator 1, a word (ARMv7-M ARM D4.3.4: 0b10NNWxSS)."""
    return bytes([(16 + 2 * 1 + 1) << 3 | 0x4 | 0x3]) + tcb.to_bytes(4, "little")


def serve_schedule(listener, schedule):
    """Accepts one client and sends each (seconds, bytes) of schedule at its time, until the
    client leaves (spoor top -n has its intervals)."""
    conn, _ = listener.accept()
    with conn:
        start = time.monotonic()
        for at, data in schedule:
            time.sleep(max(0.0, start + at - time.monotonic()))
            try:
                conn.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                return


def check_no_timestamps(elf, mem, tcbs, work):
    a, b = tcbs
    # recorded: the same switches without a single local timestamp
    (work / "nots.itm").write_bytes(b"\x00" * 5 + b"\x80" +
                                    b"".join(switch_packet(t) for t in (a, b, a, b)))
    r = top(elf, work / "nots.itm", *mem)
    check(r.returncode == 0 and r.stderr.count("no local timestamp") == 1
          and "TSENA" in r.stderr and "every time is 0" in r.stderr,
          f"recorded, no timestamps: exit {r.returncode}, {r.stderr!r}")
    r = top(elf, work / "plain.itm", *mem)
    check("no local timestamp" not in r.stderr, f"with timestamps: {r.stderr!r}")
    # live: a switches at 0 s, b at 0.3 s, a at 0.6 s, ... every 0.3 s for 2.4 s: each thread
    # runs 50 % of every 600 ms interval
    schedule = [(0.0, b"\x00" * 5 + b"\x80" + switch_packet(a))]
    schedule += [(0.3 * k, switch_packet(b if k % 2 else a)) for k in range(1, 9)]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    server = threading.Thread(target=serve_schedule, args=(listener, schedule), daemon=True)
    server.start()
    out = work / "live.jsonl"
    try:
        r = subprocess.run([SPOOR, "top", "-e", str(elf), "-s",
                            f"127.0.0.1:{listener.getsockname()[1]}", "-F", "1000000", "-I", "600",
                            "-n", "3", *mem, "-j", str(out)],
                           capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:  # no time: the intervals never end
        r = subprocess.CompletedProcess([], -1, "", "(timed out after 30 s)")
    listener.close()
    lines = [json.loads(ln) for ln in out.read_text().splitlines()] if out.exists() else []
    intervals = [ln for ln in lines if not ln["summary"] and not ln["partial"]]
    check(r.returncode == 0 and len(intervals) == 3,
          f"live, no timestamps: exit {r.returncode} {r.stderr!r}, {len(intervals)} intervals")
    for ln in intervals[1:]:  # the first one starts at the first packet
        shares = sorted(t["cpu"] for t in ln["threads"])
        check(len(shares) == 2 and all(35.0 <= s <= 65.0 for s in shares),
              f"live, no timestamps: interval {ln['interval']}: shares {shares}")
    check(r.stderr.count("host's clock") == 1, f"live, no timestamps: {r.stderr!r}")


def check_sync_long_before_timestamps(elf, mem, plain, tcbs, work):
    """plain: a sync, then each of tcbs switched to 1000 cycles apart, dated (-F 1000000 -I 1:
    one switch an interval, each interval all its thread's). Live, the sync alone first, the
    rest 0.5 s later: a sync is never followed by a timestamp, so the wait is no sign that the
    stream has none."""
    sync = b"\x00" * 5 + b"\x80"
    assert plain.startswith(sync)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    server = threading.Thread(target=serve_schedule,
                              args=(listener, [(0.0, sync), (0.5, plain[len(sync):])]),
                              daemon=True)
    server.start()
    out = work / "late.jsonl"
    n = len(tcbs)
    try:
        r = subprocess.run([SPOOR, "top", "-e", str(elf), "-s",
                            f"127.0.0.1:{listener.getsockname()[1]}", "-F", "1000000", "-I", "1",
                            "-n", str(n), *mem, "-j", str(out)],
                           capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        r = subprocess.CompletedProcess([], -1, "", "(timed out after 30 s)")
    listener.close()
    lines = [json.loads(ln) for ln in out.read_text().splitlines()] if out.exists() else []
    got = [(ln["start_ms"], ln["quiet_intervals"], [(int(t["tcb"], 0), t["cpu"])
                                                     for t in ln["threads"] if t["cpu"]])
           for ln in lines if not ln["summary"] and not ln["partial"]]
    # a timestamp dates the packets before it: switch k at cycle 1000 (k + 1)
    want = [(0.0, 0, [])] + [(float(k + 1), 0, [(tcb, 100.0)]) for k, tcb in enumerate(tcbs[:-1])]
    check(r.returncode == 0 and got == want and "host's clock" not in r.stderr,
          f"sync 0.5 s before the first timestamp: exit {r.returncode} {r.stderr!r}, "
          f"intervals {got}, want {want}")


if __name__ == "__main__":
    sys.exit(main())
