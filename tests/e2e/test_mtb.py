"""spoor mtb end to end: QEMU runs examples/mtb (Cortex-M3, M33 and M0), a virtual MTB built
from QEMU's own execution log is the ground truth.

The M0 stands in for an MTB-M0+ core: QEMU has no Cortex-M0+, and its microbit's Cortex-M0 runs
the same Armv6-M Thumb code (mtb-m0.elf is built with the target library's m0plus flavour). Its
register block is where the port puts it (the firmware's mtb_fake_area, found with nm, given to
spoor with --mtb-regs), every fault is a HardFault, and the overflow case is left out: the M0 has
neither MSPLIM nor an MPU to stop the stack.

For each case (the seed's infinite_loop, a recursion stack overflow, a jump to 0xbf00de4c,
interrupt preemption with tail-chaining, and a small buffer that wrapped):

1. QEMU runs mtb-<core>.elf with `-icount shift=0 -singlestep -d exec,nochain,int`; the
   scenario ends in a fault. tools/virtual_mtb.py turns the log into the register block and
   buffer a real MTB would hold at the fault (it stops at the fault's exception entry, where
   the fault handler freezes the MTB), the packets it wrote, and the instructions QEMU executed
   between the oldest packet's destination and the newest packet's source.
2. `spoor mtb --json` over the images (--mem) lists exactly those packets, and the default
   listing shows them in the seed's form; `spoor mtb --flow --json` lists exactly QEMU's
   instructions, PC by PC.
3. A second run with the images placed in RAM (-device loader) before the program starts:
   spoor's fault handler, configured with that register block, freezes "the MTB" and copies
   the buffer into its crash dump. `spoor mtb DUMP` prints the same packets and flow as the
   file path, and the dump's MTB record says MASTER.EN was set at the fault and is the frozen
   register block's POSITION.
4. Live: QEMU halted at reset with the images in RAM; `spoor mtb --gdb` (register block
   given with --mtb-regs) prints the same as the --mem path, listing and flow; so does the gdb
   command `mtb` (gdb/spoor.py) inside gdb-multiarch. With --freeze (through a relay that
   records the packets spoor sends): MASTER is read, written back with EN and TSTARTEN clear
   before POSITION and the buffer are read, and written back as it was after the last read, also
   when the command fails after the stop; the gdb command's `mtb --freeze` inside gdb-multiarch
   (through the relay too) prints the same as the --mem path with the same writes in the same
   order, and gdb then reads MASTER as it was before.
5. The target driver (spoor_mtb_enable/disable/freeze) in QEMU on a fake register block in RAM:
   the values it wrote, read back, are the ones the MTB rules give (MASK = log2(size) - 4,
   POSITION = offset from BASE, FLOW = watermark offset | AUTOSTOP, TSTARTEN/TSTOPEN), and bad
   configurations are refused with their status.
6. Bad input: no MTB record, POSITION outside the buffer image, MASK larger than the image,
   misaligned BASE, an all-zero buffer: one error line, exit 2; addresses outside the ELF are
   marked `@ ?:?` rows.
"""
import json
import os
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faulty_gdb  # noqa: E402
import harness  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
VIRTUAL_MTB = SOURCE / "tools" / "virtual_mtb.py"
# examples/mtb/mtb.c: the fake area at RAM + MTB_FAKE_AREA_OFFSET (0x100000) on the M3 and M33,
# the .noinit array mtb_fake_area on the M0 (16 KiB of RAM); the buffer at MTB_FAKE_BUFFER_OFFSET
AREA = {"m3": 0x20100000, "m33": 0x38100000, "m0": "mtb_fake_area"}
BUFFER = {"m3": 0x1000, "m33": 0x1000, "m0": 0x400}
CORES = ("m3", "m33", "m0")

# (name, scenario, buffer size)
CASES = [
    ("loop", "loop", 1024),
    ("overflow", "overflow", 1024),
    ("badjump", "badjump", 1024),
    ("preempt", "preempt", 1024),
    ("wrapped", "loop", 64),
]


