"""spoor crash --gdb through a misbehaving GDB server: every fault of faulty_gdb.py at packet
positions of a good run, against QEMU's gdbstub (examples/calls on the M3, halted by
gdb-multiarch at level_three, as in test_crash_gdb.py).

The good run through a fault-free proxy is recorded first (its output and its request count N).
Then each fault runs at positions 1, N/2 and N (every position 1..N for "close", the fault the
unwinder once turned into invented frames; "console" fires at the first stop reply at or after
its position). Each run must end within 9 s (the client's 5 s timeout bounds one exchange,
however slowly a reply drips; the 4 s beyond it scaled by the machine's load,
harness.time_limit) and give one of:
  - the good run's output, exit 0;
  - only where the server refused a read ("E01"), a partial answer that says so: exit 0, the backtrace a prefix of the good one ending in
    "(stopped: unreadable memory)", every other line the good run's (the fault status line may
    lack registers the server refused to read);
  - a one-line error on stderr ("spoor crash: 127.0.0.1:PORT: ..."), nothing on stdout, exit 2.
Never a frame the good run does not have, never exit 0 with a connection that broke.

Also checked: a reply with a bad checksum draws exactly one '-' from spoor.

`spoor calls --gdb` on examples/calls_trace halted in calls_done(): 'close' at every request, the
other faults at 1, N/2 and N, each run the good run's output or a one-line error ("spoor calls:
127.0.0.1:PORT: ..."), exit 2, within the bound; a connection that fails while the recorder is
read says so and what was being read ("the connection failed while reading the call ring
(...) (the recorder's state was read): the server closed the connection"), never that the
ring "is not in the input".

`spoor gdbserver --gdb` (a relay of the halted target), asked by gdb-multiarch for bt, two
registers and a stack word: the good run's gdb output and exit 0; for "E01", gdb saying memory
cannot be read; else one line on stderr and exit 2 (a connection lost mid-session is said at
once, gdb is answered E01 from then on). Never a frame the good run does not have, never a
line of gdb's the good run does not have (a relay one reply out of step makes gdb print
"Invalid hex digit" or wrong values), each run within GDBSERVER_LIMIT_S (gdb gives up on a
reply after 3 x remotetimeout, 6 s: one slow exchange upstream, 5 s at most, must not outlast
it).

`spoor top -s STREAM --gdb` on a running target (examples/sched in QEMU, never halted but by
spoor: 0x03, reads, 'c'): every fault at every request of the good run, 'c' and the stop reply
that follows the interrupt included; the good run's output, or the intervals it printed before
and one line on stderr, exit 2, the State column left out of the comparison (a running
target's states are those of the moment spoor halted it). (`spoor top --gdb` on a halted target with --input is
tests/e2e/test_top_gdb_lost.py, `spoor mtb --gdb --freeze` tests/e2e/test_mtb.py
(test_live_freeze_lost_connection).)

`spoor mtb --gdb --freeze` on a fake MTB (register block and buffer written into the halted
target's RAM; QEMU has no MTB): every fault at every request; the output of the --mem run over
the same images with MASTER as it was afterwards, or one line and exit 2 that says the MTB was
left stopped (or may be) whenever MASTER reads stopped afterwards; no 'g' or 'p' request (the
MTB needs no CPU registers).

Sections can be run alone: test_live_faults.py [crash] [gdbserver] [mtb] [calls] [top]; the
default is all but top, which tests/e2e/test_live_faults_top.py runs."""
import concurrent.futures
import os
import queue
import re
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import faulty_gdb  # noqa: E402
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
# Limits on a run on an idle machine: the client's 5 s bound on one exchange, and the rest
# (spoor's start, QEMU's answers, gdb's session), which harness.time_limit scales by the load.
CLIENT_TIMEOUT_S = 5.0
# QEMUs (each its own gdbstub) a sweep serves at once: a run mostly waits (a silent or dripping
# server is waited out), so more of them than cores: the top section took 11 s of CPU in 172 s
# with two.
WORKERS = 4
RUN_LIMIT_S = 9.0
GDBSERVER_LIMIT_S = 12.0
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

