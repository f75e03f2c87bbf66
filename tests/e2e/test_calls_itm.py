"""spoor calls --itm: the call recorder's live ITM output (function word on stimulus port P, call
site on P+1) back into records, streamed into the same outputs as the RAM ring's.

QEMU emulates no ITM, so the ITM streams are written here by an encoder of the ITM packet
protocol (ARMv7-M ARM, appendix D4: instrumentation packets 0bAAAAA0SS, local timestamps
0b0TTT0000, overflow 0x70, synchronization 00 00 00 00 00 80) from known record sequences:

- a synthetic sequence with words of other ports in between (port 0 text, port P+2 words),
  interrupts taken between a record's two words (the handler's records complete in between),
  an overflow that lost a call-site word, one that lost a function word, and a garbled stretch
  (a reserved header and bytes up to the next synchronization). The expected records come from
  the pairing and loss rules of docs/calls.md, modelled here (`expected_live`), not from spoor.
- the records QEMU's CPU log shows for the calls_trace example's plain and irq runs (the ground
  truth of test_calls_trace.py), encoded into ITM with other ports' packets and interrupts
  between two words: the outputs (--json, --folded, --stats, --chrome, text) must be those of
  the RAM ring holding the same records (the example's own RAM image for the plain run, which
  holds all of them; for the irq run, whose ring wrapped, a ring image built here from the full
  sequence).
"""

import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import test_calls_trace as calls  # noqa: E402

PORT = 5
EXC_RETURN_MIN = 0xF0000000
SYNC = b"\x00\x00\x00\x00\x00\x80"
OVERFLOW = b"\x70"
RESERVED_HEADER = b"\x04"


def sw(port, value, size=4):
    """An instrumentation packet (ARMv7-M ARM D4.2.8): header 0bAAAAA0SS, SS 1/2/3 = 1/2/4."""
    code = {1: 1, 2: 2, 4: 3}[size]
    return bytes([(port << 3) | code]) + value.to_bytes(size, "little")


def ts_local(delta):
    """Local timestamp format 2 (D4.2.4): 0b0TTT0000, TTT 1..6."""
    assert 1 <= delta <= 6
    return bytes([delta << 4])


def fn_word(r):
    return (r["fn"] & ~1) | (1 if r["kind"] == "enter" else 0)


def site_word(r):
    return r["site"] if r["site"] >= EXC_RETURN_MIN else r["site"] | 1


def handler_blocks(records):
    """(first, last) of each outermost handler invocation: from an enter with an EXC_RETURN
    site to its exit."""
    blocks, level, start = [], 0, None
    for i, r in enumerate(records):
        exc = r["site"] >= EXC_RETURN_MIN
        if exc and r["kind"] == "enter":
            if level == 0:
                start = i
            level += 1
        elif exc and r["kind"] == "exit" and level > 0:
            level -= 1
            if level == 0:
                blocks.append((start, i))
    return blocks


def encode(records, rng, interleave=True):
    """ITM bytes whose records, paired innermost first, are `records` in order. Before every
    other outermost handler invocation the function word of the record after it is sent (an
    interrupt taken between that record's two words); other ports' packets and timestamps
    are sprinkled in between."""
    split = {}  # handler block start -> the record whose words straddle it
    for n, (a, b) in enumerate(handler_blocks(records)):
        if n % 2 == 0 and b + 1 < len(records) and records[b + 1]["site"] < EXC_RETURN_MIN:
            split[a] = (b, b + 1)
    out = bytearray(SYNC)
    straddle_end = {}
    skip = set()

    def noise():
        if not interleave:
            return
        k = rng.randrange(6)
        if k == 0:
            out.extend(sw(0, ord(rng.choice("abc\n")), 1))
        elif k == 1:
            out.extend(sw(PORT + 2, rng.getrandbits(32)))
        elif k == 2:
            out.extend(ts_local(rng.randrange(1, 7)))
        elif k == 3:
            out.extend(sw(PORT - 1, rng.getrandbits(16), 2))

    for i, r in enumerate(records):
        if i in split:
            last, outer = split[i]
            out.extend(sw(PORT, fn_word(records[outer])))
            noise()
            straddle_end[last] = outer
            skip.add(outer)
        if i not in skip:
            out.extend(sw(PORT, fn_word(r)))
            noise()
            out.extend(sw(PORT + 1, site_word(r)))
            noise()
        if i in straddle_end:
            out.extend(sw(PORT + 1, site_word(records[straddle_end[i]])))
            noise()
    return bytes(out)


