"""spoor top -W tcl:PORT against a scripted OpenOCD Tcl RPC server.

OpenOCD cannot run here (no probe). The peer (tests/e2e/openocd_tcl_peer.tcl) is a real Tcl
interpreter (tclsh) behind the protocol of OpenOCD's manual, "Tcl RPC server": a message up
to 0x1a is evaluated, its result or its error message comes back followed by 0x1a, nothing
telling the two apart (as OpenOCD's src/server/tcl_server.c does); read_memory, write_memory,
mmw and version as the manual describes them. Being an interpreter, it checks that what spoor
sends is Tcl that does what spoor means (the catch around each command), not just a string
this test expects. Memory: the RTX5-shaped test firmware's .data, as in test_top_openocd.py.

Checked: the threads' names, RTX5 priority names and entry functions are those of the
firmware's source and the same as offline from the .data image (--mem); every message is one
command inside catch; a new TCB costs one read_memory of its 256-byte page (plus `version` at
connect and one for the idle pointer), and --stats counts exactly the messages the peer got;
--setup v7m writes what the ARMv7-M ARM says (test_top_openocd.check_v7m_setup) with
write_memory; --setup proc calls the procedures. Errors, one line each and exit 2: the
procedure missing (Tcl's error message comes back), a write OpenOCD refuses, the connection
closed by the peer at connect and in the middle of a run, nothing listening, a telnet port
given as the Tcl port; a read error for one TCB is a warning and the run goes on."""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import free_port, require_tool  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402
from test_top_rtos_shapes import stream  # noqa: E402
from test_top_openocd import (RTX5_WANT, OpenOcdPeer, check_v7m_setup, gdb_address,  # noqa: E402
                              rtx5_fixture, top)

PEER = Path(__file__).resolve().parent / "openocd_tcl_peer.tcl"
WRAPPED = re.compile(r'^if \{\[catch \{(.*)\} spoor_r\]\} \{set spoor_r "E\$spoor_r"\} else '
                     r'\{set spoor_r "O\$spoor_r"\}$')


