"""spoor crash --gdb through a misbehaving GDB server: every fault of faulty_gdb.py at packet
positions of a good run, against QEMU's gdbstub (examples/calls on the M3, halted by
gdb-multiarch at level_three, as in test_crash_gdb.py).

The good run through a fault-free proxy is recorded first (its output and its request count N).
Then each fault runs at positions 1, N/2 and N (every position 1..N for "close", the fault the
unwinder once turned into invented frames; "console" fires at the first stop reply at or after
its position). Each run must end within 9 s (the client's 5 s timeout bounds one exchange,
however slowly a reply drips) and give one of:
  - the good run's output, exit 0;
  - only where the server refused a read ("E01"), a partial answer that says so: exit 0, the backtrace a prefix of the good one ending in
    "(stopped: unreadable memory)", every other line the good run's (the fault status line may
    lack registers the server refused to read);
  - a one-line error on stderr ("spoor crash: 127.0.0.1:PORT: ..."), nothing on stdout, exit 2.
Never a frame the good run does not have, never exit 0 with a connection that broke.

Also checked: a reply with a bad checksum draws exactly one '-' from spoor.

`spoor calls --gdb` on examples/calls_trace halted in calls_done(): every fault at 1, N/2 and N, each run the good
run's output or a one-line error ("spoor calls: 127.0.0.1:PORT: ..."), exit 2, within the bound.
`spoor top --gdb` is tests/e2e/test_top_gdb_lost.py, `spoor mtb --gdb --freeze`
tests/e2e/test_mtb.py (test_live_freeze_lost_connection). Still to be added: the running-target
path of top ('c', 0x03 and 'O' console output while it runs) and `spoor gdbserver --gdb` (driven
by gdb-multiarch through the proxy)."""
import concurrent.futures
import os
import queue
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import faulty_gdb  # noqa: E402
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
RUN_LIMIT_S = 9.0
# What each fault may give: only a target that refuses a read ("E01") leaves a partial answer;
# a connection that broke is an error, a fault the protocol recovers from changes nothing.
ALLOWED = {"close": {"same", "error"}, "silent": {"same", "error"}, "drip": {"same", "error"},
           "long": {"same", "error"}, "error": {"same", "partial", "error"},
           "checksum": {"same"}, "duplicate": {"same"}, "console": {"same"}, "short": {"same"},
           "noreply": {"same", "error"}}


def crash(elf, port, command="crash"):
    start = time.monotonic()
    r = subprocess.run([SPOOR, command, "-e", str(elf), "--gdb", f"127.0.0.1:{port}"],
                       capture_output=True, text=True, timeout=60)
    return r, time.monotonic() - start


def backtrace(lines):
    return [line for line in lines if line.startswith("  #")]


def verdict(good, r, command="crash"):
    """'same', 'partial', 'error', or what is wrong."""
    if r.returncode == 0 and r.stdout == good.stdout and not r.stderr:
        return "same"
    errs = r.stderr.splitlines()
    if r.returncode == 2:
        if not r.stdout and len(errs) == 1 and errs[0].startswith(f"spoor {command}: "
                                                                   "127.0.0.1:"):
            return "error"
        return "exit 2 without a one-line error"
    if command != "crash":
        return f"exit {r.returncode}, not the good run's output"
    if r.returncode != 0:
        return f"exit {r.returncode}"
    got, want = r.stdout.splitlines(), good.stdout.splitlines()
    bt_got, bt_want = backtrace(got), backtrace(want)
    if bt_got != bt_want[:len(bt_got)]:
        return "a frame the good run does not have"
    if bt_got != bt_want and "(stopped: unreadable memory)" not in got:
        return "a shorter backtrace that does not say memory was unreadable"
    rest_got = [x for x in got if x not in bt_got and not x.startswith("(stopped")]
    rest_want = [x for x in want if x not in bt_want and not x.startswith("(stopped")]
    if len(rest_got) != len(rest_want):
        return "other lines than the good run"
    for a, b in zip(rest_got, rest_want):
        if a != b and not (a.strip().split() and set(a.split()) <= set(b.split())):
            return f"a line the good run does not have: {a!r}"
    return "partial"