def spoor_calls(*args, check=True):
    p = subprocess.run([os.environ["SPOOR_BIN"], "calls"] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def ring_image(records, tmp, state_addr, ring_addr=0x60000000):
    """A state object and a ring holding `records` oldest first (not wrapped), as --mem args."""
    ring = b"".join(struct.pack("<II", fn_word(r), site_word(r)) for r in records)
    ring += b"\x00" * 8  # one free slot: not wrapped
    (tmp / "ring.bin").write_bytes(ring)
    (tmp / "state.bin").write_bytes(struct.pack("<6I", 0x4C435053, 8, ring_addr,
                                                len(records) + 1, len(records), 3))
    return ["--mem", f"0x{state_addr:x}:{tmp / 'state.bin'}",
            "--mem", f"0x{ring_addr:x}:{tmp / 'ring.bin'}"]


def check_chrome(test, path):
    """Trace-event JSON (the Trace Event Format document): an object with traceEvents; every
    event has name, ph, pid, tid and, for B/E, a numeric ts; per track the B/E events nest
    (E closes the newest open B, ts never goes back) and all are closed at the end."""
    doc = json.loads(Path(path).read_text())
    test.assertIsInstance(doc["traceEvents"], list)
    open_ = {}
    last_ts = {}
    for e in doc["traceEvents"]:
        for key in ("name", "ph", "pid", "tid"):
            test.assertIn(key, e)
        test.assertIn(e["ph"], ("B", "E", "M"))
        if e["ph"] == "M":
            test.assertEqual(e["name"], "thread_name")
            test.assertIsInstance(e["args"]["name"], str)
            continue
        test.assertIsInstance(e["ts"], (int, float))
        track = (e["pid"], e["tid"])
        test.assertGreaterEqual(e["ts"], last_ts.get(track, 0))
        last_ts[track] = e["ts"]
        stack = open_.setdefault(track, [])
        if e["ph"] == "B":
            stack.append(e)
        else:
            test.assertTrue(stack, f"E without B: {e}")
            stack.pop()
    test.assertFalse(any(open_.values()))
    return doc


class CallsItm(unittest.TestCase):
    def test_synthetic_stream_with_losses(self):
        elf, _ = harness.example("calls_trace", "m3")
        funcs = calls.functions(elf)
        addr = {name: start for start, _, name in funcs}

        def rec(kind, fn, site):
            return {"kind": kind, "fn": addr[fn], "site": site}

        def call(fn, site, inner=()):
            return [rec("enter", fn, site)] + list(inner) + [rec("exit", fn, site)]

        s1 = addr["decide"] + 0x36  # plausible odd call sites (Thumb bit set when encoded)
        s2 = addr["getValue"] + 0x18
        s3 = addr["DEMO_Run"] + 0x28
        irq = call("SysTick_Handler", 0xFFFFFFF9, call("tick_work", addr["SysTick_Handler"] + 8,
                                                        call("calcValue", s2)))
        seq = (call("decide", s3, call("calcValue", s1)[:1] + irq + call("calcValue", s1)[1:] +
                    call("getValue", s1, call("calcValue", s2))) * 3)
        # an interrupt between the two words of decide's second record: its words straddle
        # the handler's records; noise of other ports everywhere
        rng = random.Random(9)
        stream = bytearray()
        lost = set()
        gaps = set()
        # part 1: clean, with interleaving
        n1 = len(seq) // 3
        stream += encode(seq[:n1], rng)
        # part 2: the call-site word of record n1 is lost, an overflow packet follows; the
        # function word of record n1+3 is lost, an overflow follows; its call site then comes
        # alone
        r = seq[n1]
        stream += sw(PORT, fn_word(r)) + sw(0, ord("x"), 1) + OVERFLOW
        lost.add(n1)
        stream += encode(seq[n1 + 1:n1 + 3], rng)[len(SYNC):]
        gaps.add(n1 + 1)
        r = seq[n1 + 3]
        stream += OVERFLOW + sw(PORT + 1, site_word(r))
        lost.add(n1 + 3)
        # part 3: a garbled stretch holding records n1+6 .. n1+8 (after a timestamp, which
        # releases what came before), then a synchronization packet
        stream += encode(seq[n1 + 4:n1 + 6], rng)[len(SYNC):]
        gaps.add(n1 + 4)
        stream += ts_local(1) + RESERVED_HEADER + encode(seq[n1 + 6:n1 + 9], rng, False)[6:]
        stream += SYNC
        lost.update(range(n1 + 6, n1 + 9))
        stream += encode(seq[n1 + 9:], rng)[len(SYNC):]
        gaps.add(n1 + 9)

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "calls.itm"
            path.write_bytes(bytes(stream))
            p = spoor_calls("-e", elf, "--json", "--itm", path, "--port", PORT)
            got = [json.loads(line) for line in p.stdout.splitlines()]
            want = expected_live([r for i, r in enumerate(seq) if i not in lost],
                                 [i for i in range(len(seq)) if i not in lost], gaps)
            self.assertEqual(len(got), len(want))
            for i, (g, w) in enumerate(zip(got, want)):
                where = f"record {i}: {g} vs {w}"
                self.assertEqual(g["kind"], w["kind"], where)
                self.assertEqual(int(g["fn"], 16), w["fn"], where)
                self.assertEqual(int(g["site"], 16), w["site"], where)
                self.assertEqual(g["depth"], w["depth"], where)
                self.assertEqual(g.get("after_gap", False), w["after_gap"], where)
                self.assertEqual(g.get("handler"), w["handler"] and calls.containing(
                    funcs, w["handler"])[0], where)
            # text: the gap markers name the losses
            text = spoor_calls("-e", elf, "--itm", path, "--port", PORT).stdout
            self.assertIn("--- records lost here (ITM overflow) ---", text)
            self.assertIn("--- records lost here (undecodable ITM bytes) ---", text)
            # the same bytes through standard input
            p2 = subprocess.run([os.environ["SPOOR_BIN"], "calls", "-e", str(elf), "--json",
                                 "--itm", "-", "--port", str(PORT)], input=bytes(stream),
                                capture_output=True, timeout=60)
            self.assertEqual(p2.returncode, 0, p2.stderr)
            self.assertEqual(p2.stdout.decode(), p.stdout)
            # the wrong port: no records, and a warning that the writes went to other ports
            p3 = spoor_calls("-e", elf, "--json", "--itm", path, "--port", PORT + 3)
            self.assertEqual(p3.stdout, "")
            self.assertRegex(p3.stderr, rf"spoor calls: {re.escape(str(path))}: warning: \d+ "
                             rf"writes on other stimulus ports than {PORT + 3} and {PORT + 4}, "
                             r"0 records: is --port right\?")
            # the right one: no such warning
            self.assertNotIn("other stimulus ports", p.stderr)
            # chrome output of a lossy stream is still well nested
            spoor_calls("-e", elf, "--chrome", Path(tmp) / "c.json", "--itm", path, "--port", PORT)
            check_chrome(self, Path(tmp) / "c.json")

    def test_qemu_records_through_itm_equal_the_ring(self):
        rng = random.Random(3)
        for cpu in ("m3", "m0", "m33"):
            for mode in ("plain", "irq"):
                with self.subTest(cpu=cpu, mode=mode), tempfile.TemporaryDirectory() as t:
                    tmp = Path(t)
                    elf, machine = harness.example("calls_trace", cpu)
                    out, log = tmp / "ram.bin", tmp / "cpu.log"
                    result, points = calls.run_with_log(elf, machine, mode, out, log)
                    self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                    truth = calls.ground_truth(log, points)
                    if mode == "plain":
                        base = (result.stdout + result.stderr).split("image ")[1].split()[0]
                        ring_args = ["--mem", f"{base}:{out}"]
                    else:
                        self.assertTrue(handler_blocks(truth))
                        state = calls.symbols_with_sizes(elf)["spoor_calls_state"][0]
                        ring_args = ring_image(truth, tmp, state)
                    (tmp / "calls.itm").write_bytes(encode(truth, rng))
                    live_args = ["--itm", tmp / "calls.itm", "--port", PORT]
                    for opt in ("--json", "--folded", "--stats"):
                        a = spoor_calls("-e", elf, opt, *ring_args).stdout
                        b = spoor_calls("-e", elf, opt, *live_args).stdout
                        self.assertEqual(a, b, opt)
                    self.assertEqual(len(spoor_calls("-e", elf, "--json", *live_args)
                                         .stdout.splitlines()), len(truth))
                    spoor_calls("-e", elf, "--chrome", tmp / "a.json", *ring_args)
                    spoor_calls("-e", elf, "--chrome", tmp / "b.json", *live_args)
                    self.assertEqual(check_chrome(self, tmp / "a.json"),
                                     check_chrome(self, tmp / "b.json"))
                    a = spoor_calls("-e", elf, *ring_args).stdout.splitlines()
                    b = spoor_calls("-e", elf, *live_args).stdout.splitlines()
                    if mode == "plain":
                        self.assertEqual(a, b)
                    else:
                        # live text has the context column from the first handler record on
                        first = next(i for i, line in enumerate(a)
                                     if not line.startswith("thread"))
                        self.assertEqual(a[first:], b[first:])
                        self.assertEqual([line.split("| ", 1)[1] for line in a[:first]],
                                         b[:first])


def expected_live(records, positions, gaps):
    """The documented streaming rules (docs/calls.md, "Live records"): a handler context opens
    at an enter with an EXC_RETURN call site and closes at its exit; depth counts per context
    and stays at 0 on an exit whose enter was not seen; after a loss every handler context
    is closed and every depth is 0."""
    out = []
    depth = [0]
    handlers = [None]
    for r, pos in zip(records, positions):
        gap = pos in gaps
        if gap:
            depth, handlers = [0], [None]
        exc = r["site"] >= EXC_RETURN_MIN
        if exc and r["kind"] == "enter":
            depth.append(0)
            handlers.append(r["fn"])
        if r["kind"] == "enter":
            d = depth[-1]
            depth[-1] += 1
        else:
            depth[-1] = max(depth[-1] - 1, 0)
            d = depth[-1]
        out.append({**r, "depth": d, "after_gap": gap, "handler": handlers[-1]})
        if exc and r["kind"] == "exit" and len(depth) > 1:
            depth.pop()
            handlers.pop()
    return out


if __name__ == "__main__":
    unittest.main()