def qemu(elf, machine, args, extra, timeout=60):
    command = harness.qemu_command(elf, machine, semihosting_args=args) + extra
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def spoor(*args, check=True):
    result = subprocess.run([SPOOR, "mtb", *map(str, args)], capture_output=True, text=True,
                            timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"spoor mtb {' '.join(map(str, args))}: {result.stderr}")
    return result


def fake_area(elf, core):
    """(register block, buffer) addresses of the fake MTB in the firmware."""
    area = AREA[core]
    if isinstance(area, str):
        area = harness.symbol_addresses(elf)[area]
    return area, area + BUFFER[core]


def loaders(regs, buf, area, buffer_at):
    return ["-device", f"loader,file={regs},addr={area:#x},force-raw=on",
            "-device", f"loader,file={buf},addr={buffer_at:#x},force-raw=on"]


class Case:
    """One scenario on one core: the virtual MTB and the two QEMU runs."""

    def __init__(self, tmp, core, name, scenario, size):
        self.core, self.name, self.size = core, name, size
        self.elf, self.machine = harness.example("mtb", core)
        self.area, self.buffer_at = fake_area(self.elf, core)
        d = Path(tmp) / f"{core}-{name}"
        d.mkdir()
        self.dir = d
        log = d / "exec.log"
        result = qemu(self.elf, self.machine, f"arg=mtb,arg={scenario},arg={d / 'first.dump'}",
                      ["-icount", "shift=0", "-singlestep", "-d", "exec,nochain,int", "-D",
                       str(log)])
        if result.returncode != 0:
            raise AssertionError(f"{core} {name}: QEMU: {result.stdout}{result.stderr}")
        self.regs, self.buf, expect = d / "regs.bin", d / "buf.bin", d / "expect.json"
        subprocess.run([sys.executable, str(VIRTUAL_MTB), "--elf", str(self.elf), "--log",
                        str(log), "--size", str(size), "--base",
                        hex(self.buffer_at), "--regs-out", str(self.regs),
                        "--buffer-out", str(self.buf), "--expect-out", str(expect)],
                       check=True, timeout=120)
        log.unlink()  # large
        self.expect = json.loads(expect.read_text())
        self.mem = ["--mtb-regs", hex(self.area),
                    "--mem", f"{self.area:#x}:{self.regs}",
                    "--mem", f"{self.buffer_at:#x}:{self.buf}"]
        self.dump = d / "mtb.dump"
        result = qemu(self.elf, self.machine, f"arg=mtb,arg={scenario},arg={self.dump}",
                      loaders(self.regs, self.buf, self.area, self.buffer_at))
        if result.returncode != 0 or not self.dump.is_file():
            raise AssertionError(f"{core} {name}: second run: {result.stdout}{result.stderr}")


def packets_of(jsonl):
    return [json.loads(line) for line in jsonl.splitlines()]


def flow_pcs(jsonl):
    rows = packets_of(jsonl)
    gaps = [r for r in rows if "pc" not in r]
    if gaps:
        raise AssertionError(f"gaps in the flow: {gaps[:3]}")
    return [r["pc"] for r in rows]


