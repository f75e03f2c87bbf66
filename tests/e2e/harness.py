"""End-to-end test harness: runs the example firmware under QEMU and drives gdb-multiarch.

Standard library only. Everything started here runs in its own process group, dies with the
Python process (PR_SET_PDEATHSIG) and is killed on the way out of every context manager, so a
failing or timed-out test leaves nothing behind.

Typical use (see docs/examples.md):

    elf, machine = example("calls", "m3")
    with Qemu(elf, machine, gdb=True) as qemu:
        text = run_gdb(elf, qemu.gdb_port, ["break level_three", "continue", "bt"])
    frames = parse_backtrace(text)

The tools must be installed: a missing QEMU, gdb or firmware is an error (HarnessError), never
a skip, so a CTest run without them fails loudly.
"""

import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

QEMU = "qemu-system-arm"
GDB = "gdb-multiarch"
NM = "arm-none-eabi-nm"

# Example core suffix -> QEMU machine. "m0plus" (the target library's name for Armv6-M) is
# accepted as an alias of "m0": the microbit's Cortex-M0 runs the same code.
MACHINES = {
    "m0": "microbit",
    "m0plus": "microbit",
    "m3": "mps2-an385",
    "m4f": "mps2-an386",
    "m33": "mps2-an505",
}

# Bounds on waits for things that end by themselves (a program that runs to its end, a gdb
# session): generous, so that a busy machine (make check beside other work) meets them too; a
# test that passes never waits them out.
DEFAULT_RUN_TIMEOUT = 60.0
DEFAULT_GDB_TIMEOUT = 90.0


class HarnessError(RuntimeError):
    """A tool, file or process did not do what the test needs."""


class HarnessTimeout(HarnessError):
    """A process was still running when its time was up (it has been killed)."""


# ---------------------------------------------------------------- time on a busy machine


def load_factor():
    """How many times slower than on an idle machine work runs here now: the one-minute load
    average per CPU, at least 1."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        return 1.0


def time_limit(promised_s, work_s):
    """A limit on a run's time: promised_s, what the program under test promises to wait at
    most (its own timeouts: not scaled), and work_s, what the rest takes on an idle machine
    with room to spare, scaled by load_factor()."""
    return promised_s + work_s * load_factor()


def wait_until(what, ready, timeout_s=60.0, interval_s=0.05):
    """Calls ready() until it returns something true (returned) or timeout_s pass
    (HarnessTimeout naming what): a wait that ends as soon as it can, bounded generously."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = ready()
        if value:
            return value
        if time.monotonic() > deadline:
            raise HarnessTimeout(f"{what}: not after {timeout_s} s")
        time.sleep(interval_s)


# ---------------------------------------------------------------- locating things


def require_tool(name):
    """Returns the full path of an installed program, or raises HarnessError."""
    path = shutil.which(name)
    if path is None:
        raise HarnessError(f"{name} is not installed (run scripts/deps.sh)")
    return path


def firmware_dir():
    """The firmware build directory, from $SPOOR_FIRMWARE_DIR (set by CTest)."""
    value = os.environ.get("SPOOR_FIRMWARE_DIR")
    if not value:
        raise HarnessError("SPOOR_FIRMWARE_DIR is not set (run the test through ctest)")
    return Path(value)


def machine_for(cpu):
    """QEMU machine name for an example core suffix ("m3" -> "mps2-an385")."""
    try:
        return MACHINES[cpu]
    except KeyError:
        raise HarnessError(f"no QEMU machine for core {cpu!r}; known: {sorted(MACHINES)}")


def elf_path(program, cpu):
    """Path of <program>-<cpu>.elf in the firmware build; raises if it was not built."""
    core = "m0" if cpu == "m0plus" else cpu
    path = firmware_dir() / "examples" / f"{program}-{core}.elf"
    if not path.is_file():
        raise HarnessError(f"{path} does not exist (was the firmware built?)")
    return path


def example(program, cpu):
    """(elf path, machine) for one example program on one core."""
    return elf_path(program, cpu), machine_for(cpu)


def symbol_addresses(elf):
    """Function and object addresses from arm-none-eabi-nm, with the Thumb bit cleared."""
    out = subprocess.run([require_tool(NM), str(elf)], check=True, capture_output=True,
                         text=True, timeout=DEFAULT_RUN_TIMEOUT).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[parts[2]] = int(parts[0], 16) & ~1
    return symbols


# ---------------------------------------------------------------- processes


def _die_with_parent():
    """Runs in the child before exec: SIGKILL it when the Python process dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _spawn(command, output_file):
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output_file,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_die_with_parent)


def _kill_group(process):
    """Kills the process group of `process` (its own session) and reaps the process."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _read_all(output_file):
    output_file.flush()
    output_file.seek(0)
    return output_file.read().decode("utf-8", errors="replace")


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _port_is_listening(port):
    """True when some socket listens on 127.0.0.1:port (read from /proc/net/tcp, no connect)."""
    wanted = f"0100007F:{port:04X}"
    try:
        with open("/proc/net/tcp", encoding="ascii") as table:
            next(table)
            for line in table:
                fields = line.split()
                if len(fields) > 3 and fields[1] == wanted and fields[3] == "0A":
                    return True
    except OSError:
        return False
    return False