GDB_COMMANDS = ["bt", "info registers pc sp", "x/4wx $sp"]


def gdbserver(elf, port):
    """spoor gdbserver --gdb 127.0.0.1:port, asked by gdb-multiarch for GDB_COMMANDS: (exit
    status, stderr, what gdb printed or None when the server never listened), and the time."""
    start = time.monotonic()
    server = subprocess.Popen([SPOOR, "gdbserver", "-e", str(elf), "--port", "0", "--gdb",
                               f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    text = None
    try:
        line = server.stdout.readline()
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            text = harness.run_gdb(elf, int(m.group(1)), GDB_COMMANDS + ["detach"], timeout=60)
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    result = subprocess.CompletedProcess(server.args, server.returncode, text,
                                         server.stderr.read())
    server.stdout.close()
    server.stderr.close()
    return result, time.monotonic() - start


def gdb_frames(text):
    """The functions of gdb's backtrace, in order."""
    return re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+)", text or "", re.M)


def gdbserver_verdict(good, r):
    """'same', 'partial' (gdb says memory could not be read, the frames a prefix of the good
    run's), 'error' (one line, exit 2, gdb never shown a frame the good run has not), or what
    is wrong."""
    frames, want = gdb_frames(r.stdout), gdb_frames(good.stdout)
    if frames != want[:len(frames)]:
        return f"a frame the good run does not have: {frames}"
    errs = r.stderr.splitlines()
    if r.returncode == 0 and not r.stderr and r.stdout == good.stdout:
        return "same"
    if r.returncode == 2:
        if len(errs) == 1 and errs[0].startswith("spoor gdbserver: 127.0.0.1:"):
            return "error"
        return "exit 2 without a one-line error"
    if r.returncode == 0 and not r.stderr and "Cannot access memory" in (r.stdout or ""):
        return "partial"
    return f"exit {r.returncode}, stderr {r.stderr!r}, not the good run's output"


def gdb_strange_line(good, r):
    """A line of gdb's output that is neither the good run's, nor a frame (checked apart), nor
    gdb saying memory cannot be read: what a relay one reply out of step makes gdb print
    ("Invalid hex digit", a wrong value), or gdb failing. None when there is none."""
    want = set((good.stdout or "").splitlines())
    for line in (r.stdout or "").splitlines():
        if line not in want and not line.startswith("#") and "Cannot access memory" not in line:
            return line
    return None


def halted_qemu(elf, machine):
    """QEMU halted by gdb-multiarch at level_three (QEMU's gdbstub serves one client at a time:
    each worker of the run has its own)."""
    qemu = harness.Qemu(elf, machine, gdb=True).__enter__()
    harness.run_gdb(elf, qemu.gdb_port, ["break level_three", "continue", "delete",
                                         "disconnect"])
    return qemu


def sweep_with(qemus, runs, proxy_for, command):
    """command(port) for each run of runs, port that of the proxy proxy_for(gdbstub port, run)
    makes in front of one of the qemus' gdbstubs (as many runs at a time as there are qemus;
    command(port, upstream) if it takes the gdbstub's port too): a list of (run, result,
    seconds, proxy)."""
    free = queue.Queue()
    for q in qemus:
        free.put(q.gdb_port)

    def one(run):
        port = free.get()
        try:
            with proxy_for(port, run) as p:
                r, took = command(p.port) if command.__code__.co_argcount == 1 else \
                    command(p.port, port)
        finally:
            free.put(port)
        return run, r, took, p

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(qemus)) as pool:
        return list(pool.map(one, runs))


def sweep(qemus, runs, command):
    """command(port) for each (fault, at) of runs through a FaultyGdb with that fault: a list
    of (fault, at, result, seconds, proxy)."""
    done = sweep_with(qemus, runs, lambda port, run: faulty_gdb.FaultyGdb(port, run[0],
                                                                          at=run[1]), command)
    return [(fault, at, r, took, p) for (fault, at), r, took, p in done]