class TclPeer:
    """The Tcl peer as a process; messages() are the commands it received, unwrapped."""

    def __init__(self, work, ram, base, *options):
        self.log = work / f"peer{len(list(work.glob('peer*.log')))}.log"
        self.log.write_text("")
        self.proc = subprocess.Popen([require_tool("tclsh"), str(PEER), str(ram), hex(base),
                                      str(self.log), *options],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def lines(self):
        return self.log.read_text().splitlines()

    def messages(self):
        """The commands inside catch; a message that is not wrapped is a failure."""
        out = []
        for line in self.lines():
            if line.startswith("= "):
                continue
            m = WRAPPED.match(line)
            check(m, f"a message not inside catch: {line!r}")
            out.append(m.group(1) if m else line)
        return out

    def registers(self):
        return {int(a, 16): int(v, 16) for a, v in
                (line.split()[1:] for line in self.lines() if line.startswith("= "))}

    def close(self):
        self.proc.kill()
        self.proc.wait()


def one_error_line(result, pattern, what):
    check(result.returncode == 2 and re.fullmatch(pattern, result.stderr.rstrip("\n"))
          and result.stderr.count("\n") == 1,
          f"{what}: exit {result.returncode}, stderr {result.stderr!r}, want {pattern}")


def threads_of(jsonl):
    return [[(t["tcb"], t["name"], t["func"], t["prio"], t["prio_name"]) for t in x["threads"]]
            for x in map(json.loads, jsonl.read_text().splitlines())]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data, symbols, threads, itm = rtx5_fixture(work)
        ram = work / "ram.bin"
        ram.write_bytes(data.read_bytes().ljust(0x10000, b"\0"))
        peers = []

        def peer(*options, image=ram):
            peers.append(TclPeer(work, image, 0x20000000, *options))
            return peers[-1]

        try:
            p = peer()
            result = top(elf, itm, "-W", f"tcl:127.0.0.1:{p.port}", "--stats", "-j",
                         str(work / "tcl.jsonl"))
            check(result.returncode == 0, f"spoor top -W tcl: {result.returncode} "
                  f"{result.stderr}")
            offline = top(elf, itm, "--mem", f"0x20000000:{data}", "-j",
                          str(work / "mem.jsonl"))
            check(offline.returncode == 0, f"offline: {offline.stderr}")
            live = threads_of(work / "tcl.jsonl")
            check(live == threads_of(work / "mem.jsonl"),
                  f"over Tcl {live} != from the .data image {threads_of(work / 'mem.jsonl')}")
            got = {t[0]: (t[1], t[4], t[2]) for t in live[-1]}
            for symbol, expect in RTX5_WANT.items():
                check(got.get(f"0x{symbols[symbol]:08x}") == expect,
                      f"{symbol}: {got.get(f'0x{symbols[symbol]:08x}')} != {expect}")
            messages = p.messages()
            reads = [m for m in messages if m.startswith("read_memory")]
            check(messages[0] == "version" and len(reads) == len(messages) - 1,
                  f"messages: {messages}")
            # the idle pointer, then each new TCB once: the 256-byte pages it spans in one read
            check(len(reads) == 1 + len(threads)
                  and all(re.fullmatch(r"read_memory 0x[0-9a-f]{6}00 32 (64|128)", r) for r in reads),
                  f"{len(reads)} reads: {reads}")
            check(re.search(r"(\d+) round trips", result.stderr).group(1) == str(len(messages)),
                  f"--stats: {result.stderr} for {len(messages)} messages")

            watch = gdb_address(elf, "osRtxInfo.thread.run.curr")
            p = peer()
            result = top(elf, itm, "-W", f"tcl:{p.port}", "--setup", "v7m", "-E")
            check(result.returncode == 0, f"--setup v7m over Tcl: {result.stderr}")
            check_v7m_setup(p.registers(), watch)
            writes = [m for m in p.messages() if not m.startswith(("read_memory", "version"))]
            check(writes and all(re.fullmatch(r"write_memory 0xe000[0-9a-f]{4} 32 "
                                              r"\{0x[0-9a-f]{8}\}", w) for w in writes),
                  f"--setup v7m messages: {writes}")

            p = peer("-procs")
            result = top(elf, itm, "-W", f"tcl:{p.port}", "--setup", "proc", "-E")
            check(result.returncode == 0
                  and p.messages()[1:3] == [f"rtos_dwt_config 0x{watch:08x}",
                                            "exception_trace_enable"],
                  f"--setup proc: {p.messages()} {result.stderr}")

            # errors, one line each
            p = peer()
            one_error_line(top(elf, itm, "-W", f"tcl:{p.port}", "--setup", "proc"),
                           rf'spoor top: openocd tcl 127\.0\.0\.1:{p.port}: rtos_dwt_config '
                           rf'0x{watch:08x}: invalid command name "rtos_dwt_config"',
                           "a procedure OpenOCD's configuration lacks")
            p = peer("-fail-write", "0xE0001038")
            one_error_line(top(elf, itm, "-W", f"tcl:{p.port}", "--setup", "v7m"),
                           rf"spoor top: --setup: openocd tcl 127\.0\.0\.1:{p.port}: "
                           r"write_memory 0xe0001038 32 \{0x00000000\}: write_memory: failed "
                           r"to write memory", "a write OpenOCD refuses")
            p = peer("-close-after", "1")
            one_error_line(top(elf, itm, "-W", f"tcl:{p.port}"),
                           rf"spoor top: openocd tcl 127\.0\.0\.1:{p.port}: connection closed",
                           "closed at connect")
            p = peer("-close-after", "4")  # version, the idle pointer, one TCB, then gone
            result = top(elf, itm, "-W", f"tcl:{p.port}", "-j", str(work / "dead.jsonl"))
            one_error_line(result, rf"spoor top: openocd tcl 127\.0\.0\.1:{p.port}: "
                           r"connection closed", "closed in the middle of a run")
            check(len(p.messages()) == 4, f"after the connection closed: {p.messages()}")
            refused = free_port()
            one_error_line(top(elf, itm, "-W", f"tcl:{refused}"),
                           rf"spoor top: openocd tcl 127\.0\.0\.1:{refused}: Connection refused",
                           "nothing listening")
            telnet = OpenOcdPeer(ram.read_bytes(), 0x20000000)
            one_error_line(top(elf, itm, "-W", f"tcl:{telnet.port}"),
                           rf"spoor top: openocd tcl 127\.0\.0\.1:{telnet.port}: a telnet "
                           r"server, not the Tcl RPC server \(-W PORT for telnet\)",
                           "the telnet port as the Tcl port")

            # a TCB read OpenOCD fails (the peer's memory ends with .data): a warning naming the
            # error reply, the thread shown as ?, the others read as before
            p = peer(image=data)
            beyond = 0x20000000 + 0x8000
            itm2 = work / "beyond.itm"
            itm2.write_bytes(stream([symbols["main_thread"], beyond, symbols["sensor"]]))
            result = top(elf, itm2, "-W", f"tcl:{p.port}", "-j", str(work / "beyond.jsonl"))
            names = {t[0]: t[1] for t in threads_of(work / "beyond.jsonl")[-1]}
            check(result.returncode == 0 and "read_memory: failed to read memory" in result.stderr
                  and names.get(f"0x{beyond:08x}") == "?"
                  and names.get(f"0x{symbols['sensor']:08x}") == "sensor_task",
                  f"a failed TCB read: {result.returncode} {result.stderr} {names}")
        finally:
            for p in peers:
                p.close()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
