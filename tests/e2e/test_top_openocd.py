"""spoor top -W against a scripted OpenOCD telnet peer.

OpenOCD cannot run here (no probe), so this test's peer plays its telnet server as OpenOCD's
manual describes it ("Telnet", "Memory access commands"): telnet negotiation on connect, the
"> " prompt, the command line echoed, `mdw ADDR COUNT` answered with lines of
"0xADDR: WORD WORD ...", `mww`/`mmw` silent on success, Tcl procedures of the configuration
(orbtop-rtos's `rtos_dwt_config ADDR`, `exception_trace_enable`). Its memory is the RTX5-shaped
test firmware's .data (tests/e2e/fw/rtos_shapes_fw.c, extracted with arm-none-eabi-objcopy) and
a register file for the System Control Space (DWT_CTRL says 4 comparators).

Checked: names and RTX5 priority names read over telnet; a priority the target changes after
spoor read the TCB shows from the next interval report on (the re-read), and so does a state that
changes while the thread does not run; one mdw per new thread (plus one for
the idle pointer; the memory is 64 KiB of RAM holding .data, zeros after it); --setup v7m leaves ITM/DWT registers as the ARMv7-M ARM encodings say, the
watched address being gdb-multiarch's `&osRtxInfo.thread.run.curr`; --setup proc calls the
procedures; a comparator the core lacks is refused. With --mem as well, the image is a layer in
front of OpenOCD (a priority changed in the image only is the one shown; OpenOCD is asked for no
byte the image holds).
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import require_tool, symbol_addresses  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402
from test_top_rtos_shapes import build_with_data, stream  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
IAC, WILL, DONT = 0xFF, 0xFB, 0xFE
# the RTX5-shaped firmware's threads (tests/e2e/fw/rtos_shapes_fw.c): name, priority, entry
RTX5_WANT = {"main_thread": ("main", "osPriorityNormal", "app_main"),
             "sensor": ("sensor_task", "osPriorityHigh", "sensor_thread"),
             "idle": ("osRtxIdleThread", "osPriorityIdle", "osRtxIdleThread")}

class OpenOcdPeer:
    def __init__(self, image, base, numcomp=4):
        self.image, self.base = bytearray(image), base
        # n: (addr, byte) or [(addr, byte), ...]: the target writes after the n-th mdw
        self.after_mdw = {}
        self.regs = {0xE0001000: numcomp << 28}
        self.commands = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def word(self, addr):
        if 0xE0000000 <= addr:
            return self.regs.get(addr, 0)
        off = addr - self.base
        if 0 <= off and off + 4 <= len(self.image):
            return int.from_bytes(self.image[off:off + 4], "little")
        return None

    def answer(self, line):
        words = line.split()
        if not words:
            return ""
        if words[0] == "mdw":
            change = self.after_mdw.pop(sum(c.startswith("mdw") for c in self.commands) - 1, None)
            addr, count = int(words[1], 0), int(words[2], 0) if len(words) > 2 else 1
            out = []
            for row in range(0, count, 8):
                values = [self.word(addr + 4 * (row + i)) for i in range(min(8, count - row))]
                if None in values:
                    return f"Error reading memory at 0x{addr:08x}\r\n"
                out.append(f"0x{addr + 4 * row:08x}: " + "".join(f"{v:08x} " for v in values))
            # the target runs: memory changes after this read (one (addr, byte) or a list)
            for at, byte in ([change] if isinstance(change, tuple) else change or []):
                self.image[at - self.base] = byte
            return "\r\n".join(out) + "\r\n"
        if words[0] == "mww":
            self.regs[int(words[1], 0)] = int(words[2], 0)
            return ""
        if words[0] == "mmw":
            addr, setbits, clearbits = (int(w, 0) for w in words[1:4])
            self.regs[addr] = (self.regs.get(addr, 0) & ~clearbits) | setbits
            return ""
        if words[0] in ("rtos_dwt_config", "exception_trace_enable"):
            return ""
        return f'invalid command name "{words[0]}"\r\n'

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(bytes([IAC, WILL, 1, IAC, WILL, 3, IAC, DONT, 0x22])
                             + b"Open On-Chip Debugger\r\n> ")
                pending = b""
                while True:
                    data = conn.recv(4096)
                    if not data:
                        break
                    pending += data
                    while b"\n" in pending:
                        raw, pending = pending.split(b"\n", 1)
                        line = raw.decode().strip()
                        self.commands.append(line)
                        conn.sendall((line + "\r\n" + self.answer(line) + "> ").encode())


def gdb_address(elf, expression):
    out = subprocess.run([require_tool("gdb-multiarch"), "-batch", "-nx", "-ex",
                          f"print/x (unsigned long)&{expression}", str(elf)],
                         capture_output=True, text=True, timeout=60).stdout
    return int(re.search(r"= (0x[0-9a-f]+)", out).group(1), 16)


def gdb_print(elf, expression):
    """A string member as gdb prints it (the ELF's .data: the pointer and the string)."""
    out = subprocess.run([require_tool("gdb-multiarch"), "-batch", "-nx", "-ex",
                          f"print {expression}", str(elf)],
                         capture_output=True, text=True, timeout=60).stdout
    return re.search(r'"([^"]*)"', out).group(1)


def gdb_symbol(elf, expression):
    """The function a code address holds, as gdb's info symbol names it."""
    out = subprocess.run([require_tool("gdb-multiarch"), "-batch", "-nx", "-ex",
                          f"info symbol {expression}", str(elf)],
                         capture_output=True, text=True, timeout=60).stdout
    return out.split()[0] if out.split() else None


def rtx5_fixture(work):
    """The RTX5-shaped firmware, its .data, its symbols, the TCBs the stream switches to (in
    order; not_a_thread is no RTX5 thread) and the stream, in work."""
    elf, data = build_with_data("RTX5", work)
    symbols = symbol_addresses(elf)
    threads = ["main_thread", "sensor", "idle", "not_a_thread"]
    itm = work / "rtx5.itm"
    itm.write_bytes(stream([symbols[t] for t in threads]))
    return elf, data, symbols, threads, itm


def check_v7m_setup(regs, watch):
    """The registers --setup v7m -E leaves (regs: address -> value written), as the ARMv7-M ARM
    encodes them: DEMCR.TRCENA, the ITM/DWT lock access keys, ITM_TCR ITMENA|TSENA|SYNCENA|
    TXENA with TraceBusID 1, DWT_CTRL CYCCNTENA|SYNCTAP|EXCTRCENA, COMP1 = watch, MASK1 = 0,
    FUNCTION1 0x80D (0b1101: sample data for write transfers, DATAVSIZE word)."""
    check(regs.get(0xE000EDFC, 0) & 0x01000000, "DEMCR.TRCENA not set")
    check(regs.get(0xE0000FB0) == 0xC5ACCE55 and regs.get(0xE0001FB0) == 0xC5ACCE55,
          "ITM/DWT not unlocked")
    check(regs.get(0xE0000E80) == 0x0001000F, f"ITM_TCR {regs.get(0xE0000E80, 0):#x}")
    check(regs.get(0xE0001000) == 0x40010401, f"DWT_CTRL {regs.get(0xE0001000, 0):#x}")
    check(regs.get(0xE0001030) == watch, f"DWT_COMP1 {regs.get(0xE0001030, 0):#x} != "
          f"{watch:#x}")
    check(regs.get(0xE0001034) == 0 and regs.get(0xE0001038) == 0x80D,
          f"DWT_MASK1/FUNCTION1 {regs.get(0xE0001034)} {regs.get(0xE0001038, 0):#x}")


def top(elf, itm, *extra):
    return subprocess.run([SPOOR, "top", "-e", str(elf), "--input", str(itm), "-F", "1000000",
                           *extra], capture_output=True, text=True, timeout=60)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data, symbols, threads, itm = rtx5_fixture(work)

        ram = data.read_bytes().ljust(0x10000, b"\0")  # 64 KiB of RAM: .data, then zeros
        peer = OpenOcdPeer(ram, 0x20000000)
        result = top(elf, itm, "-W", str(peer.port), "--stats", "-j", str(work / "o.jsonl"))
        check(result.returncode == 0, f"spoor top -W: {result.returncode} {result.stderr}")
        lines = [json.loads(x) for x in (work / "o.jsonl").read_text().splitlines()]
        got = {t["tcb"]: (t["name"], t["prio_name"], t["func"]) for t in lines[-1]["threads"]}
        for symbol, expect in RTX5_WANT.items():
            check(got.get(f"0x{symbols[symbol]:08x}") == expect,
                  f"{symbol}: {got.get(f'0x{symbols[symbol]:08x}')} != {expect}")
        mdws = [c for c in peer.commands if c.startswith("mdw")]
        # the idle pointer, then each new TCB once: a 256-byte page per mdw, the cache dropped
        # before each new TCB (the target runs); names are in flash, which the ELF serves
        check(len(mdws) == 1 + len(threads), f"{len(mdws)} mdw commands: {mdws}")
        check(re.search(r"(\d+) round trips", result.stderr).group(1) == str(len(mdws)),
              f"--stats: {result.stderr}")
        # the bytes: what the mdw commands the peer answered asked for (COUNT words each)
        words = sum(int(c.split()[2], 0) for c in mdws)
        check(re.search(r"round trips, (\d+) bytes", result.stderr).group(1) == str(4 * words),
              f"--stats bytes, {4 * words} asked for by {mdws}: {result.stderr}")

        # -W and --mem together: the image is a layer in front of the live target
        # (docs/memory.md "Layers"): main_thread's priority changed to osPriorityHigh (40) in
        # the image only is the one shown, and no byte the image holds is asked of OpenOCD
        main_tcb = f"0x{symbols['main_thread']:08x}"
        image = bytearray(ram)
        image[gdb_address(elf, "main_thread.priority") - 0x20000000] = 40
        (work / "ram40.bin").write_bytes(bytes(image))
        layered = OpenOcdPeer(ram, 0x20000000)
        result = top(elf, itm, "-W", str(layered.port), "--mem",
                     f"0x20000000:{work / 'ram40.bin'}", "-j", str(work / "m.jsonl"))
        shown = [(t["prio"], t["prio_name"]) for x in (work / "m.jsonl").read_text().splitlines()
                 for t in json.loads(x)["threads"] if t["tcb"] == main_tcb]
        mdws = [c for c in layered.commands if c.startswith("mdw")]
        check(result.returncode == 0 and shown and set(shown) == {(40, "osPriorityHigh")}
              and not mdws, f"-W with --mem: main_thread's priority {shown}, OpenOCD asked "
              f"{mdws}: {result.stderr}")

        # a priority that changes while spoor top runs (priority inheritance): main_thread's
        # priority becomes osPriorityHigh (40) right after spoor read its TCB; the re-read at
        # the end of the interval it ran in shows it
        prio_at = gdb_address(elf, "main_thread.priority")
        changing = OpenOcdPeer(ram, 0x20000000)
        changing.after_mdw = {1: (prio_at, 40)}  # mdw 0: the idle pointer, 1: main's TCB
        result = top(elf, itm, "-W", str(changing.port), "-I", "1", "-j",
                     str(work / "p.jsonl"))
        check(result.returncode == 0, f"priority change: {result.stderr}")
        seen = [next((t["prio"], t["prio_name"]) for t in json.loads(x)["threads"]
                     if t["tcb"] == f"0x{symbols['main_thread']:08x}")
                for x in (work / "p.jsonl").read_text().splitlines()
                if f"0x{symbols['main_thread']:08x}" in x]
        check(seen and seen[0] == (40, "osPriorityHigh") and seen[-1] == (40, "osPriorityHigh"),
              f"main_thread's priority over the intervals: {seen}")

        # a TCB reused: right after spoor read main_thread's TCB, the thread ends and a new one
        # (worker's name pointer and entry function) takes the same TCB; the re-read at the
        # end of the interval shows the new thread, as gdb names worker's members
        reused = OpenOcdPeer(ram, 0x20000000)
        writes = []
        for member in ("name", "thread_addr"):
            src, dst = (gdb_address(elf, f"{t}.{member}") for t in ("worker", "main_thread"))
            word = ram[src - 0x20000000:src - 0x20000000 + 4]
            writes += [(dst + k, word[k]) for k in range(4)]
        reused.after_mdw = {1: writes}  # mdw 1: main's TCB
        want = (gdb_print(elf, "worker.name"), gdb_symbol(elf, "worker.thread_addr"))
        result = top(elf, itm, "-W", str(reused.port), "-I", "1", "-j", str(work / "r.jsonl"))
        main_tcb = f"0x{symbols['main_thread']:08x}"
        seen = [next((t["name"], t["func"]) for t in json.loads(x)["threads"]
                     if t["tcb"] == main_tcb)
                for x in (work / "r.jsonl").read_text().splitlines() if main_tcb in x]
        check(result.returncode == 0 and want == ("worker", "worker_thread") and seen
              and seen[0] == want and seen[-1] == want,
              f"a reused TCB: {seen}, gdb says {want}: {result.stderr}")

        # a state that changes while the thread does not run: sensor runs in interval 2 only;
        # after spoor read idle's TCB (interval 3) sensor starts a delay (osDelay: its state byte
        # becomes osRtxThreadWaitingDelay, rtx_os.h's osRtxThreadBlocked | 0x10U). The re-read
        # at the end of interval 3 and after shows it sleeping, in the JSON and the console row
        delayed = OpenOcdPeer(ram, 0x20000000)
        delayed.after_mdw = {5: (gdb_address(elf, "sensor.state"), 0x13)}  # 5: idle's TCB
        result = top(elf, itm, "-W", str(delayed.port), "-I", "1", "-j", str(work / "s.jsonl"))
        sensor_tcb = f"0x{symbols['sensor']:08x}"
        seen = [next((t["state"], t["cycles"]) for t in json.loads(x)["threads"]
                     if t["tcb"] == sensor_tcb)
                for x in (work / "s.jsonl").read_text().splitlines() if sensor_tcb in x]
        rows = [line for line in result.stdout.splitlines() if f"| {sensor_tcb} |" in line]
        # intervals 2 (sensor runs), 3 and 4 (it does not), then the whole run's summary
        check(result.returncode == 0 and seen[:3] == [("ready", 1000), ("sleeping", 0),
                                                      ("sleeping", 0)] and
              seen[-1][0] == "sleeping" and rows and "| sleeping " in rows[-1],
              f"a thread's state changed while it did not run: {seen} {rows[-1:]}: "
              f"{result.stderr}")

        watch = gdb_address(elf, "osRtxInfo.thread.run.curr")
        peer.commands.clear()
        result = top(elf, itm, "-W", f"127.0.0.1:{peer.port}", "--setup", "v7m", "-E")
        check(result.returncode == 0, f"--setup v7m: {result.stderr}")
        check_v7m_setup(peer.regs, watch)

        peer.commands.clear()
        result = top(elf, itm, "-W", str(peer.port), "--setup", "proc", "-E")
        check(result.returncode == 0 and f"rtos_dwt_config 0x{watch:08x}" in peer.commands
              and "exception_trace_enable" in peer.commands,
              f"--setup proc: {peer.commands} {result.stderr}")

        small = OpenOcdPeer(ram, 0x20000000, numcomp=2)
        result = top(elf, itm, "-W", str(small.port), "--setup", "v8m", "--comparator", "3")
        check(result.returncode == 2 and "no comparator 3" in result.stderr,
              f"a missing comparator: {result.returncode} {result.stderr}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