def fault_runs(n):
    """'close' at every request 1..n, every other fault at 1, n/2 and n."""
    runs = [("close", at) for at in range(1, n + 1)]
    for fault in faulty_gdb.FAULTS:
        if fault != "close":
            runs += [(fault, at) for at in sorted({1, (n + 1) // 2, n})]
    return runs


MUST_FIRE = ("close", "silent", "error", "duplicate", "checksum", "drip", "noreply")


def judge(label, fault, at, v, r, took, limit, proxy, ok=True, must_fire=True):
    """Prints one run's line; 1 when it failed: v not allowed for the fault, over the time
    limit, a fault that should have fired and did not, or not ok (a check of the caller's)."""
    must_fire = must_fire and fault in MUST_FIRE
    limit = harness.time_limit(CLIENT_TIMEOUT_S, limit - CLIENT_TIMEOUT_S)
    ok = ok and v in ALLOWED[fault] and took < limit and (proxy.fired or not must_fire)
    print(f"{'ok  ' if ok else 'FAIL'} {label} {fault:9} at {at:2}: {v}, exit {r.returncode}, "
          f"{took:.1f} s (limit {limit:.1f}), fired={proxy.fired}, nacks={proxy.nacks}"
          + (f": {r.stderr.strip()}" if r.stderr else ""))
    if not ok:
        print(r.stdout)
    return 0 if ok else 1


def crash_faults(elf, qemus):
    with faulty_gdb.FaultyGdb(qemus[0].gdb_port) as proxy:
        good, took = crash(elf, proxy.port)
    n = len(proxy.requests)
    if good.returncode != 0 or "level_two" not in good.stdout or n < 6:
        print(f"FAIL good run: exit {good.returncode}, {n} requests\n{good.stdout}"
              f"{good.stderr}")
        return 1
    print(f"good run: {n} requests, {len(backtrace(good.stdout.splitlines()))} frames, "
          f"{took:.1f} s")
    failed = 0
    for fault, at, r, took, p in sweep(qemus, fault_runs(n), lambda port: crash(elf, port)):
        failed += judge("crash", fault, at, verdict(good, r), r, took, RUN_LIMIT_S, p,
                        fault != "checksum" or p.nacks == 1)
    return failed


def gdbserver_faults(elf, qemus):
    """spoor gdbserver --gdb (a relay of the halted target for gdb-multiarch): every fault at
    every request of the good run for 'close', at 1, N/2 and N for the others. Each run (server
    start, gdb's session, server exit) within GDBSERVER_LIMIT_S: the good run's gdb output, exit
    0; only for "E01", gdb saying memory cannot be read, exit 0; else one line on stderr and
    exit 2. Never a frame the good run does not have."""
    with faulty_gdb.FaultyGdb(qemus[0].gdb_port) as proxy:
        good, took = gdbserver(elf, proxy.port)
    n = len(proxy.requests)
    if good.returncode != 0 or gdb_frames(good.stdout)[:2] != ["level_three", "level_two"]:
        print(f"FAIL gdbserver good run: exit {good.returncode}\n{good.stdout}{good.stderr}")
        return 1
    print(f"gdbserver good run: {n} requests, {took:.1f} s")
    failed = 0
    for fault, at, r, took, p in sweep(qemus, fault_runs(n), lambda port: gdbserver(elf, port)):
        v = gdbserver_verdict(good, r)
        strange = gdb_strange_line(good, r)
        if strange is not None:
            v = f"gdb printed {strange!r}"
        failed += judge("gdbserver", fault, at, v, r, took, GDBSERVER_LIMIT_S, p)
    return failed


# A fake MTB in the RAM of the halted calls example (QEMU has no MTB): the register block
# (POSITION, MASTER, FLOW, BASE) and a 64-byte buffer (MASTER.MASK 2) of four branch packets
# between the example's functions, the write pointer after them, MASTER.EN set.
MTB_REGS, MTB_BUFFER = 0x20100000, 0x20100100
MTB_MASTER = 0x80000002


def mtb_images(elf, tmp):
    symbols = harness.symbol_addresses(elf)
    hops = ["main", "compute_report", "level_one", "level_two", "level_three"]
    buf = b"".join(struct.pack("<II", symbols[a] + 4, symbols[b] | 1)
                   for a, b in zip(hops, hops[1:]))
    regs = struct.pack("<4I", len(buf), MTB_MASTER, 0, MTB_BUFFER)
    (tmp / "regs.bin").write_bytes(regs)
    (tmp / "buf.bin").write_bytes(buf.ljust(64, b"\0"))
    return tmp / "regs.bin", tmp / "buf.bin"


def rsp_word(port, addr, value=None):
    """Reads (value None) or writes one word of the halted target at QEMU's gdbstub, as a GDB
    client in ack mode does: the word read, or None."""
    payload = (f"m{addr:x},4" if value is None else
               f"M{addr:x},4:{struct.pack('<I', value).hex()}").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(faulty_gdb.frame(payload))
        data = b""
        while not re.search(rb"\$([^#]*)#..", data):
            chunk = sock.recv(4096)
            if not chunk:
                return None
            data += chunk
        sock.sendall(b"+")
        reply = re.search(rb"\$([^#]*)#..", data)[1]
    return struct.unpack("<I", bytes.fromhex(reply.decode()))[0] if value is None else None


def mtb_faults(elf, qemus):
    """spoor mtb --gdb --freeze on the fake MTB of the halted target: every fault at every
    request (no 'g' or 'p' among them: the MTB needs no CPU registers). Each run within RUN_LIMIT_S: the output of the --mem run over the same images
    and exit 0, with MASTER as it was afterwards; or one line "spoor mtb: 127.0.0.1:PORT: ..."
    and exit 2, which says the MTB was left stopped (or may be) whenever MASTER reads stopped
    afterwards. MASTER is set back between runs."""
    import tempfile
    from pathlib import Path
    tmp = Path(tempfile.mkdtemp())
    regs, buf = mtb_images(elf, tmp)
    for q in qemus:
        harness.run_gdb(elf, q.gdb_port, [f"restore {regs} binary {MTB_REGS:#x}",
                                          f"restore {buf} binary {MTB_BUFFER:#x}", "disconnect"])
    args = ["-e", str(elf), "--mtb-regs", hex(MTB_REGS)]
    want = subprocess.run([SPOOR, "mtb", *args, "--mem", f"{MTB_REGS:#x}:{regs}", "--mem",
                           f"{MTB_BUFFER:#x}:{buf}"], capture_output=True, text=True, timeout=60)

    def mtb(port):
        start = time.monotonic()
        r = subprocess.run([SPOOR, "mtb", *args, "--gdb", f"127.0.0.1:{port}", "--freeze"],
                           capture_output=True, text=True, timeout=60)
        return r, time.monotonic() - start

    with faulty_gdb.FaultyGdb(qemus[0].gdb_port) as proxy:
        good, took = mtb(proxy.port)
    n = len(proxy.requests)
    # the MTB needs no CPU registers: none are asked for (a server that cannot read them is
    # no obstacle)
    if want.returncode or "level_three" not in want.stdout or good.stdout != want.stdout or \
            good.returncode or sum(r[:1] == b"M" for r in proxy.requests) != 2 or \
            any(r[:1] in (b"g", b"p") for r in proxy.requests):
        print(f"FAIL mtb good run: {want.stdout}{want.stderr}\n{good.stdout}{good.stderr}\n"
              f"{proxy.requests}")
        return 1
    print(f"mtb good run: {n} requests, {took:.1f} s")
    failed = 0

    def mtb_then_master(port, upstream):
        """The run, then MASTER as the run left it (and as it was, for the next run)."""
        r, took = mtb(port)
        master = rsp_word(upstream, MTB_REGS + 4)
        if master != MTB_MASTER:
            rsp_word(upstream, MTB_REGS + 4, MTB_MASTER)
        return (r, master), took

    runs = [(fault, at) for fault in faulty_gdb.FAULTS for at in range(1, n + 1)]
    for fault, at, (r, master), took, p in sweep(qemus, runs, mtb_then_master):
        errs = r.stderr.splitlines()
        if r.returncode == 0 and r.stdout == want.stdout and not r.stderr:
            v = "same" if master == MTB_MASTER else f"MASTER left {master:#x}"
        elif r.returncode == 2 and len(errs) == 1 and \
                errs[0].startswith("spoor mtb: 127.0.0.1:") and r.stdout in ("", want.stdout):
            v = "error"
            if master != MTB_MASTER and not re.search(r"MTB (stays stopped|may be stopped)",
                                                      errs[0]):
                v = f"MASTER left {master:#x} without saying so"
        else:
            v = f"exit {r.returncode}, not the good run's output nor one line"
        failed += judge(f"mtb ({proxy.requests[at - 1][:12].decode()})", fault, at, v, r,
                        took, RUN_LIMIT_S, p)
    return failed


def main(argv):
    # top (a running target) is its own test, test_live_faults_top.py: one test each stays
    # well within ctest's limit
    sections = set(argv) or {"crash", "gdbserver", "mtb", "calls"}
    failed = 0
    if sections & {"crash", "gdbserver", "mtb"}:
        elf, machine = harness.example("calls", "m3")
        qemus = [halted_qemu(elf, machine) for _ in range(WORKERS)]
        try:
            if "crash" in sections:
                failed += crash_faults(elf, qemus)
            if "gdbserver" in sections:
                failed += gdbserver_faults(elf, qemus)
            if "mtb" in sections:
                failed += mtb_faults(elf, qemus)
        finally:
            for q in qemus:
                q.close()
    if "calls" in sections:
        failed += calls_faults()
    if "top" in sections:
        failed += top_faults()
    print("FAILED" if failed else "all passed", f"({failed} failures)")
    return 1 if failed else 0


def calls_faults():
    """spoor calls --gdb (the call recorder's ring read from the halted target): every fault at
    positions 1, N/2 and N; the good run's output or a one-line error, within the bound."""
    failed = 0
    # examples/calls_trace in mode "hold": the demo runs, then waits in calls_done()
    elf, machine = harness.example("calls_trace", "m3")
    qemus = []
    try:
        for _ in range(WORKERS):
            qemus.append(harness.Qemu(elf, machine, gdb=True,
                                      semihosting_args="arg=calls_trace,arg=hold").__enter__())
            harness.run_gdb(elf, qemus[-1].gdb_port, ["break calls_done", "continue", "delete",
                                                      "disconnect"])
        with faulty_gdb.FaultyGdb(qemus[0].gdb_port) as proxy:
            good, _ = crash(elf, proxy.port, "calls")
        n = len(proxy.requests)
        if good.returncode != 0 or "decide" not in good.stdout:
            print(f"FAIL calls good run: exit {good.returncode}\n{good.stdout}{good.stderr}")
            return 1
        runs = [("close", at) for at in range(1, n + 1)]
        runs += [(fault, at) for fault in faulty_gdb.FAULTS if fault != "close"
                 for at in sorted({1, (n + 1) // 2, n})]
        for fault, at, r, took, p in sweep(qemus, runs, lambda port: crash(elf, port, "calls")):
            v = verdict(good, r, "calls")
            # a connection that failed while the recorder was read is said as such, with
            # what was being read: never "not in the input" (the memory is there)
            reading = proxy.requests[at - 1][:1] == b"m" and fault in ("close", "noreply")
            ok = v != "partial"
            if v == "error" and fault != "error" and "not in the input" in r.stderr:
                ok = False
            if v == "error" and reading and not re.search(
                    r"the connection failed while reading the call (recorder's state|ring) "
                    r".*closed the connection", r.stderr):
                ok = False
            failed += judge("calls", fault, at, v, r, took, RUN_LIMIT_S, p, ok)
    finally:
        for q in qemus:
            q.close()
    return failed


def without_state(text):
    """spoor top's console output without the thread table's State column: on a running target
    the states are what it held when spoor halted it, which differs from run to run (which
    thread is current, which waits); every other cell must be the good run's."""
    lines, in_threads = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("=== RTOS Thread Statistics") or line.startswith("=== Whole run"):
            in_threads = True
        elif not line.startswith("|"):
            in_threads = False
        if in_threads and line.startswith("|"):
            cells = line.split("|")
            line = "|".join(cells[:5] + cells[6:])  # "", name, address, function, priority
        lines.append(line)
    return "".join(lines)


def top_faults():
    """spoor top -s STREAM --gdb on a running target: examples/sched runs in QEMU (a long run,
    never parked); the stream is test_top_sched.py's schedule of its tasks, served over TCP as
    a probe's SWO port does; top halts the target (0x03) for each new thread and each
    interval's priorities, reads, and lets it run on ('c'). Every fault at every request of the
    good run ('c' and its stop reply included). Each run within RUN_LIMIT_S: the good run's
    output and exit 0, or what the good run printed before it (intervals already shown) and
    one line "spoor top: 127.0.0.1:PORT: ..." on stderr, exit 2."""
    from test_top_live import serve_once
    from test_top_sched import HZ, INTERVAL_MS, TASKS, schedule
    elf, machine = harness.example("sched", "m3")
    symbols = harness.symbol_addresses(elf)
    stream, _ = schedule({name: symbols[f"task_{name}"] for name in TASKS})

    def top(port):
        start = time.monotonic()
        r = subprocess.run([SPOOR, "top", "-e", str(elf), "-s",
                            f"127.0.0.1:{serve_once(bytes(stream))}", "-F", str(HZ), "-I",
                            str(INTERVAL_MS), "-n", "2", "--gdb", f"127.0.0.1:{port}"],
                           capture_output=True, text=True, timeout=60)
        return r, time.monotonic() - start

    qemus = [harness.Qemu(elf, machine, gdb=True,
                          semihosting_args="arg=sched,arg=park,arg=900000").__enter__()
             for _ in range(WORKERS)]
    failed = 0
    try:
        # QEMU waits at reset: run it past the start-up code (.data, where the tasks' names
        # are, copied) into the scheduler, then leave it running
        for q in qemus:
            harness.run_gdb(elf, q.gdb_port, ["break SysTick_Handler", "continue", "delete",
                                              "detach"])
        with faulty_gdb.FaultyGdb(qemus[0].gdb_port) as proxy:
            good, took = top(proxy.port)
        n = len(proxy.requests)
        if good.returncode != 0 or good.stderr or "sensor_main" not in good.stdout or \
                proxy.requests.count(b"c") < 3:
            print(f"FAIL top good run: exit {good.returncode}, {proxy.requests}\n"
                  f"{good.stdout}{good.stderr}")
            return 1
        print(f"top good run: {n} requests ({proxy.requests.count(b'c')} 'c'), {took:.1f} s")
        runs = [(fault, at) for fault in faulty_gdb.FAULTS for at in range(1, n + 1)]
        good_out = without_state(good.stdout)
        for fault, at, r, took, p in sweep(qemus, runs, top):
            errs = r.stderr.splitlines()
            out = without_state(r.stdout)
            if r.returncode == 0 and out == good_out and not r.stderr:
                v = "same"
            elif r.returncode == 2 and len(errs) == 1 and \
                    errs[0].startswith("spoor top: 127.0.0.1:") and good_out.startswith(out):
                v = "error"
            else:
                v = f"exit {r.returncode}, not the good run's output nor one line"
            # the last request is the 'c' that leaves the target running: nothing answers it
            failed += judge(f"top ({proxy.requests[at - 1][:12].decode()})", fault, at, v, r,
                            took, RUN_LIMIT_S, p, must_fire=at < n)
    finally:
        for q in qemus:
            q.close()
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
