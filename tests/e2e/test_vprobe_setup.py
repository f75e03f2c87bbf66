"""spoor top --setup v7m|v8m --gdb on the virtual probe: the debugger, not the firmware, sets up
ITM and DWT, through the probe's GDB port (tools/vprobe_gdb_proxy.py, in front of QEMU's
gdbstub).

examples/sched given the word "nosetup" leaves ITM and DWT alone. It runs frozen (-S) under
`spoor vprobe --gdb-log`; `spoor top -s ... --gdb ... --setup v7m -E` (M3, mps2-an385) or
`--setup v8m -E` (M33, mps2-an505) writes the registers through the proxy and lets the target
run.

Ground truth, independent of spoor: the register encodings below, from the manuals' field
definitions (ARMv7-M ARM DDI0403: DEMCR C1.6.5, ITM_TCR C1.7.6, DWT_CTRL C1.8.7, DWT_FUNCTIONn
C1.8.17; ARMv8-M ARM DDI0553: DWT_FUNCTIONn; CoreSight: the lock access key); the schedule
from QEMU's full log of the same run (QEMU run again without the debugger: -icount makes it
the same), read with test_vprobe.py's reader (stores found with
arm-none-eabi-objdump's disassembly); sched_current's address from arm-none-eabi-nm; names,
priorities and entry functions from gdb-multiarch; for the ARMv8-M stream, a packet walker of
this file's own (ARMv8-M ARM appendix, DWT/ITM packet protocol), not spoor itm.

Checked:
1. M3: the writes that reach the GDB port, in order, are the manual's plan: DEMCR.TRCENA
   first, the lock access key to ITM_LAR and DWT_LAR, ITM_TCR ITMENA/TSENA/SYNCENA/TXENA with a
   trace bus ID, DWT_CTRL CYCCNTENA/SYNCTAP/EXCTRCENA, comparator 1 disabled before COMP1 =
   &sched_current and MASK1 = 0, then FUNCTION1 = 0b1101 (data value packet on a write)
   with EMITRANGE, CYCMATCH and DATAVMATCH clear; DWT_CTRL read back with NUMCOMP = 4;
2. M3: spoor top then sees the schedule: names, priorities and entry functions are gdb's, CPU
   shares within 0.5 points, exact switch counts and exception entries per interval (the
   writes took effect from the first instruction: every store to sched_current is traced);
3. M33: the writes are the same plan with the ARMv8-M comparator: no MASK1, FUNCTION1 MATCH
   0b1101 (Data Address With Value, writes), ACTION 0b10 (which for that MATCH the manual
   defines as "generate a Data Trace Data Value packet"), DATAVSIZE 0b10 (word);
4. M33: the stream has a data value packet with the value of every store to sched_current, at
   the cycle after the store, and spoor top sees the switches (as on the M3);
5. M33: a debugger (gdb-multiarch, through the same port) writing FUNCTION1 = MATCH 0b0101
   (Data Address, writes), ACTION 0b10 gets what the manual says for a Data Address
   comparator, a Data Trace Match packet per store and no value; `spoor itm --json` decodes
   them as dwt_match packets of comparator 1, and spoor top says in one warning that the
   comparator sends no values (it cannot tell the threads);
7. a core with one comparator (--comparators 1): spoor top --setup v7m (comparator 1) is
   refused in one line, exit 2, after reading NUMCOMP, and writes no comparator register;
8. the port's framing in ack mode (a raw client that never asks for QStartNoAckMode): the
   packets the probe serves are acknowledged and answered with good checksums, a read that
   spans QEMU's memory and DEMCR has QEMU's bytes with DEMCR's in place, a packet with a bad
   checksum is refused ('-') as QEMU refuses it.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from rsp_framing import checksum, frame  # noqa: E402
from test_vprobe import full_log_of, ground_truth, objdump, wait_listening  # noqa: E402
from test_vprobe_top_live import CYCLES, HZ, INTERVAL_MS, check_intervals, gdb_tasks  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
TICKS = 12
INTERVALS = 5

# ARMv7-M ARM / ARMv8-M ARM register addresses
DEMCR = 0xE000EDFC
ITM_TCR, ITM_LAR = 0xE0000E80, 0xE0000FB0
DWT_CTRL, DWT_LAR = 0xE0001000, 0xE0001FB0
COMP1, MASK1, FUNCTION1 = 0xE0001030, 0xE0001034, 0xE0001038
COMPARATOR_REGS = range(0xE0001020, 0xE0001020 + 16 * 16)
CORESIGHT_KEY = 0xC5ACCE55  # CoreSight Lock Access Register key
TRCENA = 1 << 24  # DEMCR
ITMENA, TSENA, SYNCENA, TXENA = 1, 1 << 1, 1 << 2, 1 << 3  # ITM_TCR
CYCCNTENA, EXCTRCENA = 1, 1 << 16  # DWT_CTRL; SYNCTAP is [11:10]
V7_SAMPLE_DATA_ON_WRITE = 0b1101  # DWT_FUNCTION.FUNCTION, EMITRANGE 0: data value, writes
V8_MATCH_DATA_ADDRESS_WRITES = 0b0101
V8_MATCH_DATA_ADDRESS_WITH_VALUE_WRITES = 0b1101
V8_ACTION_DATA_TRACE = 0b10
DATAVSIZE_WORD = 0b10

LINE = re.compile(r"^(read |write) 0x([0-9a-f]{8}) (\d+): ([0-9a-f]*)")


def gdb_log(path):
    """[(kind, address, bytes)] of the probe's --gdb-log."""
    out = []
    for line in Path(path).read_text().splitlines():
        m = LINE.match(line)
        if not m:
            raise AssertionError(f"--gdb-log line not understood: {line}")
        out.append((m.group(1).strip(), int(m.group(2), 16), bytes.fromhex(m.group(4))))
    return out


