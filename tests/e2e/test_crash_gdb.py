"""spoor crash --gdb against QEMU's gdbstub (a live, halted Cortex-M), checked against
gdb-multiarch, and what the live memory layer costs on the wire.

1. Backtraces. A firmware runs in QEMU and stops at a breakpoint gdb-multiarch set on the
   first instruction of a function (thread mode: level_three; handler mode: tick_work under
   SysTick_Handler, irq_work under IRQ3_Handler). gdb takes `bt` and `info registers`, then
   `disconnect`s (QEMU stays halted; `detach` would resume it). `spoor crash --json --gdb` must
   give gdb's registers and gdb's backtrace, function by function (an exception row where gdb
   says <signal handler called>). A second gdb session afterwards must see the same `bt`
   (spoor left the target halted where it was).
2. Cost. tools/gdb_walk walks the stack three times over one connection: the second walk
   must send no 'm' packet at all (page cache), the third, after spoor_mem_invalidate, as many
   as the first. A 10000-byte read must take the fewest packets QEMU's PacketSize allows and
   return the bytes gdb's `dump binary memory` gives. The same through a proxy that makes
   QEMU's qSupported say PacketSize=300 (hex, 768 bytes): the proxy counts the 'm' requests
   itself and checks that none asks for more than the packet size allows.
3. Errors: connection refused, a server that never answers, a server that speaks something
   else (plain Python sockets): one line on stderr, exit status 2."""
import concurrent.futures
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from rsp_framing import frame  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
GDB_WALK = os.path.join(os.environ["SPOOR_BUILD_DIR"], "tools", "gdb_walk")
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]

# (program, core, breakpoint); tick_work and irq_work run in handler mode.
CASES = [("calls", "m3", "level_three"), ("calls", "m3", "tick_work"),
         ("calls", "m4f", "irq_work"), ("calls", "m4f", "level_three"),
         ("calls", "m33", "tick_work"), ("calls", "m33", "level_three"),
         ("calls", "m0", "irq_work")]


def gdb_stop_at(elf, port, stop_at):
    """gdb-multiarch: break, continue, bt, registers, then disconnect (QEMU stays halted)."""
    text = harness.run_gdb(elf, port, [f"break *{stop_at}", "continue", "bt", "info registers",
                                       "delete", "disconnect"])
    regs = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+(0x[0-9a-f]+)\s", line)
        if m and m.group(1) in REGS:
            regs[m.group(1)] = int(m.group(2), 16)
    return harness.parse_backtrace(text), regs, text