class MtbScenarios(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cases = {}
        for core in CORES:
            for name, scenario, size in CASES:
                if core == "m0" and scenario == "overflow":
                    continue  # no MSPLIM, no MPU: nothing stops the stack
                cls.cases[core, name] = Case(cls.tmp.name, core, name, scenario, size)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def each(self):
        for key, case in self.cases.items():
            with self.subTest(core=key[0], case=key[1]):
                yield case

    def test_ground_truth_is_meaningful(self):
        for c in self.each():
            self.assertTrue(c.expect["faulted"], "the scenario must end in a fault")
            self.assertGreater(len(c.expect["flow"]), 10)
            if c.name == "wrapped":
                self.assertTrue(c.expect["wrapped"])
                self.assertEqual(len(c.expect["packets"]), c.size // 8)
            last = c.expect["packets"][-1]
            self.assertEqual(last["a"], 1, "the newest packet is the fault's exception entry")
            if c.name == "badjump":
                self.assertEqual([p["dst"] for p in c.expect["packets"][-2:]][0], "0xbf00de4c")
                self.assertEqual(last["src"], "0xbf00de4c")
            if c.name == "preempt":
                returns = [p for p in c.expect["packets"] if p["src"].startswith("0xfffffff")]
                self.assertGreaterEqual(len(returns), 3)

    def test_packets_match_virtual_mtb(self):
        for c in self.each():
            got = packets_of(spoor("-e", c.elf, "--json", *c.mem).stdout)
            self.assertEqual([{k: g[k] for k in ("src", "dst", "a", "s")} for g in got],
                             c.expect["packets"])
            for g in got:  # the kind follows from the A-bit and EXC_RETURN
                exc_return = g["dst"].startswith("0xff") or g["src"].startswith("0xff")
                want = "exception_return" if exc_return else (
                    "exception_entry" if g["a"] else "branch")
                self.assertEqual(g["kind"], want)

    def test_listing_says_wrapped(self):
        # the virtual MTB's own record of POSITION.WRAP (expect["wrapped"]) is the reference:
        # a wrapped buffer's listing (and --flow, --calls) starts by saying older packets were
        # lost, as spoor calls says its ring wrapped; an unwrapped one does not
        for c in self.each():
            want = (f"--- buffer wrapped: older packets were overwritten ({c.size} bytes, "
                    f"{c.size // 8} packets of 8 bytes) ---")
            for flags in ((), ("--flow",), ("--calls",)):
                first = spoor("-e", c.elf, *flags, *c.mem).stdout.splitlines()[:1]
                if c.expect["wrapped"]:
                    self.assertEqual(first, [want], flags)
                else:
                    self.assertFalse(first and first[0].startswith("--- buffer wrapped"), flags)
            self.assertNotIn("buffer wrapped", spoor("-e", c.elf, "--json", *c.mem).stdout)

    def test_listing_in_seed_form(self):
        for c in self.each():
            text = spoor("-e", c.elf, *c.mem).stdout.splitlines()
            sources = [line[4:14] for line in text if line.startswith(">S: ")]
            dests = [line[4:14] for line in text if line.startswith(" D: ")]
            self.assertEqual(sources, [p["src"] for p in c.expect["packets"]])
            self.assertEqual(dests, [p["dst"] for p in c.expect["packets"]])
            self.assertEqual(text[0] == "Begin Trace Session", c.expect["packets"][0]["s"] == 1)
            self.assertRegex(text[-1], r"^ D: 0x[0-9a-f]{8} - \w+_Handler @ \S+:\d+$")
            if c.name == "loop":
                self.assertTrue(any(line.startswith(">S: ") and "infinite_loop @ " in line
                                    for line in text))
            if c.name == "badjump":
                self.assertIn(">S: 0xbf00de4c - Exception (or debug) Entry from 0xbf00de4c @ ?:?",
                              text)
            limited = spoor("-e", c.elf, "--limit", 3, *c.mem).stdout.splitlines()
            self.assertEqual([line for line in limited if line[:4] in (">S: ", " D: ")],
                             [line for line in text if line[:4] in (">S: ", " D: ")][-6:])

    def test_flow_is_what_qemu_executed(self):
        for c in self.each():
            got = flow_pcs(spoor("-e", c.elf, "--flow", "--json", *c.mem).stdout)
            self.assertEqual(got, c.expect["flow"])

    def test_calls_and_chrome(self):
        # preempt: IRQ 1 preempts IRQ 0 (deeper), IRQ 2 (pended at IRQ 0's priority while it
        # ran) is tail-chained after IRQ 0: ARMv7-M ARM B1.5.12 (tail-chaining)
        for core in CORES:
            c = self.cases[core, "preempt"]
            text = spoor("-e", c.elf, "--calls", *c.mem).stdout.splitlines()

            def row(name):
                rows = [line for line in text if f" {name} (" in f" {line.strip()}"
                        or line.strip().startswith(f"[") and f"] {name} (" in line]
                self.assertEqual(len(rows), 1, (name, text))
                return rows[0], len(rows[0]) - len(rows[0].lstrip())

            irq0, depth0 = row("IRQ0_Handler")
            irq1, depth1 = row("IRQ1_Handler")
            irq2, depth2 = row("IRQ2_Handler")
            self.assertTrue(irq0.strip().startswith("[exception] "))
            self.assertTrue(irq1.strip().startswith("[exception] "))
            self.assertTrue(irq2.strip().startswith("[tail-chained exception] "))
            self.assertGreater(depth1, depth0)
            self.assertEqual(depth2, depth0)
            chrome = Path(c.dir) / "calls.json"
            spoor("-e", c.elf, "--chrome", chrome, *c.mem)
            events = json.loads(chrome.read_text())["traceEvents"]
            # the track's name: one thread_name metadata event, no time
            self.assertEqual([e["name"] for e in events if e["ph"] == "M"], ["thread_name"])
            events = [e for e in events if e["ph"] != "M"]
            stack = []
            for e in events:  # balanced, properly nested, time never going back
                self.assertIn(e["ph"], ("B", "E"))
                if e["ph"] == "B":
                    stack.append(e["name"])
                else:
                    self.assertEqual(stack.pop(), e["name"])
            self.assertEqual(stack, [])
            self.assertEqual([e["ts"] for e in events], sorted(e["ts"] for e in events))
            self.assertIn("IRQ2_Handler", [e["name"] for e in events])

    def test_dump_decodes_the_same(self):
        for c in self.each():
            for extra in ([], ["--json"], ["--flow", "--json"]):
                from_dump = spoor("-e", c.elf, *extra, c.dump).stdout
                from_mem = spoor("-e", c.elf, *extra, *c.mem).stdout
                self.assertEqual(from_dump, from_mem, extra)
            record = mtb_record(c.dump.read_bytes())
            regs = struct.unpack("<4I", c.regs.read_bytes()[:16])
            self.assertEqual(record[0], regs[0])  # POSITION
            self.assertEqual(record[1], regs[1])  # MASTER as found: EN set
            self.assertTrue(record[1] & 0x80000000)
            self.assertEqual(record[3], regs[3])  # BASE

    def test_live_gdb_prints_the_same(self):
        for key in (("m3", "preempt"), ("m33", "badjump"), ("m33", "wrapped"), ("m0", "preempt")):
            c = self.cases[key]
            with self.subTest(core=key[0], case=key[1]), live(c) as port:
                for extra in ([], ["--flow"]):
                    regs_only = ["--mtb-regs", hex(c.area)]
                    got = spoor("-e", c.elf, *extra, "--gdb", f"127.0.0.1:{port}", *regs_only)
                    self.assertEqual(got.stdout, spoor("-e", c.elf, *extra, *c.mem).stdout)
                # the gdb command (gdb/spoor.py) inside gdb-multiarch prints the same
                text = harness.run_gdb(c.elf, port, [
                    f"source {SOURCE / 'gdb' / 'spoor.py'}",
                    "echo <<<\\n", f"mtb --limit 10 --mtb-regs {c.area:#x}", "echo >>>\\n",
                    "echo <<<\\n", f"mtb --flow --mtb-regs {c.area:#x}", "echo >>>\\n",
                    "echo <<<\\n", f"mtb -l 10 --mtb-regs {c.area:#x}", "echo >>>\\n",
                    "echo <<<\\n", "mtb --help", "echo >>>\\n",
                    "echo <<<\\n", f"mtb --mtb-regs {c.buffer_at + c.size:#x}", "echo >>>\\n"])
                blocks = [b.split(">>>")[0].lstrip("\n") for b in text.split("<<<")[1:]]
                self.assertEqual(blocks[0],
                                 spoor("-e", c.elf, "--limit", 10, *c.mem).stdout, text)
                self.assertEqual(blocks[1], spoor("-e", c.elf, "--flow", *c.mem).stdout)
                self.assertEqual(blocks[2], blocks[0])  # -l: the spelling of the seed era
                self.assertIn("usage: mtb", blocks[3])
                self.assertIn("--limit", blocks[3])
                self.assertIn("docs/gdbserver.md", blocks[3])  # the history in gdb's record
                # no MTB there: an error that names no flag the user did not give
                self.assertNotIn("--mem", text.split("<<<")[5], text)

    def assert_frozen(self, c, acc, master, last):
        """acc (RspRelay.accesses) holds a freeze of c's MTB: MASTER read, written with EN [31]
        and TSTARTEN [5] clear, then the block and the buffer read, then MASTER written back as
        it was (last: and nothing after it)."""
        master_at = c.area + 4
        stopped = master & ~(0x80000000 | 0x20)
        writes = [i for i, a in enumerate(acc) if a[0] == "M"]
        self.assertEqual([acc[i][1:] for i in writes],
                         [(master_at, 4, struct.pack("<I", stopped)),
                          (master_at, 4, struct.pack("<I", master))], acc)
        stop, restart = writes

        def reads(lo, hi):
            return [i for i, a in enumerate(acc) if a[0] == "m" and a[1] < hi and a[1] + a[2] > lo]
        self.assertLess(reads(master_at, master_at + 4)[0], stop)  # MASTER read first
        if last:
            self.assertEqual(len(acc) - 1, restart, "nothing after the restore")
        buffer = reads(c.buffer_at, c.buffer_at + c.size)
        after_stop = [i for i in reads(c.area, c.area + 4) if i > stop]
        self.assertTrue(buffer and after_stop, acc)
        self.assertTrue(all(stop < i < restart for i in buffer + after_stop[:1]), acc)

    def test_live_freeze_lost_connection(self):
        # through tests/e2e/faulty_gdb.py: (1) the stop write reaches QEMU but its answer is
        # lost: spoor must not say it could not stop the MTB (it did: MASTER reads stopped
        # afterwards) but that it may be stopped and cannot be restarted; (2) the connection
        # closes while the buffer is read after the stop: one line that says so and that the
        # MTB stays stopped, without advice to give --mem
        c = self.cases["m3", "preempt"]
        master_at = c.area + 4
        _, master, _, _ = struct.unpack("<4I", c.regs.read_bytes()[:16])
        stopped = master & ~(0x80000000 | 0x20)
        for fault, match, want in (
                ("noreply", r"^M", f"--freeze: the stop (MTB_MASTER {master:#010x} -> "
                                   f"{stopped:#010x}) got no answer: the MTB may be stopped, and "
                                   "cannot be restarted: 127.0.0.1:"),
                ("close", rf"^m{c.buffer_at:x}", f"the MTB stays stopped (MTB_MASTER "
                                                 f"{master:#010x} not written back)")):
            with self.subTest(fault=fault), live(c) as port:
                with faulty_gdb.FaultyGdb(port, fault, match=match) as proxy:
                    got = spoor("-e", c.elf, "--gdb", f"127.0.0.1:{proxy.port}", "--mtb-regs",
                                hex(c.area), "--freeze", check=False)
                self.assertTrue(proxy.fired, proxy.requests)
                MtbBadInput.assert_error(self, got, want)
                self.assertNotIn("--mem", got.stderr)
                text = harness.run_gdb(c.elf, port, [f"x/1wx {master_at:#x}"])
                word = re.search(rf"{master_at:#x}(?: <[\w+]+>)?:\s+(0x\w+)", text)
                self.assertIsNotNone(word, text)
                self.assertEqual(int(word[1], 16), stopped, text)

    def test_live_freeze(self):
        for key in (("m3", "preempt"), ("m33", "badjump"), ("m0", "loop")):
            c = self.cases[key]
            regs_at, master_at = c.area, c.area + 4
            position, master, _, base = struct.unpack("<4I", c.regs.read_bytes()[:16])
            self.assertTrue(master & 0x80000000, "the virtual MTB's MASTER has EN set")
            stopped = master & ~(0x80000000 | 0x20)
            with self.subTest(core=key[0], case=key[1]), live(c) as port:
                with RspRelay(port) as relay:
                    got = spoor("-e", c.elf, "--flow", "--gdb", f"127.0.0.1:{relay.port}",
                                "--mtb-regs", hex(regs_at), "--freeze")
                self.assertEqual(got.stdout, spoor("-e", c.elf, "--flow", *c.mem).stdout)
                self.assert_frozen(c, relay.accesses(), master, last=True)
                # an error after the stop (the --chrome file cannot be opened) restores too
                with RspRelay(port) as relay:
                    bad = spoor("-e", c.elf, "--gdb", f"127.0.0.1:{relay.port}", "--mtb-regs",
                                hex(regs_at), "--chrome", c.dir / "no" / "such" / "dir.json",
                                "--freeze", check=False)
                self.assertEqual(bad.returncode, 2)
                self.assertIn("cannot open", bad.stderr)
                self.assertEqual([a[1:] for a in relay.accesses() if a[0] == "M"],
                                 [(master_at, 4, struct.pack("<I", stopped)),
                                  (master_at, 4, struct.pack("<I", master))])
                # the gdb command's --freeze, through the relay: the same order of writes and
                # reads; then gdb-multiarch reads the block (its exit ends QEMU): MASTER as it
                # was, the rest untouched
                with RspRelay(port) as relay:
                    text = harness.run_gdb(c.elf, relay.port, [
                        f"source {SOURCE / 'gdb' / 'spoor.py'}", "echo <<<\\n",
                        f"mtb --freeze --limit 10 --mtb-regs {regs_at:#x}", "echo >>>\\n",
                        f"x/4wx {regs_at:#x}"])
                self.assertEqual(text.split("<<<")[1].split(">>>")[0].lstrip("\n"),
                                 spoor("-e", c.elf, "--limit", 10, *c.mem).stdout, text)
                self.assert_frozen(c, relay.accesses(), master, last=False)
                words = re.search(rf"{regs_at:#x}(?: <[\w+]+>)?:" + r"\s+(0x\w+)" * 4, text)
                self.assertIsNotNone(words, text)
                self.assertEqual([int(w, 16) for w in words.groups()],
                                 [position, master, 0, base])
        bad = spoor("-e", c.elf, "--freeze", *c.mem, check=False)
        self.assertEqual((bad.returncode, bad.stderr.strip()),
                         (2, "spoor mtb: --freeze stops a live MTB: it needs --gdb HOST:PORT"))


class RspRelay:
    """A TCP relay between one GDB client and a GDB server that records, in order, the packets
    the client sent (GDB manual, "Overview": $payload#checksum; 'm'/'M' payloads need no
    escapes)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.packets = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.thread.join(timeout=30)
        self.listener.close()
        return False

    def _run(self):
        self.listener.settimeout(30)
        client, _ = self.listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        pending = b""
        with client, upstream:
            while True:
                ready, _, _ = select.select([client, upstream], [], [], 30)
                if not ready:
                    return
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return  # one side closed: the session is over
                    (upstream if s is client else client).sendall(data)
                    if s is client:
                        pending = self._packets(pending + data)

    def _packets(self, data):
        while True:
            start = data.find(b"$")
            end = data.find(b"#", start)
            if start < 0:
                return b""
            if end < 0 or len(data) < end + 3:
                return data[start:]
            self.packets.append(data[start + 1:end].decode("latin-1"))
            data = data[end + 3:]

    def accesses(self):
        """('m', addr, len, None) and ('M', addr, len, bytes) in the order they were sent."""
        out = []
        for p in self.packets:
            m = re.fullmatch(r"([mM])([0-9a-fA-F]+),([0-9a-fA-F]+)(?::([0-9a-fA-F]*))?", p)
            if m:
                out.append((m[1], int(m[2], 16), int(m[3], 16),
                            bytes.fromhex(m[4]) if m[4] is not None else None))
        return out


class MtbDriver(unittest.TestCase):
    def test_register_writes(self):
        # target/include/spoor/mtb.h: SPOOR_MTB_BAD_SIZE 1, TOO_LARGE 2, MISALIGNED 3,
        # NOT_IN_SRAM 4. On the M0 this is the Armv6-M build of the driver (the block is
        # mtb_fake_area + 0x40 there, the same offsets from it).
        for core in CORES:
            with self.subTest(core=core):
                elf, machine = harness.example("mtb", core)
                result = qemu(elf, machine, "arg=mtb,arg=driver", [])
                out = result.stdout + result.stderr  # semihosting console output
                mask = 1024 .bit_length() - 1 - 4  # 1 KiB buffer
                junk = 0xFFFFFFF0  # what the block held: TSTART/TSTOP stay when not asked for
                self.assertIn(f"plain status 0 POSITION 0x00000000 MASTER {0x80000000 | mask:#010x}"
                              f" FLOW 0x00000000 TSTART {junk:#010x} TSTOP {junk:#010x}", out)
                self.assertIn("buffer cleared\n", out)
                self.assertIn(f"disabled status 0 POSITION 0x00000000 MASTER {mask:#010x}", out)
                watermark_flow = (1024 + 512) | 1  # offset of the watermark | AUTOSTOP
                master = mask | (1 << 5) | (1 << 6)  # TSTARTEN, TSTOPEN; EN waits for DWT
                self.assertIn(f"watermark status 0 POSITION 0x00000400 MASTER {master:#010x} "
                              f"FLOW {watermark_flow:#010x} TSTART 0x00000001 TSTOP 0x00000002",
                              out)
                self.assertIn(f"frozen {master:#010x} now {master:#010x}", out)
                self.assertIn("bad size 1 too large 2 misaligned 3 before base 4", out)


def mtb_record(dump):
    """POSITION, MASTER, FLOW, BASE of the dump's MTB record (docs/dump-format.md: records of
    u16 type, u16 flags, u32 length after the header of header_size bytes; MTB is type 6)."""
    offset = struct.unpack_from("<H", dump, 6)[0]
    while offset + 8 <= len(dump):
        rtype, _, length = struct.unpack_from("<HHI", dump, offset)
        if rtype == 6:
            return struct.unpack_from("<4I", dump, offset + 8)
        if rtype == 0:
            break
        offset += 8 + ((length + 3) & ~3)
    raise AssertionError("no MTB record in the dump")


class live:
    """QEMU halted at reset with the images in RAM, its gdbstub on a free port."""

    def __init__(self, case):
        self.case = case

    def __enter__(self):
        c = self.case
        port = harness.free_port()
        command = harness.qemu_command(c.elf, c.machine, gdb_port=port) + loaders(
            c.regs, c.buf, c.area, c.buffer_at)
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if harness._port_is_listening(port):
                return port
            time.sleep(0.05)
        self.__exit__()
        raise AssertionError("QEMU did not open its gdb port")

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()
        return False


class MtbBadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)
        self.elf, _ = harness.example("mtb", "m3")

    def tearDown(self):
        self.tmp.cleanup()

    def run_images(self, position, master, base, buffer, buffer_at=None):
        regs, buf = self.d / "regs.bin", self.d / "buf.bin"
        regs.write_bytes(struct.pack("<4I", position, master, 0, base))
        buf.write_bytes(buffer)
        return spoor("-e", self.elf, "--mem", f"0xE0043000:{regs}", "--mem",
                     f"{buffer_at if buffer_at is not None else base:#x}:{buf}", check=False)

    def assert_error(self, result, words):
        self.assertEqual(result.returncode, 2, result.stdout)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn(words, lines[0])

    def test_bad_registers_and_buffers(self):
        packet = struct.pack("<II", 0x100, 0x200 | 1)
        # POSITION outside the image: MASK 2 (64 bytes), pointer 0x48 puts the buffer at +0x40
        self.assert_error(self.run_images(0x48, 2, 0x20100000, packet * 8),
                          "cannot read the 64-byte trace buffer at 0x20100040")
        # MASK larger than the image: 1 KiB asked, 64 bytes given
        self.assert_error(self.run_images(0x8, 6, 0x20100000, packet * 8),
                          "cannot read the 1024-byte trace buffer")
        self.assert_error(self.run_images(0x8, 2, 0x20100004, packet * 8), "not 8-byte aligned")
        self.assert_error(self.run_images(0x4, 2, 0x20100000, bytes(64)), "only zeros")
        self.assert_error(self.run_images(0x0, 2, 0x20100000, packet * 8), "empty")
        self.assert_error(self.run_images(0x0, 31, 0x20100000, packet * 8), "MASK 31")

    def test_addresses_outside_the_elf_are_marked(self):
        words = struct.pack("<IIII", 0x90000000, 0x90000010 | 1, 0x90000020, 0x90000000)
        # MASK 1: 32 bytes, two packets written (POSITION 0x10, not wrapped)
        result = self.run_images(0x10, 0x80000001, 0x20100000, words + bytes(16))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(">S: 0x90000000 - 0x90000000 @ ?:?", result.stdout)
        flow = spoor("-e", self.elf, "--flow", "--mem",
                     f"0xE0043000:{self.d / 'regs.bin'}", "--mem",
                     f"0x20100000:{self.d / 'buf.bin'}").stdout
        self.assertIn("unknown: code not readable", flow)

    def test_freeze_against_a_read_only_server(self):
        # spoor gdbserver serves images read-only: every 'M' is answered E01. A running MTB
        # (EN set) cannot be stopped: one error line; a stopped one needs no write and decodes.
        words = struct.pack("<IIII", 0x90000000, 0x90000010 | 1, 0x90000020, 0x90000000)
        (self.d / "buf.bin").write_bytes(words + bytes(16))
        regs_json = self.d / "regs.json"
        regs_json.write_text(json.dumps({**{f"r{i}": "0x0" for i in range(13)},
                                         "sp": "0x20001000", "lr": "0xffffffff",
                                         "pc": "0x100", "xpsr": "0x01000000"}))
        for master, want in ((0x80000001, "cannot be written (E01)"), (0x00000001, None)):
            (self.d / "regs.bin").write_bytes(struct.pack("<4I", 0x10, master, 0, 0x20100000))
            server = subprocess.Popen(
                [SPOOR, "gdbserver", "-e", self.elf, "--port", "0", "--regs", regs_json,
                 "--mem", f"0xE0043000:{self.d / 'regs.bin'}",
                 "--mem", f"0x20100000:{self.d / 'buf.bin'}"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                line = server.stdout.readline()
                port = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", line)
                self.assertIsNotNone(port, line)
                got = spoor("-e", self.elf, "--gdb", f"127.0.0.1:{port[1]}", "--freeze",
                            check=False)
            finally:
                server.kill()
                server.communicate()
            if want:
                self.assert_error(got, f"--freeze: cannot stop the MTB: 127.0.0.1:{port[1]}: "
                                       f"target memory at 0xe0043004 (4 bytes) {want}")
            else:
                self.assertEqual(got.returncode, 0, got.stderr)
                self.assertIn(">S: 0x90000000 - 0x90000000 @ ?:?", got.stdout)

    def test_dump_without_mtb(self):
        # a crash dump of the crash example has no MTB record
        elf, machine = harness.example("crash", "m3")
        dump = self.d / "crash.dump"
        result = qemu(elf, machine, f"arg=crash,arg=undef,arg={dump}", [])
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assert_error(spoor("-e", elf, dump, check=False), "no MTB record")


if __name__ == "__main__":
    unittest.main(verbosity=2)