def words(accesses, kind):
    return [(a, int.from_bytes(b, "little")) for k, a, b in accesses if k == kind and len(b) == 4]


def qemu_command(machine, elf):
    return [harness.require_tool(harness.QEMU), "-M", machine, "-nographic", "-monitor", "none",
            "-serial", "none", "-semihosting-config",
            f"enable=on,target=native,arg=sched,arg=nosetup,arg={TICKS}", "-S", "-kernel",
            str(elf)]


def itm_packets(data):
    """[(cycle, header, payload)] of an ITM stream without a prescaler: the source packets (a
    local timestamp dates the packets before it) -- the ARM packet protocol read here, not by
    spoor itm. Sync, overflow and local timestamps only besides source packets."""
    out, pending, now, i = [], [], 0, 0
    while i < len(data):
        h = data[i]
        if h == 0:  # synchronization: zeros then 0x80
            while data[i] == 0:
                i += 1
            i += 1
        elif h == 0x70:
            i += 1
        elif h & 0x0F == 0 and h & 0x80 == 0:  # local timestamp format 2
            now += h >> 4
            out += [(now, hh, p) for hh, p in pending]
            pending = []
            i += 1
        elif h & 0xCF == 0xC0:  # local timestamp format 1
            delta, shift, i = 0, 0, i + 1
            while True:
                delta |= (data[i] & 0x7F) << shift
                shift += 7
                i += 1
                if not data[i - 1] & 0x80:
                    break
            now += delta
            out += [(now, hh, p) for hh, p in pending]
            pending = []
        elif h & 3:
            size = (1, 2, 4)[(h & 3) - 1]
            pending.append((h, data[i + 1:i + 1 + size]))
            i += 1 + size
        else:
            raise AssertionError(f"unexpected ITM header 0x{h:02x} at {i}")
    return out + [(None, hh, p) for hh, p in pending]