def spoor_crash_live(elf, port):
    r = subprocess.run([SPOOR, "crash", "--json", "--stats", "-e", str(elf), "--gdb",
                        f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise harness.HarnessError(f"spoor crash --gdb failed ({r.returncode}): {r.stderr}")
    report = json.loads(r.stdout)
    names = ["<signal handler called>" if f["kind"] == "exception" else (f["function"] or "??")
             for f in report["backtrace"]]
    return names, report, r.stderr


def run_case(case, results):
    program, cpu, stop_at = case
    elf, machine = harness.example(program, cpu)
    try:
        with harness.Qemu(elf, machine, gdb=True) as qemu:
            reference, gdb_regs, text = gdb_stop_at(elf, qemu.gdb_port, stop_at)
            if len(gdb_regs) != len(REGS):
                raise harness.HarnessError(f"gdb did not show all registers:\n{text}")
            got, report, stats = spoor_crash_live(elf, qemu.gdb_port)
            after = harness.parse_backtrace(harness.run_gdb(elf, qemu.gdb_port,
                                                            ["bt", "disconnect"]))
    except Exception as e:  # noqa: BLE001 - reported per case
        results[case] = (False, f"error: {e}")
        return
    # gdb stops at main ("backtrace past-main" is off); spoor goes on to the reset handler.
    if "main" in got:
        got = got[:got.index("main") + 1]
    spoor_regs = {r: int(report["registers"][r], 16) for r in REGS}
    wrong_regs = {r: (hex(gdb_regs[r]), hex(spoor_regs[r])) for r in REGS
                  if gdb_regs[r] != spoor_regs[r]}
    banked_null = all(report["registers"][r] is None for r in ("msp", "psp", "control"))
    ok = got == reference and after == reference and not wrong_regs and banked_null
    results[case] = (ok, f"gdb:          {reference}\n    spoor crash:  {got}\n"
                         f"    gdb after:    {after}\n"
                         f"    registers that differ (gdb, spoor): {wrong_regs or 'none'}; "
                         f"msp/psp/control null (QEMU 7.2 does not give them): {banked_null}\n"
                         f"    {stats.strip()}")


def check_backtraces():
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:  # two cores
        list(pool.map(lambda case: run_case(case, results), CASES))
    failed = 0
    for case in CASES:
        ok, detail = results[case]
        print(f"{'ok  ' if ok else 'FAIL'} {'-'.join(case[:2])} at {case[2]}\n    {detail}")
        failed += not ok
    return failed


# ---------------------------------------------------------------- cost on the wire


def parse_walk(out):
    """gdb_walk's lines as dicts: {"connect": {...}, "walk 1": {...}, ..., "read": {...}}."""
    steps = {}
    for line in out.splitlines():
        head, _, rest = line.partition(" ")
        if head == "walk":
            number, _, rest = rest.partition(" ")
            head = f"walk {number}"
        fields = dict(f.split("=", 1) for f in rest.split() if "=" in f)
        steps[head] = {k: (int(v, 0) if re.fullmatch(r"(0x)?[0-9a-f]+", v) else v)
                       for k, v in fields.items()}
    return steps


def run_walk(elf, port, extra):
    r = subprocess.run([GDB_WALK, "-e", str(elf), "--gdb", f"127.0.0.1:{port}"] + extra,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise harness.HarnessError(f"gdb_walk failed ({r.returncode}): {r.stderr}")
    return r.stdout, parse_walk(r.stdout)


class PacketSizeProxy:
    """A TCP proxy between a client and QEMU's gdbstub that rewrites the PacketSize of the
    qSupported reply and counts the client's 'm' requests (and their largest length)."""

    def __init__(self, upstream_port, packet_size):
        self.upstream_port = upstream_port
        self.packet_size = packet_size
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.m_requests = 0
        self.largest_m = 0
        self.largest_reply = 0
        self.server_packet_size = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @staticmethod
    def _packets(buf):
        """Complete $...#cs packets in buf: (list of payloads, bytes consumed)."""
        out, pos = [], 0
        while True:
            start = buf.find(b"$", pos)
            end = buf.find(b"#", start + 1) if start >= 0 else -1
            if start < 0 or end < 0 or len(buf) < end + 3:
                return out, (start if start >= 0 else len(buf))
            out.append(buf[start + 1:end])
            pos = end + 3

    def _serve(self):
        client, _ = self.listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        threading.Thread(target=self._pump, args=(client, upstream, self._requests),
                         daemon=True).start()
        self._pump(upstream, client, self._replies)

    def _pump(self, source, sink, on_packets):
        """Forwards source to sink a complete packet at a time, through on_packets."""
        pending = b""
        while True:
            data = source.recv(65536)
            if not data:
                sink.close()
                return
            pending += data
            packets, used = self._packets(pending)
            forward, pending = pending[:used], pending[used:]
            sink.sendall(on_packets(packets, forward))

    def _replies(self, packets, forward):
        for payload in packets:
            self.largest_reply = max(self.largest_reply, len(payload))
            m = re.search(rb"PacketSize=([0-9a-fA-F]+)", payload)
            if m:
                self.server_packet_size = int(m.group(1), 16)
                new = payload.replace(m.group(0), b"PacketSize=%x" % self.packet_size)
                old_frame = b"$" + payload + b"#"
                at = forward.find(old_frame)
                new_frame = frame(new)
                forward = forward[:at] + new_frame + forward[at + len(old_frame) + 2:]
        return forward

    def _requests(self, packets, forward):
        for payload in packets:
            m = re.fullmatch(rb"m([0-9a-f]+),([0-9a-f]+)", payload)
            if m:
                self.m_requests += 1
                self.largest_m = max(self.largest_m, int(m.group(2), 16))
        return forward


def check_cost():
    failed = 0

    def expect(ok, what):
        nonlocal failed
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        failed += not ok

    elf, machine = harness.example("calls", "m3")
    syms = harness.symbol_addresses(elf)
    ram = syms["__ram_start"]
    length = 10000
    with tempfile.TemporaryDirectory() as tmp, harness.Qemu(elf, machine, gdb=True) as qemu:
        reference = os.path.join(tmp, "gdb.bin")
        harness.run_gdb(elf, qemu.gdb_port, [
            "break *tick_work", "continue", "delete",
            f"dump binary memory {reference} {ram:#x} {ram + length:#x}", "disconnect"])
        with open(reference, "rb") as f:
            gdb_bytes = f.read()

        # QEMU's own PacketSize.
        direct_out = os.path.join(tmp, "direct.bin")
        out, steps = run_walk(elf, qemu.gdb_port, ["--walks", "3", "--invalidate-before", "3",
                                                   "--read", f"{ram:#x}:{length}",
                                                   "--out", direct_out])
        print(out, end="")
        w1, w2, w3, rd = steps["walk 1"], steps["walk 2"], steps["walk 3"], steps["read"]
        size = steps["connect"]["packet_size"]
        expect(w1["packets"] >= 1 and w1["functions"] == w2["functions"] == w3["functions"],
               f"walk 1 reads the stack live ({w1['packets']} 'm' packets), walks agree")
        expect(w2["packets"] == 0 and w2["bytes"] == 0 and w2["misses"] == 0,
               "walk 2 is free: 0 'm' packets, 0 bytes, 0 page misses (cache)")
        expect(w3["packets"] == w1["packets"] and w3["bytes"] == w1["bytes"],
               "walk 3 after spoor_mem_invalidate costs what walk 1 did")
        fewest = math.ceil(length / (size // 2))
        expect(rd["packets"] == fewest,
               f"{length}-byte read at PacketSize {size:#x}: {rd['packets']} packets, "
               f"fewest possible ceil({length}/{size // 2}) = {fewest}")
        with open(direct_out, "rb") as f:
            expect(f.read() == gdb_bytes, f"the {length} bytes equal gdb's dump binary memory")

        # A small PacketSize, forced by the proxy: 0x300 = 768 bytes, 384 target bytes per 'm'.
        small = 0x300
        proxy = PacketSizeProxy(qemu.gdb_port, small)
        small_out = os.path.join(tmp, "small.bin")
        out, steps = run_walk(elf, proxy.port, ["--walks", "2", "--read", f"{ram:#x}:{length}",
                                                "--out", small_out])
        proxy.thread.join(timeout=10)
        print(out, end="")
        expect(proxy.server_packet_size == size and steps["connect"]["packet_size"] == small,
               f"proxy: QEMU said PacketSize={size:#x}, spoor saw {small:#x}")
        spoor_packets = sum(s["packets"] for s in steps.values())
        expect(proxy.m_requests == spoor_packets,
               f"proxy counted {proxy.m_requests} 'm' requests, spoor_mem_stats says "
               f"{spoor_packets}")
        expect(proxy.largest_m <= small // 2 and proxy.largest_reply <= small,
               f"no 'm' asks for more than {small // 2} bytes (largest {proxy.largest_m}), no "
               f"reply exceeds {small} (largest {proxy.largest_reply})")
        expect(steps["walk 2"]["packets"] == 0, "walk 2 through the proxy is free too")
        fewest = math.ceil(length / (small // 2))
        got = steps["read"]["packets"]
        expect(got == fewest, f"{length}-byte read at PacketSize {small:#x}: {got} packets, "
                              f"fewest possible ceil({length}/{small // 2}) = {fewest}")
        with open(small_out, "rb") as f:
            expect(f.read() == gdb_bytes, "and the bytes equal gdb's dump again")
    return failed


# ---------------------------------------------------------------- errors


def serve(behaviour):
    """A plain TCP server on 127.0.0.1 that, per connection, stays silent or sends a banner."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def loop():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if behaviour == "banner":
                conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
            threading.Thread(target=lambda c=conn: (time.sleep(30), c.close()),
                             daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return listener


def check_errors():
    failed = 0
    elf, _ = harness.example("calls", "m3")
    silent, banner = serve("silent"), serve("banner")
    refused = harness.free_port()
    cases = [(refused, rf"^spoor crash: 127\.0\.0\.1:{refused}: connection refused$", 5),
             (silent.getsockname()[1],
              rf"^spoor crash: 127\.0\.0\.1:{silent.getsockname()[1]}: no reply within 5000 ms$",
              20),
             (banner.getsockname()[1],
              rf"^spoor crash: 127\.0\.0\.1:{banner.getsockname()[1]}: not a GDB server "
              r"\(it sent \"SSH-2\.0-OpenSSH_9\.2p1 Debian-2\\x0d\\x0a\"\)$", 5)]
    for port, pattern, limit in cases:
        start = time.monotonic()
        r = subprocess.run([SPOOR, "crash", "-e", str(elf), "--gdb", f"127.0.0.1:{port}"],
                           capture_output=True, text=True, timeout=60)
        took = time.monotonic() - start
        lines = r.stderr.splitlines()
        ok = (r.returncode == 2 and len(lines) == 1 and re.match(pattern, lines[0])
              and not r.stdout and took < harness.time_limit(0.0, limit))
        print(f"{'ok  ' if ok else 'FAIL'} error: exit {r.returncode} in {took:.1f} s: "
              f"{r.stderr.strip()!r}")
        failed += not ok
    silent.close()
    banner.close()
    return failed


if __name__ == "__main__":
    failed = check_errors() + check_cost() + check_backtraces()
    print("FAILED" if failed else "all passed", f"({failed} failures)")
    sys.exit(1 if failed else 0)