def qemu_command(elf, machine, gdb_port=None, exec_log=None, semihosting_args=None,
                 icount=None):
    """The qemu-system-arm command line for one example (QEMU 7.2 flags).

    semihosting_args: e.g. "arg=crash,arg=badptr", the program's command line
    (SYS_GET_CMDLINE). icount=N: -icount shift=N,sleep=off, the virtual clock counted in
    instructions, so timer interrupts land at the same instruction in every run."""
    config = "enable=on,target=native" + (f",{semihosting_args}" if semihosting_args else "")
    command = [require_tool(QEMU), "-M", machine, "-nographic", "-monitor", "none",
               "-serial", "none", "-semihosting-config", config, "-kernel", str(elf)]
    if gdb_port is not None:
        command += ["-gdb", f"tcp:127.0.0.1:{gdb_port}", "-S"]
    if exec_log is not None:
        command += ["-singlestep", "-d", "exec,nochain,int", "-D", str(exec_log)]
    if icount is not None:
        command += ["-icount", f"shift={icount},sleep=off"]
    return command


@dataclass
class RunResult:
    returncode: int
    output: str  # QEMU's stdout and stderr together: semihosting output goes to both


class Qemu:
    """QEMU running one example, as a context manager that always kills it on exit.

    gdb=True: QEMU waits halted for a debugger on 127.0.0.1:<gdb_port>.
    exec_log=PATH: one-instruction blocks, every executed block and exception logged to PATH.
    semihosting_args: the program's command line, as "arg=WORD,arg=WORD".
    icount=N: a deterministic virtual clock (qemu_command).
    """

    def __init__(self, elf, machine, gdb=False, exec_log=None, semihosting_args=None,
                 icount=None):
        self.semihosting_args = semihosting_args
        self.icount = icount
        self.elf = Path(elf)
        self.machine = machine
        self.gdb = gdb
        self.exec_log = exec_log
        self.gdb_port = None
        self.process = None
        self._output = None

    def __enter__(self):
        attempts = 3 if self.gdb else 1
        for attempt in range(attempts):
            self.gdb_port = free_port() if self.gdb else None
            self._output = tempfile.TemporaryFile()
            command = qemu_command(self.elf, self.machine, self.gdb_port, self.exec_log,
                                   self.semihosting_args, self.icount)
            self.process = _spawn(command, self._output)
            if not self.gdb or self._wait_for_gdb_port():
                return self
            text = self.close()
            if attempt == attempts - 1:
                raise HarnessError(f"QEMU did not open its gdb port: {text.strip()}")
        return self

    def _wait_for_gdb_port(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _port_is_listening(self.gdb_port):
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def wait(self, timeout=DEFAULT_RUN_TIMEOUT):
        """Waits for the program to end; kills QEMU and raises HarnessTimeout if it does not."""
        try:
            returncode = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            text = self.close()
            raise HarnessTimeout(f"QEMU ({self.elf.name}) still running after {timeout} s; "
                                 f"output so far:\n{text}")
        return RunResult(returncode, _read_all(self._output))

    def output(self):
        return _read_all(self._output) if self._output is not None else ""

    def close(self):
        """Kills QEMU if it still runs; returns what it printed."""
        text = ""
        if self.process is not None:
            _kill_group(self.process)
        if self._output is not None:
            text = _read_all(self._output)
            self._output.close()
            self._output = None
        return text

    def __exit__(self, *exc):
        self.close()
        return False


def run_example(elf, machine, timeout=DEFAULT_RUN_TIMEOUT, exec_log=None):
    """Runs an example to its end; returns its exit status and output."""
    with Qemu(elf, machine, exec_log=exec_log) as qemu:
        return qemu.wait(timeout)


def run_gdb(elf, port, commands, timeout=DEFAULT_GDB_TIMEOUT):
    """Runs gdb-multiarch in batch mode against QEMU's gdbstub; returns what it printed.

    The session is: file ELF, target remote 127.0.0.1:PORT, then `commands` in order.
    """
    command = [require_tool(GDB), "-batch", "-nx", "-ex", "set pagination off",
               "-ex", "set confirm off", "-ex", f"file {elf}",
               "-ex", f"target remote 127.0.0.1:{port}"]
    for line in commands:
        command += ["-ex", line]
    with tempfile.TemporaryFile() as output_file:
        process = _spawn(command, output_file)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise HarnessTimeout(f"gdb still running after {timeout} s; output so far:\n"
                                 f"{_read_all(output_file)}")
        finally:
            _kill_group(process)
        return _read_all(output_file)


@dataclass
class DebugSession:
    gdb_output: str
    qemu: RunResult


def debug_example(elf, machine, commands, timeout=DEFAULT_GDB_TIMEOUT):
    """Starts QEMU halted, runs gdb `commands` against it, then lets the program finish.

    gdb detaches when its commands are done, so the program runs on to its exit.
    """
    with Qemu(elf, machine, gdb=True) as qemu:
        text = run_gdb(elf, qemu.gdb_port, commands, timeout)
        return DebugSession(text, qemu.wait(timeout))


# ---------------------------------------------------------------- spoor and gdb on a file

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def spoor(*args, timeout=120):
    """Runs the spoor under test ($SPOOR_BIN) with args; its CompletedProcess (text)."""
    return subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def gdb_core(elf, core, commands, timeout=120, source=None):
    """What gdb-multiarch prints with the ELF and a core file loaded, then `commands` (with
    source: a gdb script sourced first)."""
    command = [require_tool(GDB), "-batch", "-nx", "-ex", "set pagination off"]
    if source:
        command += ["-ex", f"source {source}"]
    command += ["-ex", f"file {elf}", "-ex", f"core-file {core}"]
    for line in commands:
        command += ["-ex", line]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout).stdout


