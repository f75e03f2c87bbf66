"""spoor calls on records with a timestamp and a context id (16-byte records).

calls_trace_ts-<core>.elf is the calls_trace example with the recorder built with
SPOOR_CALLS_TIME=2 (SysTick's current value, counting down in 24 bits) and
SPOOR_CALLS_CONTEXT=1 (IPSR). SysTick runs free in it; in irq mode device interrupt 3 fires
inside instrumented calls. QEMU emulates SysTick (its counter follows the virtual clock, which
-icount ties to the instructions executed); it does not emulate the DWT cycle counter, which is
why the SysTick variant is the one tested here.

Ground truth: QEMU's CPU log (test_calls_trace.py's hook entries and slot claims) plus the two
instructions of each hook that store the record's third and fourth words (`str rX, [rY, #8]`
and `#12]`, found with objdump): the register stored there is the SysTick value the hook read
and the IPSR it recorded; the IPSR is also checked against XPSR at the hook's entry. From those
values this test computes the times (ticks since the first record shown, the 24-bit down count
unwrapped), the per-function calls and inclusive/exclusive times, and the Chrome trace events
it expects, and compares them with spoor's --json, --stats and --chrome output; the Chrome file
is also checked as trace-event JSON (required fields, B/E nesting per track).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import test_calls_itm as itm  # noqa: E402
import test_calls_trace as calls  # noqa: E402

RECORD_SIZE = 16


def store_points(elf):
    """{pc: (key, register)} of the hooks' stores of the timestamp (+8) and context (+12)."""
    stores = {}
    for hook in ("__cyg_profile_func_enter", "__cyg_profile_func_exit"):
        out = subprocess.run([harness.require_tool(calls.OBJDUMP), "-d", str(elf),
                              f"--disassemble={hook}"], check=True, capture_output=True,
                             text=True).stdout
        found = set()
        for line in out.splitlines():
            m = re.match(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{4}\s?)+\s+str(?:\.w)?\s+r(\d+), "
                         r"\[(?:r\d+|ip), #(8|12)\]", line)
            if m:
                key = "time" if m.group(3) == "8" else "ctx"
                stores[int(m.group(1), 16)] = (key, int(m.group(2)))
                found.add(key)
        assert found == {"time", "ctx"}, out
    return stores


def unwrap(records):
    acc, out = 0, []
    for i, r in enumerate(records):
        if i:
            acc += (records[i - 1]["time"] - r["time"]) & 0xFFFFFF
        out.append(acc)
    return out


def model_stats(records, times):
    """calls, inclusive, exclusive per function address: per context (IPSR) a call stack; an
    exit with nothing open (the ring starts inside that call) is skipped."""
    stats, stacks = {}, {}
    for r, t in zip(records, times):
        stack = stacks.setdefault(r["ipsr"], [])
        if r["kind"] == "enter":
            stats.setdefault(r["fn"], [0, 0, 0])[0] += 1
            stack.append([r["fn"], t, 0])
        elif stack:
            fn, start, children = stack.pop()
            incl = t - start
            if stack:
                stack[-1][2] += incl
            s = stats.setdefault(fn, [0, 0, 0])
            s[1] += incl
            s[2] += incl - children
    return stats


def model_chrome(records, times, name_of):
    """(ph, name, ts, context) of the B/E events: E only for a B written; the calls left
    open get an E at the last timestamp."""
    events, open_ = [], {}
    for r, t in zip(records, times):
        n = open_.get(r["ipsr"], [])
        open_[r["ipsr"]] = n
        if r["kind"] == "enter":
            n.append(r)
            events.append(("B", name_of(r["fn"]), t, r["ipsr"]))
        elif n:
            n.pop()
            events.append(("E", name_of(r["fn"]), t, r["ipsr"]))
    for ipsr, n in open_.items():
        events += [("E", "(no exit recorded)", times[-1], ipsr)] * len(n)
    return events


class CallsTime(unittest.TestCase):
    def test_timestamps_and_context_ids(self):
        for cpu in ("m3", "m0", "m33"):
            for mode in ("plain", "irq"):
                with self.subTest(cpu=cpu, mode=mode), tempfile.TemporaryDirectory() as t:
                    self.check(cpu, mode, Path(t))

    def check(self, cpu, mode, tmp):
        elf, machine = harness.example("calls_trace_ts", cpu)
        stores = store_points(elf)
        out, log = tmp / "ram.bin", tmp / "cpu.log"
        # shift=5: 32 ns of virtual time an instruction, about one SysTick tick at 25 MHz
        result, points = calls.run_with_log(elf, machine, mode, out, log, extra=stores, shift=5)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        truth = calls.ground_truth(log, points, stores)
        base = re.search(r"image (0x[0-9a-f]+)", result.stdout + result.stderr).group(1)
        args = ["--mem", f"{base}:{out}"]
        capacity = calls.symbols_with_sizes(elf)["call_ring"][1] // RECORD_SIZE
        got = [json.loads(line) for line in itm.spoor_calls("-e", elf, "--json", *args)
               .stdout.splitlines()]
        if mode == "plain":
            self.assertEqual(len(got), len(truth))
        else:
            self.assertGreater(len(truth), capacity)
            self.assertGreaterEqual(len(got), 0.9 * capacity)
        tail = truth[len(truth) - len(got):]
        times = unwrap(tail)
        self.assertGreater(times[-1], len(tail) // 4)  # the clock moved
        for i, (g, r) in enumerate(zip(got, tail)):
            where = f"record {i}: {g} vs {r}"
            self.assertEqual((g["kind"], int(g["fn"], 16), int(g["site"], 16)),
                             (r["kind"], r["fn"], r["site"]), where)
            self.assertEqual(r["ctx"], r["ipsr"], where)  # the recorder stored IPSR
            self.assertEqual(g["context"], r["ipsr"], where)
            self.assertEqual(g["time"], times[i], where)
        if mode == "irq":
            self.assertTrue(any(r["ipsr"] == 16 + 3 for r in tail))
        funcs = calls.functions(elf)

        def name_of(fn):
            name, off = calls.containing(funcs, fn)
            return name if not off else f"{name}+0x{off:x}"

        # --stats: calls, inclusive and exclusive ticks per function
        want = model_stats(tail, times)
        rows = {}
        for line in itm.spoor_calls("-e", elf, "--stats", *args).stdout.splitlines()[1:-1]:
            n, incl, excl, name = line.split()
            rows[name] = (int(n), int(incl), int(excl))
        self.assertEqual(rows, {name_of(fn): tuple(v) for fn, v in want.items()})
        self.assertTrue(any(v[1] > 0 for v in want.values()))
        # --chrome: valid trace-event JSON whose B/E events carry the recorded times
        itm.spoor_calls("-e", elf, "--chrome", tmp / "trace.json", *args)
        doc = itm.check_chrome(self, tmp / "trace.json")
        label = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
        events = [(e["ph"], e["name"], e["ts"], label[e["tid"]])
                  for e in doc["traceEvents"] if e["ph"] != "M"]
        expect = [(ph, name, ts, "thread" if ipsr == 0 else f"ctx {ipsr}")
                  for ph, name, ts, ipsr in model_chrome(tail, times, name_of)]
        self.assertEqual(sorted(events[len(events) - sum(1 for e in expect if
                                                          e[1] == "(no exit recorded)"):]),
                         sorted(e for e in expect if e[1] == "(no exit recorded)"))
        self.assertEqual([e for e in events if e[1] != "(no exit recorded)"],
                         [e for e in expect if e[1] != "(no exit recorded)"])


if __name__ == "__main__":
    unittest.main()