def halted_qemu(elf, machine):
    """QEMU halted by gdb-multiarch at level_three (QEMU's gdbstub serves one client at a time:
    each worker of the run has its own)."""
    qemu = harness.Qemu(elf, machine, gdb=True).__enter__()
    harness.run_gdb(elf, qemu.gdb_port, ["break level_three", "continue", "delete",
                                         "disconnect"])
    return qemu


def main():
    elf, machine = harness.example("calls", "m3")
    failed = 0
    qemus = [halted_qemu(elf, machine) for _ in range(2)]
    try:
        with faulty_gdb.FaultyGdb(qemus[0].gdb_port) as proxy:
            good, took = crash(elf, proxy.port)
        n = len(proxy.requests)
        if good.returncode != 0 or "level_two" not in good.stdout or n < 6:
            print(f"FAIL good run: exit {good.returncode}, {n} requests\n{good.stdout}"
                  f"{good.stderr}")
            return 1
        print(f"good run: {n} requests, {len(backtrace(good.stdout.splitlines()))} frames, "
              f"{took:.1f} s")
        runs = [("close", at) for at in range(1, n + 1)]
        for fault in faulty_gdb.FAULTS:
            if fault != "close":
                runs += [(fault, at) for at in sorted({1, (n + 1) // 2, n})]
        free = queue.Queue()
        for q in qemus:
            free.put(q.gdb_port)

        def one(run):
            fault, at = run
            port = free.get()
            try:
                with faulty_gdb.FaultyGdb(port, fault, at=at) as p:
                    r, took = crash(elf, p.port)
            finally:
                free.put(port)
            return run, r, took, p.fired, p.nacks

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(qemus)) as pool:
            results = list(pool.map(one, runs))
        for (fault, at), r, took, fired, nacks in results:
            v = verdict(good, r)
            ok = v in ALLOWED[fault] and took < RUN_LIMIT_S
            if fault == "checksum":
                ok = ok and nacks == 1
            if fault in ("close", "silent", "error", "duplicate", "checksum", "drip", "noreply"):
                ok = ok and fired
            print(f"{'ok  ' if ok else 'FAIL'} {fault:9} at {at:2}: {v}, exit {r.returncode}, "
                  f"{took:.1f} s, fired={fired}, nacks={nacks}"
                  + (f": {r.stderr.strip()}" if r.stderr else ""))
            if not ok:
                print(r.stdout)
            failed += not ok
    finally:
        for q in qemus:
            q.close()
    failed += calls_faults()
    print("FAILED" if failed else "all passed", f"({failed} failures)")
    return 1 if failed else 0


def calls_faults():
    """spoor calls --gdb (the call recorder's ring read from the halted target): every fault at
    positions 1, N/2 and N; the good run's output or a one-line error, within the bound."""
    failed = 0
    # examples/calls_trace in mode "hold": the demo runs, then waits in calls_done()
    elf, machine = harness.example("calls_trace", "m3")
    qemu = harness.Qemu(elf, machine, gdb=True,
                        semihosting_args="arg=calls_trace,arg=hold").__enter__()
    harness.run_gdb(elf, qemu.gdb_port, ["break calls_done", "continue", "delete",
                                         "disconnect"])
    try:
        with faulty_gdb.FaultyGdb(qemu.gdb_port) as proxy:
            good, _ = crash(elf, proxy.port, "calls")
        n = len(proxy.requests)
        if good.returncode != 0 or "decide" not in good.stdout:
            print(f"FAIL calls good run: exit {good.returncode}\n{good.stdout}{good.stderr}")
            return 1
        for fault in faulty_gdb.FAULTS:
            for at in sorted({1, (n + 1) // 2, n}):
                with faulty_gdb.FaultyGdb(qemu.gdb_port, fault, at=at) as p:
                    r, took = crash(elf, p.port, "calls")
                v = verdict(good, r, "calls")
                ok = v in ALLOWED[fault] - {"partial"} and took < RUN_LIMIT_S
                print(f"{'ok  ' if ok else 'FAIL'} calls {fault:9} at {at:2}: {v}, exit "
                      f"{r.returncode}, {took:.1f} s" + (f": {r.stderr.strip()}" if r.stderr
                                                         else ""))
                failed += not ok
    finally:
        qemu.close()
    return failed


if __name__ == "__main__":
    sys.exit(main())
