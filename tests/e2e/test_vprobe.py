"""spoor vprobe (the virtual trace probe) against QEMU's own log, packet by packet.

examples/vprobe (vprobe_sched-m3.elf, mps2-an385) configures ITM and DWT as for a real probe:
comparator 1 watches `current_thread` (data value on write), exception trace, PC samples every
1024 cycles, ports 0 and 1 enabled. `spoor vprobe --gdb 0` runs it once (QEMU's register log,
-d cpu,nochain,int), writing the stream to a file and serving it to a `spoor itm -j tcp:...`
client that connected before QEMU started.

Ground truth, computed here without the probe's code from QEMU's full log of the same run (QEMU
run again with -d exec,nochain,int,cpu: -icount makes the runs the same): instructions are the
"Trace" lines that ran (a block followed by "rewound"/"Stopped execution" of its PC did not run
and is logged again), their index is the cycle; the stores are found with
arm-none-eabi-objdump's disassembly (mnemonic and operand text) evaluated on the logged
registers; exceptions are the log's "...taking pending ... exception N" lines, returns its
"Exception return ... previous exception N" lines.

Checked:
1. every store to `current_thread` is one dwt_data packet (comparator 1, 4 bytes, the value
   stored), in order, dated by `spoor itm` at the cycle after the store;
2. stimulus port writes: `spoor itm -c 0,%c` prints exactly the bytes the firmware stored to
   port 0, and port 1's packets are its 32-bit values in order;
3. exception trace: as many `enter N` packets as the log's entries of N, as many `exit N`, and
   each at the cycle of the entry;
4. PC samples: every 1024 cycles from the DWT_CTRL write, each the PC QEMU was at;
5. the stream over TCP decodes to the same packets as the file;
6. --tpiu: the same packets through `spoor itm --tpiu`; a second run gives the same stream
   (-icount is deterministic);
7. --swo-baud 115200: overflow packets in the stream, packets dropped, and the dwt_data packets
   that went out plus the dropped ones are the log's stores;
8. the store decoder (tools/vprobe_stores.py) classifies every instruction of every example
   ELF as objdump does (store or not; base register and offset of immediate-offset stores);
9. `spoor vprobe` usage errors: one line, exit 2;
10. `spoor top -j` over the stream: each thread's CPU share within 0.5 points of the log's
   schedule and the exact number of switches -- skipped while `spoor top` is not a command of
   this spoor (spoor --help).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TICKS = 12
SHIFT = 5
PERIOD = 16 * 64  # DWT_CTRL.POSTPRESET = 15, CYCTAP = 0
DWT_CTRL, ITM_STIM, ITM_STIM_END = 0xE0001000, 0xE0000000, 0xE0000080
DWT_FUNCTION1 = 0xE0001038  # comparator 1 starts watching when the firmware writes it

TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
CANCEL = re.compile(r"^(?:cpu_io_recompile: rewound execution of TB to |"
                    r"Stopped execution of TB chain before 0x[0-9a-f]+ \[)([0-9a-f]+)")
REG = re.compile(r"R(\d\d)=([0-9a-f]{8})")
ENTRY = re.compile(r"^\.\.\.taking pending (?:non)?secure exception (\d+)")
RETURN = re.compile(r"^Exception return: magic PC [0-9a-f]+ previous exception (\d+)")
REGNAMES = {"sp": 13, "lr": 14, "pc": 15, "ip": 12, "fp": 11, "sl": 10}


def objdump(elf):
    """{pc: (mnemonic, operands)} of the ELF's code."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    insns = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+[0-9a-f]{4}(?: [0-9a-f]{4})?\s+(\S+)\s*([^;@]*)", line)
        if m and not m.group(2).startswith("."):
            insns[int(m.group(1), 16)] = (m.group(2), m.group(3).strip())
    return insns


def reg(name):
    return REGNAMES[name] if name in REGNAMES else int(name[1:])