def run_setup(test, d, core, setup, *vprobe_args, top_args=()):
    """spoor top --setup on the frozen firmware under the probe: (top result, intervals,
    accesses, stream bytes, kept log path, probe status and stderr)."""
    elf, machine = harness.example("sched", core)
    stream, log, accesses_file = d / f"{core}.itm", d / f"{core}.log", d / f"{core}.gdb"
    qemu = qemu_command(machine, elf)
    port, gdb_port = harness.free_port(), harness.free_port()
    probe = subprocess.Popen(
        [SPOOR, "vprobe", "-q", "--gdb", str(gdb_port), "--gdb-log", accesses_file, "-p",
         str(port), "-o", stream, *vprobe_args, "--", *qemu], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        wait_listening(port, probe, "trace stream")
        wait_listening(gdb_port, probe, "gdb port")
        jsonl = d / f"{core}.jsonl"
        top = subprocess.run(
            [SPOOR, "top", "-s", f"127.0.0.1:{port}", "--gdb", f"127.0.0.1:{gdb_port}",
             "--setup", setup, "-e", str(elf), "-F", str(HZ), "-I", str(INTERVAL_MS), "-E",
             "-j", str(jsonl), *top_args], capture_output=True, text=True, timeout=120)
        if top.returncode != 0 and not top.stderr.count("closed by the server"):
            os.killpg(probe.pid, signal.SIGKILL)  # the target stays frozen: QEMU too
        _, probe_err = probe.communicate(timeout=300)
    finally:
        if probe.poll() is None:
            os.killpg(probe.pid, signal.SIGKILL)
            probe.wait()
    intervals = ([json.loads(line) for line in jsonl.read_text().splitlines()]
                 if jsonl.exists() else [])
    return {"elf": elf, "top": top, "intervals": intervals, "accesses": gdb_log(accesses_file),
            "stream": stream.read_bytes(), "log": log, "qemu": qemu,
            "probe_status": probe.returncode, "probe_err": probe_err}


def schedule(run):
    """(switches [(cycle, tcb)], exception entries, instructions, sched_current) from QEMU's
    full log of the run: every store to sched_current (the debugger's set-up came before the
    first instruction)."""
    current = harness.symbol_addresses(run["elf"])["sched_current"]
    full_log_of(run["qemu"], run["log"])
    pcs, stores, entries, _ = ground_truth(run["log"], objdump(run["elf"]))
    run["log"].unlink()  # large
    return [(i + 1, v) for i, a, s, v in stores if a == current], entries, len(pcs), current


class PlanChecks:
    """The register plan of the manuals, checked on the writes the GDB port saw."""

    def check_common_plan(self, writes, current):
        addresses = [a for a, _ in writes]
        self.assertEqual(writes[0], (DEMCR, writes[0][1]))
        self.assertTrue(writes[0][1] & TRCENA, hex(writes[0][1]))
        value = dict(writes)
        self.assertEqual(value[ITM_LAR], CORESIGHT_KEY)
        self.assertEqual(value[DWT_LAR], CORESIGHT_KEY)
        tcr = value[ITM_TCR]
        self.assertEqual(tcr & (ITMENA | TSENA | SYNCENA | TXENA), ITMENA | TSENA | SYNCENA | TXENA)
        self.assertEqual((tcr >> 8) & 3, 0)  # TSPrescale: timestamps count cycles
        self.assertNotEqual((tcr >> 16) & 0x7F, 0)  # TraceBusID
        ctrl = value[DWT_CTRL]
        self.assertEqual(ctrl & (CYCCNTENA | EXCTRCENA), CYCCNTENA | EXCTRCENA)
        self.assertNotEqual((ctrl >> 10) & 3, 0)  # SYNCTAP
        # comparator 1: disabled, then the address, then the function
        first_function = addresses.index(FUNCTION1)
        self.assertEqual(writes[first_function][1], 0)
        self.assertLess(first_function, addresses.index(COMP1))
        self.assertEqual(value[COMP1], current)
        self.assertEqual(addresses[-1], FUNCTION1)
        others = [a for a in addresses if a in COMPARATOR_REGS and not COMP1 <= a <= FUNCTION1]
        self.assertEqual(others, [])
        return writes[-1][1]

    def check_numcomp_read(self, accesses, numcomp):
        ctrl_reads = [v for a, v in words(accesses, "read") if a == DWT_CTRL]
        self.assertTrue(ctrl_reads)
        self.assertEqual({v >> 28 for v in ctrl_reads}, {numcomp})


class SetupV7M(unittest.TestCase, PlanChecks):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_ = run_setup(cls, Path(cls.tmp.name), "m3", "v7m",
                             top_args=("-n", str(INTERVALS)))
        cls.switches, cls.entries, cls.end, cls.current = schedule(cls.run_)
        cls.tasks = gdb_tasks(cls.run_["elf"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_runs(self):
        self.assertEqual(self.run_["top"].returncode, 0, self.run_["top"].stderr)
        self.assertEqual(len(self.run_["intervals"]), INTERVALS)
        self.assertEqual(self.run_["probe_status"], 0, self.run_["probe_err"])
        self.assertIn("sched: sensor ran control ran logger ran idle ran", self.run_["probe_err"])
        self.assertTrue(set(self.tasks) <= {tcb for _, tcb in self.switches})

    def test_writes_are_the_manuals_plan(self):
        writes = words(self.run_["accesses"], "write")
        function = self.check_common_plan(writes, self.current)
        self.assertEqual(dict(writes)[MASK1], 0)
        self.assertEqual(function & 0xF, V7_SAMPLE_DATA_ON_WRITE)
        self.assertEqual(function & (1 << 5 | 1 << 7 | 1 << 8), 0)  # EMITRANGE CYCMATCH DATAVMATCH
        self.check_numcomp_read(self.run_["accesses"], 4)

    def test_names_priorities_entries_are_gdbs(self):
        for k, interval in enumerate(self.run_["intervals"]):
            for t in interval["threads"]:
                tcb = int(t["tcb"], 0)
                if tcb in self.tasks:
                    with self.subTest(interval=k, tcb=hex(tcb)):
                        self.assertEqual((t["name"], t["prio"], t["func"]), self.tasks[tcb])

    def test_switches_and_exceptions_match_the_log(self):
        self.assertGreater(len(self.switches), 10)
        check_intervals(self, self.run_["intervals"], self.switches, self.entries, self.end)


class SetupV8M(unittest.TestCase, PlanChecks):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.run_ = run_setup(cls, d, "m33", "v8m", top_args=("-n", str(INTERVALS)))
        cls.switches, cls.entries, cls.end, cls.current = schedule(cls.run_)
        cls.by_gdb = cls.gdb_sets_address_match(d)

    @classmethod
    def gdb_sets_address_match(cls, d):
        """gdb-multiarch configures comparator 1 as a Data Address comparator (no value) through
        the probe's port and detaches (QEMU runs); the stream and the log's schedule."""
        elf, machine = harness.example("sched", "m33")
        stream, log = d / "gdb.itm", d / "gdb.log"
        gdb_port = harness.free_port()
        probe = subprocess.Popen(
            [SPOOR, "vprobe", "-q", "--gdb", str(gdb_port), "-p", "0", "-o", stream, "--",
             *qemu_command(machine, elf)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        function = V8_MATCH_DATA_ADDRESS_WRITES | V8_ACTION_DATA_TRACE << 4 | DATAVSIZE_WORD << 10
        sets = [(DEMCR, TRCENA), (ITM_TCR, ITMENA | TSENA | SYNCENA | TXENA | 1 << 16),
                (DWT_CTRL, CYCCNTENA | 1 << 10), (FUNCTION1, 0),
                (COMP1, harness.symbol_addresses(elf)["sched_current"]), (FUNCTION1, function)]
        commands = ["-ex", f"target remote 127.0.0.1:{gdb_port}"]
        for addr, value in sets:
            commands += ["-ex", f"set *(unsigned int *)0x{addr:08x} = 0x{value:08x}"]
        commands += ["-ex", f"printf \"@@%x\\n\", *(unsigned int *)0x{FUNCTION1:08x}",
                     "-ex", "detach"]
        try:
            wait_listening(gdb_port, probe, "gdb port")
            gdb = subprocess.run([harness.require_tool(harness.GDB), "-batch", "-nx", str(elf),
                                  *commands], capture_output=True, text=True, timeout=120)
            probe.communicate(timeout=300)
        finally:
            if probe.poll() is None:
                os.killpg(probe.pid, signal.SIGKILL)
                probe.wait()
        current = harness.symbol_addresses(elf)["sched_current"]
        full_log_of(qemu_command(machine, elf), log)
        _, stores, _, _ = ground_truth(log, objdump(elf))
        log.unlink()
        return {"gdb": gdb, "function": function, "stream": stream.read_bytes(),
                "stores": [(i + 1, v) for i, a, s, v in stores if a == current]}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_writes_are_the_manuals_plan(self):
        writes = words(self.run_["accesses"], "write")
        function = self.check_common_plan(writes, self.current)
        self.assertNotIn(MASK1, dict(writes))
        self.assertEqual(function & 0xF, V8_MATCH_DATA_ADDRESS_WITH_VALUE_WRITES)
        self.assertEqual((function >> 4) & 3, V8_ACTION_DATA_TRACE)
        self.assertEqual((function >> 10) & 3, DATAVSIZE_WORD)
        self.check_numcomp_read(self.run_["accesses"], 4)

    def test_stream_has_a_value_packet_per_switch(self):
        self.assertEqual(self.run_["probe_status"], 0, self.run_["probe_err"])
        got = itm_packets(self.run_["stream"])
        values = [(t, int.from_bytes(p, "little")) for t, h, p in got
                  if h == ((16 + 2 * 1 + 1) << 3) | 4 | 3]  # data value, comparator 1, write
        self.assertGreater(len(self.switches), 10)
        self.assertEqual(values, self.switches)

    def test_top_sees_the_switches(self):
        self.assertEqual(self.run_["top"].returncode, 0, self.run_["top"].stderr)
        self.assertEqual(len(self.run_["intervals"]), INTERVALS)
        check_intervals(self, self.run_["intervals"], self.switches, self.entries, self.end)

    def test_address_only_comparator_gives_match_packets(self):
        """ARMv8-M: Data Trace Match packet = discriminator 8 + 2n, one byte, bit 0 set."""
        self.assertEqual(self.by_gdb["gdb"].returncode, 0, self.by_gdb["gdb"].stderr)
        self.assertIn(f"@@{self.by_gdb['function']:x}", self.by_gdb["gdb"].stdout)
        got = itm_packets(self.by_gdb["stream"])
        matches = [t for t, h, p in got if h == (10 << 3) | 4 | 1 and p == b"\x01"]
        values = [p for t, h, p in got if h & 4 and (h >> 3) >= 16]
        self.assertGreater(len(self.by_gdb["stores"]), 10)
        self.assertEqual(matches, [t for t, _ in self.by_gdb["stores"]])
        self.assertEqual(values, [])

    def test_spoor_decodes_match_packets_and_top_warns(self):
        stream = Path(self.tmp.name) / "match.itm"
        stream.write_bytes(self.by_gdb["stream"])
        itm = subprocess.run([SPOOR, "itm", "--json", str(stream)], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(itm.returncode, 0, itm.stderr)
        packets = [json.loads(line) for line in itm.stdout.splitlines() if line.strip()]
        matches = [p for p in packets if p["type"] == "dwt_match"]
        self.assertEqual([p["comparator"] for p in matches], [1] * len(self.by_gdb["stores"]))
        self.assertEqual([p for p in packets if p["type"] == "error"], [])
        elf, _ = harness.example("sched", "m33")
        top = subprocess.run([SPOOR, "top", "-e", str(elf), "-F", str(HZ), "--input", str(stream),
                              "-j", os.devnull], capture_output=True, text=True, timeout=60)
        self.assertEqual(top.returncode, 0, top.stderr)
        warnings = [line for line in top.stderr.splitlines() if "data trace match" in line]
        self.assertEqual(len(warnings), 1, top.stderr)
        self.assertIn("comparator 1", warnings[0])


class Refusal(unittest.TestCase):
    def test_missing_comparator_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = run_setup(self, Path(tmp), "m3", "v7m", "--comparators", "1")
        top = run["top"]
        self.assertEqual(top.returncode, 2, top.stderr)
        lines = top.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, top.stderr)
        self.assertRegex(lines[0], r"^spoor top: .*1 comparators.*no comparator 1$")
        self.assertEqual([a for a, _ in words(run["accesses"], "write")], [DEMCR])
        self.assertEqual([v >> 28 for a, v in words(run["accesses"], "read") if a == DWT_CTRL],
                         [1])


class AckModeFraming(unittest.TestCase):
    def test_served_packets_in_ack_mode(self):
        elf, machine = harness.example("sched", "m3")
        gdb_port = harness.free_port()
        probe = subprocess.Popen([SPOOR, "vprobe", "-q", "--gdb", str(gdb_port), "-p", "0", "--",
                                  *qemu_command(machine, elf)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            wait_listening(gdb_port, probe, "gdb port")
            with socket.create_connection(("127.0.0.1", gdb_port), timeout=20) as s:
                rsp = RawClient(s)
                self.assertRegex(rsp.exchange(b"?"), rb"^T05")
                self.assertEqual(rsp.exchange(b"me0001000,4"), b"00000040")  # NUMCOMP 4
                self.assertEqual(rsp.exchange(b"Me000edfc,4:00000001"), b"OK")
                both = rsp.exchange(b"me000edf0,10")  # DHCSR .. DEMCR
                self.assertEqual(len(both), 32)
                self.assertEqual(both[24:], b"00000001")
                self.assertEqual(rsp.exchange(b"m20000000,4"), rsp.exchange(b"m20000000,4"))
                s.sendall(b"$me0001000,4#00")
                self.assertEqual(s.recv(1), b"-")
                s.sendall(b"$k#6b")
            probe.communicate(timeout=60)
        finally:
            if probe.poll() is None:
                os.killpg(probe.pid, signal.SIGKILL)
                probe.wait()


class RawClient:
    """GDB's remote protocol in ack mode, by hand: each packet acknowledged by '+'."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def exchange(self, payload):
        self.sock.sendall(frame(payload))
        while not re.search(rb"\$([^#]*)#[0-9a-f]{2}", self.buf):
            data = self.sock.recv(4096)
            if not data:
                raise AssertionError(f"connection closed after {self.buf!r}")
            self.buf += data
        if not self.buf.startswith(b"+$"):
            raise AssertionError(f"no '+' before the reply: {self.buf!r}")
        m = re.search(rb"\$([^#]*)#([0-9a-f]{2})", self.buf)
        reply, sent = m.group(1), int(m.group(2), 16)
        if checksum(reply) != sent:
            raise AssertionError(f"bad checksum: {self.buf!r}")
        self.buf = self.buf[m.end():]
        self.sock.sendall(b"+")
        return reply


if __name__ == "__main__":
    unittest.main()
