"""spoor crash and spoor gdbserver on a debugger snapshot, against gdb-multiarch's own bt.

A firmware runs in QEMU and stops at a breakpoint on the first instruction of a function
(deep in a call chain, and inside an interrupt handler; `break *FUNC`, because at `break FUNC`
gdb hides an inlined frame it stopped in). gdb takes `bt` there (the reference) and saves the registers and RAM
(the snapshot). Then:
  1. `spoor crash --json --regs regs.json --mem RAM:ram.bin` must list the same functions as
     gdb's bt (an exception row where gdb says <signal handler called>);
  2. `spoor gdbserver` serving the snapshot, asked by a second gdb-multiarch for `bt`, must
     give the same functions again (the protocol and memory plumbing are right)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]


def snapshot(elf, machine, stop_at, tmp):
    syms = harness.symbol_addresses(elf)
    ram_lo = syms["__stack_bottom"] & ~0xfff
    ram_hi = syms["__heap_start"] if "__heap_start" in syms else syms["__bss_end"]
    ram = os.path.join(tmp, "ram.bin")
    session = harness.debug_example(elf, machine, [
        f"break *{stop_at}", "continue", "bt", "info registers",
        f"dump binary memory {ram} {ram_lo:#x} {ram_hi:#x}"])
    text = session.gdb_output
    reference = harness.parse_backtrace(text)
    regs = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+(0x[0-9a-f]+)\s", line)
        if m and m.group(1) in REGS:
            regs[m.group(1)] = m.group(2)
    missing = [r for r in REGS if r not in regs]
    if missing:
        raise harness.HarnessError(f"gdb did not show registers {missing}:\n{text}")
    path = os.path.join(tmp, "regs.json")
    with open(path, "w") as f:
        json.dump(regs, f)
    return reference, path, f"{ram_lo:#x}:{ram}"


def spoor_crash_functions(elf, regs, mem):
    r = subprocess.run([SPOOR, "crash", "--json", "-e", str(elf), "--regs", regs, "--mem", mem],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise harness.HarnessError(f"spoor crash failed ({r.returncode}): {r.stderr}")
    report = json.loads(r.stdout)
    names = []
    for frame in report["backtrace"]:
        if frame["kind"] == "exception":
            names.append("<signal handler called>")
        else:
            names.append(frame["function"] or "??")
    return names, report


def gdb_via_spoor_server(elf, regs, mem):
    server = subprocess.Popen([SPOOR, "gdbserver", "-e", str(elf), "--port", "0", "--regs", regs,
                               "--mem", mem], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not m:
            raise harness.HarnessError(f"spoor gdbserver said {line!r} {server.stderr.read()}")
        text = harness.run_gdb(elf, int(m.group(1)), ["bt", "detach"])
        server.wait(timeout=60)
        if server.returncode != 0:
            raise harness.HarnessError(f"spoor gdbserver exit {server.returncode}: "
                                       f"{server.stderr.read()}")
        return harness.parse_backtrace(text)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


CASES = [("calls", "m3", "level_three"), ("calls", "m3", "tick_work"),
         ("calls", "m3", "irq_work"), ("calls", "m33", "level_three"),
         ("calls", "m33", "tick_work"), ("calls", "m4f", "irq_work"),
         ("calls", "m0", "level_three"), ("calls", "m0", "tick_work")]


def run_case(case, results):
    program, cpu, stop_at = case
    elf, machine = harness.example(program, cpu)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            reference, regs, mem = snapshot(elf, machine, stop_at, tmp)
            got, report = spoor_crash_functions(elf, regs, mem)
            served = gdb_via_spoor_server(elf, regs, mem)
        except Exception as e:  # noqa: BLE001 - reported per case
            results[case] = (False, f"error: {e}")
            return
    # gdb stops at main ("backtrace past-main" is off); spoor goes on to the reset handler.
    if "main" in got:
        got = got[:got.index("main") + 1]
    ok = got == reference and served == reference
    methods = [f.get("method") for f in report["backtrace"]]
    results[case] = (ok, f"gdb live:        {reference}\n    spoor crash:     {got}\n"
                         f"    methods:         {methods} (stop: {report['stop']})\n"
                         f"    gdb via spoor:   {served}")


if __name__ == "__main__":
    results = {}
    threads = [threading.Thread(target=run_case, args=(c, results)) for c in CASES]
    for i in range(0, len(threads), 2):  # two at a time: two cores
        for t in threads[i:i + 2]:
            t.start()
        for t in threads[i:i + 2]:
            t.join()
    failed = 0
    for case in CASES:
        ok, detail = results[case]
        print(f"{'ok  ' if ok else 'FAIL'} {'-'.join(case[:2])} at {case[2]}\n    {detail}")
        failed += not ok
    print(f"{len(CASES) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