def gdb_via_server(elf, dump_path, commands, extra=()):
    """gdb-multiarch's output for commands, connected to `spoor gdbserver` serving dump_path
    (extra: more spoor gdbserver options, e.g. --threads)."""
    server = subprocess.Popen([SPOOR, "gdbserver", "-e", str(elf), "--port", "0", *extra,
                               str(dump_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        line = server.stdout.readline()
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not match:
            raise AssertionError(f"spoor gdbserver said {line!r}: {server.stderr.read()}")
        return run_gdb(elf, int(match.group(1)), commands, timeout=60)
    finally:
        server.kill()
        server.communicate()


def fp_values(text):
    """`info registers s0 ... fpscr` output: name -> the raw 32-bit value."""
    got = {}
    for line in text.splitlines():
        m = re.match(r"^(s\d+|fpscr)\s+(\S+).*?(?:\(raw (0x[0-9a-f]+)\))?$", line)
        if m:
            got[m.group(1)] = int(m.group(3) or m.group(2), 16)
    return got


# ---------------------------------------------------------------- parsing

_FRAME = re.compile(r"^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(<signal handler called>|[^\s(]+)")


def parse_backtraces(text):
    """Every `bt` in gdb output, each as the list of frame function names, innermost first.

    Exception frames appear as "<signal handler called>", unknown code as "??".
    """
    traces = []
    for line in text.splitlines():
        match = _FRAME.match(line)
        if not match:
            continue
        if int(match.group(1)) == 0:
            traces.append([])
        if traces:
            traces[-1].append(match.group(2))
    return traces


def parse_backtrace(text):
    """The last `bt` in gdb output as a list of function names (see parse_backtraces)."""
    traces = parse_backtraces(text)
    if not traces:
        raise HarnessError(f"no backtrace in gdb output:\n{text}")
    return traces[-1]


@dataclass
class ExceptionEntry:
    number: int        # exception number (15 = SysTick, 16 + n = IRQ n)
    position: int      # index into ExecTrace.pcs of the first instruction run after entry
    handler: int       # handler address loaded from the vector table (Thumb bit cleared)


@dataclass
class ExecTrace:
    pcs: list = field(default_factory=list)          # every executed instruction, in order
    exceptions: list = field(default_factory=list)   # ExceptionEntry, in order


# QEMU 7.2, -d exec: "Trace 0: 0x7f... [cs_base/pc/flags/cflags] symbol"
_EXEC_LINE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
# -d int on M-profile: "...taking pending [non]secure exception 15" then "...loaded new PC 0x145"
_EXCEPTION_TAKEN = re.compile(r"^\.\.\.taking pending (?:non)?secure exception (\d+)")
_HANDLER_LOADED = re.compile(r"^\.\.\.loaded new PC (0x[0-9a-fA-F]+)")


def parse_exec_log(path):
    """Executed PCs and exception entries from a log of `-singlestep -d exec,nochain,int`.

    With -singlestep every translation block is one instruction, and with nochain every
    execution of a block is logged, so the PCs are the executed instructions in order.
    """
    trace = ExecTrace()
    pending = None
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            match = _EXEC_LINE.match(line)
            if match:
                trace.pcs.append(int(match.group(1), 16))
                continue
            match = _EXCEPTION_TAKEN.match(line)
            if match:
                pending = int(match.group(1))
                continue
            match = _HANDLER_LOADED.match(line)
            if match and pending is not None:
                trace.exceptions.append(
                    ExceptionEntry(pending, len(trace.pcs), int(match.group(1), 16) & ~1))
                pending = None
    return trace


# ---------------------------------------------------------------- by hand


def _main(argv):
    """python3 tests/e2e/harness.py PROGRAM CORE: runs one example and prints its output."""
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print("usage: harness.py PROGRAM CORE   (e.g. harness.py calls m3; needs "
              "SPOOR_FIRMWARE_DIR=<build>/firmware)")
        return 0 if argv[1:] in (["-h"], ["--help"]) else 2
    elf, machine = example(argv[1], argv[2])
    result = run_example(elf, machine)
    sys.stdout.write(result.output)
    print(f"[exit status {result.returncode}]")
    return result.returncode


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