def store_of(mnemonic, operands, regs):
    """(address, size, value) of a single-register store from objdump's text, None for other
    instructions; stores to the stack (push, stm) are left out (nothing traced is there)."""
    if not mnemonic.startswith("str") or mnemonic.startswith("strex") or mnemonic.startswith(
            "strd"):
        return None
    size = 1 if mnemonic.startswith("strb") else 2 if mnemonic.startswith("strh") else 4
    m = re.match(r"^(\w+), \[(\w+)(?:, #(-?\d+)|, (\w+)(?:, lsl #(\d))?)?\](!?)(?:, #(-?\d+))?$",
                 operands)
    if not m:
        raise AssertionError(f"operands not understood: {mnemonic} {operands}")
    rt, rn = reg(m.group(1)), reg(m.group(2))
    address = regs[rn]
    if m.group(3):
        address += int(m.group(3))
    elif m.group(4):
        address += regs[reg(m.group(4))] << int(m.group(5) or 0)
    return address & 0xFFFFFFFF, size, regs[rt] & ((1 << (8 * size)) - 1)


def ground_truth(log, insns):
    """pcs[i] = the PC of instruction i; stores [(i, address, size, value)]; exception entries
    [(i, number)] (i = instructions retired before it) and returns {number: count}."""
    pcs, stores, entries, returns = [], [], [], {}
    pending = None  # (pc, regs) of the last logged instruction, not yet known to have run

    def retire():
        pc, regs = pending
        index = len(pcs)
        pcs.append(pc)
        mnemonic, operands = insns.get(pc, ("?", ""))
        if regs is not None:
            s = store_of(mnemonic, operands, regs)
            if s:
                stores.append((index, *s))

    with open(log, encoding="latin-1") as f:
        for line in f:
            m = TRACE.match(line)
            if m:
                if pending:
                    retire()
                pc = int(m.group(1), 16)
                pending = (pc, [0] * 16 if insns.get(pc, ("",))[0].startswith("str") else None)
                continue
            if line.startswith("R") and pending and pending[1] is not None:
                for n, v in REG.findall(line):
                    pending[1][int(n)] = int(v, 16)
                continue
            m = CANCEL.match(line)
            if m:
                if pending and pending[0] == int(m.group(1), 16):
                    pending = None
                continue
            m = ENTRY.match(line)
            if m:
                if pending:
                    retire()
                    pending = None
                entries.append((len(pcs), int(m.group(1))))
                continue
            m = RETURN.match(line)
            if m:
                returns[int(m.group(1))] = returns.get(int(m.group(1)), 0) + 1
    if pending:
        retire()
    return pcs, stores, entries, returns


def interval_truth(switches, end, lo, hi):
    """({tcb: cycles it ran in [lo, hi)}, {tcb: switches to it in [lo, hi)}) of a schedule
    [(cycle, tcb)] that ends at cycle end."""
    share, count = {}, {}
    for n, (t, tcb) in enumerate(switches):
        t_end = switches[n + 1][0] if n + 1 < len(switches) else end
        overlap = min(hi, t_end) - max(lo, t)
        if overlap > 0:
            share[tcb] = share.get(tcb, 0) + overlap
        if lo <= t < hi:
            count[tcb] = count.get(tcb, 0) + 1
    return share, count


def spoor_itm(*args, source):
    result = subprocess.run([SPOOR, "itm", *args, str(source)], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"spoor itm {args}: {result.stderr}")
    return result.stdout


def packets(jsonl, drop=("offset", "stream")):
    rows = [json.loads(line) for line in jsonl.splitlines()]
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


def wait_listening(port, process, what):
    """Waits until something listens on 127.0.0.1:port (seen in /proc/net/tcp, not by
    connecting: that would be a client); kills process when it ends first or after 60 s."""
    deadline = time.monotonic() + 60
    while not harness._port_is_listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            out, err = process.communicate()
            raise AssertionError(f"spoor vprobe: no {what} on port {port}: {err}")
        time.sleep(0.05)


def qemu_command(elf):
    return [harness.require_tool(harness.QEMU), "-M", "mps2-an385", "-nographic", "-monitor",
            "none", "-serial", "none", "-semihosting-config",
            f"enable=on,target=native,arg=vprobe_sched,arg={TICKS}", "-kernel", str(elf)]


def full_log_command(elf, log):
    """QEMU on the example with the full log: a "Trace" line for every block it starts, a
    "rewound"/"Stopped execution" line for every one that did not run, the registers."""
    return qemu_command(elf) + ["-icount", f"shift={SHIFT},sleep=off", "-singlestep", "-d",
                                "exec,nochain,int,cpu", "-D", str(log)]


def full_log_of(qemu, log):
    """QEMU's full log of the run a probe made of this QEMU command, with no debugger and -S
    taken out: under -icount a debugger's halts change neither what runs nor when (the
    machine's clock stands still while it is stopped), so this is the probe's run."""
    command = [a for a in qemu if a != "-S"] + ["-icount", f"shift={SHIFT},sleep=off",
                                                "-singlestep", "-d", "exec,nochain,int,cpu",
                                                "-D", str(log)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)


def vprobe(elf, *args, wait_client=None, timeout=300):
    """Runs spoor vprobe on the example; with wait_client a `spoor itm -j` client on TCP."""
    port = harness.free_port()
    command = [SPOOR, "vprobe", "-q", "--gdb", "0", "-p", str(port), *map(str, args), "--",
               *qemu_command(elf)]
    if wait_client is None:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        return result, None
    command.insert(command.index("--"), "--wait-client")
    probe = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_listening(port, probe, "TCP server")
    client = subprocess.Popen([SPOOR, "itm", "-j", "--reconnect=0", f"tcp:127.0.0.1:{port}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = probe.communicate(timeout=timeout)
        client_out, client_err = client.communicate(timeout=60)
    finally:  # nothing left running after a timeout
        for process in (probe, client):
            if process.poll() is None:
                process.kill()
                process.wait()
    result = subprocess.CompletedProcess(command, probe.returncode, out, err)
    return result, (client.returncode, client_out, client_err)


class VirtualProbe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.elf, _ = harness.example("vprobe_sched", "m3")
        cls.stream, kept, stats = d / "stream.itm", d / "kept.log", d / "stats.json"
        result, cls.client = vprobe(cls.elf, "-o", cls.stream, "--keep-log", kept, "--stats",
                                    stats, wait_client=True)
        if result.returncode != 0:
            raise AssertionError(f"spoor vprobe: {result.stderr}")
        cls.stats = json.loads(stats.read_text())
        with open(kept, "rb") as f:  # without a GDB port: the register log, no Trace lines
            cls.kept_records = sum(1 for line in f if line.startswith(b"R00="))
            f.seek(0)
            cls.kept_traces = sum(1 for line in f if line.startswith(b"Trace "))
        kept.unlink()
        log = d / "qemu.log"  # the truth: QEMU's full log of the same (deterministic) run
        subprocess.run(full_log_command(cls.elf, log), check=True, capture_output=True,
                       timeout=300)
        cls.symbols = harness.symbol_addresses(cls.elf)
        cls.insns = objdump(cls.elf)
        cls.pcs, cls.stores, cls.entries, cls.returns = ground_truth(log, cls.insns)
        log.unlink()  # large
        cls.json = spoor_itm("-j", source=cls.stream)
        cls.packets = packets(cls.json)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def watched_stores(self):
        """(index, value) of the stores to current_thread once comparator 1 watches it (BSS
        clearing before that is not traced)."""
        (start,) = [i for i, a, s, v in self.stores if a == DWT_FUNCTION1]
        watched = self.symbols["current_thread"]
        return [(i, v) for i, a, s, v in self.stores if a == watched and i > start]

    def of_type(self, kind):
        return [p for p in self.packets if p["type"] == kind]

    def test_ground_truth_is_meaningful(self):
        self.assertEqual(self.stats["instructions"], len(self.pcs))
        self.assertEqual(self.kept_traces, 0)  # the probe read the register log
        self.assertGreaterEqual(self.kept_records, len(self.pcs))
        self.assertGreater(len(self.pcs), TICKS * 25000)
        self.assertGreater(len(self.watched_stores()), 2 * TICKS)
        self.assertEqual(self.of_type("error"), [])

    def test_data_trace_is_every_store_to_the_watched_variable(self):
        truth = [(i + 1, value) for i, value in self.watched_stores()]
        got = [(p["time"], p["value"]) for p in self.of_type("dwt_data")]
        self.assertEqual(got, truth)
        for p in self.of_type("dwt_data"):
            self.assertEqual((p["comparator"], p["size"], p["write"]), (1, 4, True))
        threads = self.symbols["threads"]
        self.assertTrue(all(threads <= v < threads + 4 * 20 for _, v in truth))

    def test_stimulus_port_writes_round_trip(self):
        port0 = bytes(v for i, a, s, v in self.stores if a == ITM_STIM and s == 1)
        text = spoor_itm("-c", "0,%c", source=self.stream)
        self.assertEqual(text.encode("latin-1"), port0)
        self.assertIn(b"log\n", port0)
        self.assertTrue(port0.endswith(b"done\n"))
        port1 = [v for i, a, s, v in self.stores if a == ITM_STIM + 4]
        got = [p["value"] for p in self.of_type("sw") if p["port"] == 1]
        self.assertEqual(got, port1)
        self.assertEqual(port1, list(range(len(port1))))
        others = [s for s in self.stores if ITM_STIM + 8 <= s[1] < ITM_STIM_END]
        self.assertEqual(others, [])

    def test_exception_trace(self):
        enters = [p for p in self.of_type("exception") if p["action"] == "enter"]
        self.assertEqual([(p["time"], p["number"]) for p in enters], self.entries)
        for number, count in self.returns.items():
            exits = [p for p in self.of_type("exception")
                     if p["action"] == "exit" and p["number"] == number]
            self.assertEqual(len(exits), count, f"exits of {number}")
        self.assertEqual({n for _, n in self.entries}, {14, 15})

    def test_pc_samples(self):
        (enable,) = [i for i, a, s, v in self.stores if a == DWT_CTRL]
        samples = self.of_type("pc_sample")
        start = enable + 1
        expected = list(range(start + PERIOD, len(self.pcs), PERIOD))
        self.assertEqual([p["time"] for p in samples], expected)
        self.assertEqual([p["pc"] for p in samples], [self.pcs[t] for t in expected])

    def test_tcp_stream_equals_file(self):
        code, out, err = self.client
        self.assertEqual(code, 0, err)
        self.assertEqual(out, self.json)

    def test_tpiu_framing_and_determinism(self):
        framed = Path(self.tmp.name) / "framed.itm"
        result, _ = vprobe(self.elf, "--tpiu", "-o", framed)
        self.assertEqual(result.returncode, 0, result.stderr)
        got = packets(spoor_itm("-j", "--tpiu", source=framed))
        self.assertEqual(got, packets(self.json))
        self.assertTrue(all(p["type"] != "error" for p in got))

    def test_swo_link_overflows(self):
        slow = Path(self.tmp.name) / "slow.itm"
        stats = Path(self.tmp.name) / "slow.json"
        result, _ = vprobe(self.elf, "--swo-baud", "115200", "-o", slow, "--stats", stats)
        self.assertEqual(result.returncode, 0, result.stderr)
        summary = json.loads(stats.read_text())
        got = packets(spoor_itm("-j", source=slow))
        overflows = [p for p in got if p["type"] == "overflow"]
        self.assertGreater(len(overflows), 0)
        self.assertEqual(len(overflows), summary["packets"]["overflow"])
        self.assertGreater(sum(summary["dropped"].values()), 0)
        truth = [v for i, v in self.watched_stores()]
        data = [p["value"] for p in got if p["type"] == "dwt_data"]
        self.assertEqual(len(data) + summary["dropped"].get("dwt_data", 0), len(truth))
        it = iter(truth)  # what went out is the truth with some left out, in order
        self.assertTrue(all(any(v == t for t in it) for v in data))

    def test_store_decoder_agrees_with_objdump(self):
        sys.path.insert(0, str(SOURCE / "tools"))
        import qemu_log
        import vprobe_stores
        elves = sorted((harness.firmware_dir() / "examples").glob("*.elf"))
        self.assertGreater(len(elves), 10)
        checked = 0
        for elf in elves:
            code = qemu_log.Code(str(elf))
            for pc, (mnemonic, operands) in objdump(elf).items():
                is_store = bool(re.match(r"^(str|stm|push)", mnemonic))
                decoded = vprobe_stores.decode(code, pc)
                self.assertEqual(decoded is not None, is_store, f"{elf.name} {pc:#x} {mnemonic}")
                m = re.match(r"^\w+, \[(\w+)(?:, #(-?\d+))?\]$", operands)
                if decoded is not None and decoded.kind == "single" and m:
                    self.assertEqual((decoded.rn, decoded.imm), (reg(m.group(1)),
                                                                 int(m.group(2) or 0)))
                    checked += 1
        self.assertGreater(checked, 1000)

    def test_usage_errors(self):
        for args, message in [([], "no QEMU command"),
                              (["--", "qemu-system-arm", "-d", "int"], "-d"),
                              (["--swo-baud", "0", "--", "x", "-kernel", "y"], "--swo-baud"),
                              (["--set", "BOGUS=1", "--", "x", "-kernel", "y"], "--set"),
                              (["--", "qemu-system-arm", "-M", "mps2-an385"], "-kernel")]:
            with self.subTest(args=args):
                r = subprocess.run([SPOOR, "vprobe", *args], capture_output=True, text=True,
                                   timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(message, r.stderr)

    def test_installed_spoor_runs_the_installed_tool(self):
        build = Path(os.environ.get("SPOOR_BUILD_DIR", SOURCE / "build" / "check"))
        with tempfile.TemporaryDirectory() as tmp:
            prefix = Path(tmp) / "moved"
            subprocess.run(["cmake", "--install", str(build), "--prefix", str(Path(tmp) / "p")],
                           check=True, capture_output=True, timeout=300)
            (Path(tmp) / "p").rename(prefix)  # relocatable: found next to the executable
            tools = prefix / "share" / "spoor" / "tools"
            for name in ("vprobe.py", "vprobe_itm.py", "vprobe_stores.py", "qemu_log.py",
                         "vprobe_gdb_proxy.py", "coresight_regs.py", "rsp_framing.py"):
                self.assertTrue((tools / name).is_file(), name)
            tool = tools / "vprobe.py"
            tool.write_text(tool.read_text().replace("this text\n", "this text (installed)\n"))
            env = {k: v for k, v in os.environ.items() if k != "SPOOR_VPROBE"}
            r = subprocess.run([str(prefix / "bin" / "spoor"), "vprobe", "--help"], env=env,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("this text (installed)", r.stdout)

    def test_spoor_top_matches_the_schedule(self):
        commands = subprocess.run([SPOOR, "--help"], capture_output=True, text=True).stdout
        if not re.search(r"^  top ", commands, re.M):
            self.skipTest("spoor top is not a command of this spoor (issue 10): the top-level "
                          "proof of the virtual probe runs once it is")
        switches = [(i + 1, v) for i, v in self.watched_stores()]
        end = len(self.pcs)
        hz = 1e9 / (1 << SHIFT)
        interval_ms = 2
        cycles = int(interval_ms * hz / 1000)
        # truth: per interval, each thread's cycles and the switches to it
        truth = []
        for k in range(end // cycles):
            truth.append(interval_truth(switches, end, k * cycles, (k + 1) * cycles))
        out = Path(self.tmp.name) / "top.jsonl"
        r = subprocess.run([SPOOR, "top", "--input", str(self.stream), "-e", str(self.elf),
                            "-F", str(int(hz)), "-I", str(interval_ms), "-E", "-j", str(out)],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        intervals = [json.loads(line) for line in out.read_text().splitlines()]
        self.assertGreaterEqual(len(intervals), len(truth))
        for k, (share, count) in enumerate(truth):
            got = {int(t["tcb"], 0): t for t in intervals[k]["threads"]}
            for tcb, cyc in share.items():
                with self.subTest(interval=k, tcb=hex(tcb)):
                    self.assertAlmostEqual(got[tcb]["cpu"], 100.0 * cyc / cycles, delta=0.5)
                    self.assertEqual(got[tcb]["switches"], count.get(tcb, 0))
            # exception entries in the log within the interval, per exception number
            lo, hi = k * cycles, (k + 1) * cycles
            want = {}
            for t, number in self.entries:
                if lo <= t < hi:
                    want[number] = want.get(number, 0) + 1
            got_exc = {e["num"]: e["count"] for e in intervals[k].get("exceptions", [])
                       if e["count"]}
            with self.subTest(interval=k, what="exceptions"):
                self.assertEqual(got_exc, want)


if __name__ == "__main__":
    unittest.main()
