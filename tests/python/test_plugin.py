"""spoor's pytest plugin (spoor.pytest_plugin, the pytest11 entry point "spoor"), run by pytest's
pytester on test files written here, against real firmware in QEMU through its gdbstub.

- Without --spoor-gdb the plugin does nothing: a failing test's report has no section, no page
  is written, and the installed entry point is what loads it.
- The crash example on the M3, stopped by gdb-multiarch at the first instruction of its fault
  handler (the bus-fault scenario): a failing test (and a setup error) gets the section, with
  the fault type of the handler gdb stopped in, the CFSR bits of the value gdb read (decoded
  here from the ARMv7-M ARM table), BFAR as gdb read it, and gdb's `bt` function by function
  with its files and lines; a passing test gets nothing (no section under -rA, no page); the
  target is left halted where it was (gdb's `bt` afterwards is the same).
- The example scheduler (sched) halted by gdb in sched_checkpoint: the spoor_target fixture's
  thread helpers, the running thread being the one gdb reads from sched_current.
- tests/e2e/fw/rtos_ctx_fw.c built for FreeRTOS, halted by gdb in fw_checkpoint: the stack
  margins of assert_stack_margin against each task's never-written stack counted here on gdb's
  RAM dump.
- The example scheduler running (QEMU's monitor says so) when a test fails: read, and left
  halted ("paused" in the monitor).
- An unreachable GDB server: the test's own failure is reported, with a section that says so.
- Usage errors: --spoor-gdb without --spoor-elf; spoor_target without the options."""
import importlib.metadata
import re

import pytest

import harness
import support
# the fault handlers, and the ARMv7-M ARM's CFSR bits
from test_crash_scs import BFARVALID, CFSR_BITS, HANDLERS as FAULT_HANDLERS

pytest_plugins = ["pytester"]


SECTION = "spoor: the target when the test failed"
SIGNAL = "<signal handler called>"

TESTS = '''
import pytest

def test_boots():
    assert True

def test_reads_sensor():
    assert 1 + 1 == 3, "the sensor did not answer"

@pytest.fixture
def flashed():
    raise RuntimeError("flashing failed")

def test_after_flash(flashed):
    pass
'''

_GDB_FRAME = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(<signal handler called>|\S+)"
                        r"(?: \(.*\))?(?: at (\S+):(\d+))?$")
_SECTION_FRAME = re.compile(r"^  #(\d+)\s+(?:<exception \d+: \w+>|0x[0-9a-f]+ (\S+)"
                            r"(?: at (\S+):(\d+))?)")


def gdb_frames(text):
    """The last `bt` of gdb's output: [(function, file, line)], <signal handler called> rows
    as (SIGNAL, None, None)."""
    frames = []
    for line in text.splitlines():
        m = _GDB_FRAME.match(line)
        if m:
            if m.group(1) == "0":
                frames = []
            frames.append((m.group(2), m.group(3), int(m.group(4)) if m.group(4) else None))
    return frames


def sections(output, name=SECTION):
    """The text of every section called name in pytest's terminal output."""
    found = []
    for m in re.finditer(rf"^-+ {re.escape(name)} -+$\n(.*?)(?=^[-=_]{{3,}} )", output,
                         re.M | re.S):
        found.append(m.group(1))
    return found


def section_frames(text):
    frames = []
    for line in text.splitlines():
        m = _SECTION_FRAME.match(line)
        if m:
            frames.append((m.group(2), m.group(3), int(m.group(4)) if m.group(4) else None)
                          if m.group(2) else (SIGNAL, None, None))
    return frames


def docs_block(containing):
    """The ``` block of docs/python.md that contains the text."""
    blocks = re.findall(r"^```\w*\n(.*?)^```$", (support.SOURCE / "docs" / "python.md").read_text(),
                        re.M | re.S)
    found = [b for b in blocks if containing in b]
    assert len(found) == 1, f"{len(found)} blocks of docs/python.md contain {containing!r}"
    return found[0]


def run_subprocess(pytester, monkeypatch, *args):
    """pytest in a subprocess: it loads libspoor, which with an ASan build needs the sanitizer
    preload (only there: QEMU and gdb must not get it)."""
    with monkeypatch.context() as env:
        for key, value in support.PRELOAD.items():
            env.setenv(key, value)
        return pytester.runpytest_subprocess(*args)


def test_entry_point_installed():
    points = importlib.metadata.entry_points(group="pytest11")
    assert [p.value for p in points if p.name == "spoor"] == ["spoor.pytest_plugin"]


def test_inert_without_options(pytester):
    pytester.makepyfile(TESTS)
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--spoor-gdb=HOST:PORT" in help_text  # the entry point loaded the plugin
    assert "--spoor-gdb" not in pytester.runpytest("-p", "no:spoor", "--help").stdout.str()
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    assert SECTION not in result.stdout.str() and "spoor_report" not in result.stdout.str()
    assert not (pytester.path / "spoor-reports").exists()


def test_usage_errors(pytester):
    pytester.makepyfile("def test_target(spoor_target):\n    spoor_target.crash()\n")
    result = pytester.runpytest("--spoor-gdb", "127.0.0.1:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--spoor-gdb needs --spoor-elf FW.elf" in result.stderr.str()
    result = pytester.runpytest("--spoor-elf", str(pytester.path / "nothing.elf"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "nothing.elf: no such file" in result.stderr.str()
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*spoor_target fixture needs --spoor-gdb HOST:PORT and "
                                 "--spoor-elf FW.elf*"])


def test_unreachable_target(pytester):
    elf, _ = harness.example("crash", "m3")
    pytester.makepyfile(TESTS)
    port = harness.free_port()
    result = pytester.runpytest(f"--spoor-elf={elf}", f"--spoor-gdb=127.0.0.1:{port}")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    assert "AssertionError: the sensor did not answer" in out
    found = sections(out)
    assert len(found) == 2, out
    for text in found:
        assert f"could not read the target: 127.0.0.1:{port}" in text, text


def stop_at_fault(qemu, elf, syms):
    text = harness.run_gdb(elf, qemu.gdb_port,
                           [f"break *{h}" for h in FAULT_HANDLERS if h in syms] + [
                               "continue", "bt", "x/wx 0xE000ED28", "x/wx 0xE000ED38",
                               "delete", "disconnect"])
    handler = re.search(r"^Breakpoint \d+, (\w+) \(\)", text, re.M)
    cfsr = re.search(r"^0xe000ed28:\s+(0x[0-9a-f]+)", text, re.M)
    bfar = re.search(r"^0xe000ed38:\s+(0x[0-9a-f]+)", text, re.M)
    if not (handler and cfsr and bfar):
        raise harness.HarnessError(f"gdb did not stop in a fault handler:\n{text}")
    return handler.group(1), int(cfsr.group(1), 16), int(bfar.group(1), 16), gdb_frames(text)


def test_failure_at_a_fault(pytester, monkeypatch):
    elf, machine = harness.example("crash", "m3")
    syms = harness.symbol_addresses(elf)
    pytester.makepyfile(test_fw=TESTS)
    with harness.Qemu(elf, machine, gdb=True,
                      semihosting_args="arg=crash,arg=busfault,arg=/dev/null") as qemu:
        handler, cfsr, bfar, reference = stop_at_fault(qemu, elf, syms)
        # a real pytest command line: the plugin loaded from its entry point
        result = run_subprocess(pytester, monkeypatch, "-rA", f"--spoor-elf={elf}",
                                f"--spoor-gdb=127.0.0.1:{qemu.gdb_port}",
                                "--junitxml=results.xml")
        after = gdb_frames(harness.run_gdb(elf, qemu.gdb_port, ["bt", "disconnect"]))
    out = result.stdout.str()
    result.assert_outcomes(passed=1, failed=1, errors=1)
    found = sections(out)
    assert len(found) == 2, out  # the failure and the setup error; nothing for the pass
    assert after == reference  # the target was left halted where gdb stopped it
    whens = {re.search(r"read when the test's (\w+) failed", t).group(1): t for t in found}
    assert sorted(whens) == ["call", "setup"], found
    # the same target read twice: the same summary (the page's line names the test's page)
    def same(text):
        return [line for line in text.split("\n")[1:] if not line.startswith("report page:")]
    assert same(whens["setup"]) == same(whens["call"])

    # the pages, one per failure, in spoor-reports/ under the rootdir (where pytest ran)
    folder = pytester.path / "spoor-reports"
    page = folder / "test_fw.py_test_reads_sensor.html"
    assert sorted(folder.iterdir()) == [folder / "test_fw.py_test_after_flash-setup.html", page]
    assert whens["call"].endswith("\nreport page: spoor-reports/test_fw.py_test_reads_sensor.html\n")
    properties = re.findall(r'<property name="spoor_report" value="([^"]+)"',
                            (pytester.path / "results.xml").read_text())
    assert sorted(properties) == sorted(map(str, folder.iterdir()))
    title, rows = support.rendered_page(page)
    assert "BusFault" in title and "PRECISERR" in title, title
    assert reference[0][0] in rows[0], rows[0]  # gdb's frame 0

    text = whens["call"]
    fault = re.search(r"^fault: (.*)$", text, re.M).group(1)
    bits = [name for bit, name in CFSR_BITS.items() if cfsr >> bit & 1]
    assert bits == ["PRECISERR"]  # the bus-fault scenario, as gdb read CFSR
    assert fault.startswith(handler[:-len("_Handler")] + ": "), fault
    for name in bits:
        assert f"{name}: " in fault, fault
    assert cfsr & BFARVALID and f"address {bfar:#010x}" in fault, fault
    # gdb's bt, function, file and line (gdb stops at main; spoor goes on to Reset_Handler)
    frames = section_frames(text)
    assert frames[:len(reference)] == reference, f"{frames}\n{reference}"
    assert frames[len(reference):] == [("Reset_Handler", "examples/common/startup.c",
                                        frames[-1][2])]
    assert re.search(r"^threads: none \(.*no RTOS found", text, re.M), text

    # docs/python.md shows this failure: its block is what was printed here
    shown = re.search(r"^_+ test_reads_sensor _+$.*?(?=^[=_]{3,} )", out, re.M | re.S).group(0)
    shown = shown.replace(str(elf), elf.name).replace(f":{qemu.gdb_port} ", ":3333 ")
    assert shown == docs_block("spoor: the target when the test failed"), shown


def test_thread_fixtures(pytester, tmp_path):
    from test_top_sched import HZ, INTERVAL_MS, TASKS, schedule
    elf, machine = harness.example("sched", "m3")
    # a trace of a known schedule, by test_top_sched's own ITM encoder, with the real TCBs
    syms = harness.symbol_addresses(elf)
    stream, intervals = schedule({name: syms[f"task_{name}"] for name in TASKS})
    trace = tmp_path / "sched.itm"
    trace.write_bytes(stream)
    cycles = {name: sum(i["threads"][name][0] for i in intervals) for name in TASKS}
    share = 100.0 * cycles["sensor"] / (len(intervals) * HZ // 1000 * INTERVAL_MS)
    first = 100.0 * intervals[0]["threads"]["sensor"][0] / (HZ // 1000 * INTERVAL_MS)
    with harness.Qemu(elf, machine, gdb=True) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, [
            "break sched_checkpoint", "continue", "delete",
            'printf "@@current %s\\n", sched_current->name'] + [
            f'printf "@@task %s\\n", sched_tasks[{i}]->name' for i in range(4)] + [
            'printf "@@ipsr %u cfsr %u\\n", $xpsr & 0x1ff, *(unsigned *)0xE000ED28',
            "disconnect"])
        current = re.search(r"^@@current (\w+)$", text, re.M)
        tasks = re.findall(r"^@@task (\w+)$", text, re.M)
        if not current or len(tasks) != 4:
            raise harness.HarnessError(f"gdb did not stop in sched_checkpoint:\n{text}")
        current = current.group(1)
        # no fault: SysTick (15) active, CFSR clear, as gdb reads them
        assert re.search(r"^@@ipsr 15 cfsr 0$", text, re.M), text
        other = next(t for t in tasks if t != current)
        pytester.makepyfile(test_python_md=docs_block("def test_after_boot(spoor_target):"))
        pytester.makepyfile(f'''
def test_current(spoor_target):
    assert spoor_target.assert_thread_state({current!r}, "running")["current"]

def test_other_not_running(spoor_target):
    spoor_target.assert_thread_state({other!r}, "running")

def test_no_such_thread(spoor_target):
    spoor_target.thread("nobody")

def test_no_fault(spoor_target):
    spoor_target.assert_no_fault()

def test_names(spoor_target):
    assert sorted(t["name"] for t in spoor_target.threads()) == {sorted(tasks)!r}

def test_cpu_share(spoor_target):
    # the names from the target; the share of the whole run (its summary)
    share = spoor_target.cpu_share("sensor", {str(trace)!r}, cpu_freq={HZ},
                                   interval={INTERVAL_MS})
    assert abs(share - {share!r}) < 0.001, share
    with open({str(trace)!r}, "rb") as f:
        share = spoor_target.cpu_share("sensor", f.read(), cpu_freq={HZ},
                                       interval={INTERVAL_MS}, intervals=1)
    assert abs(share - {first!r}) < 0.001, share  # the first interval's, without a summary

def test_cpu_share_no_thread(spoor_target):
    spoor_target.cpu_share("nobody", {str(trace)!r}, cpu_freq={HZ}, interval={INTERVAL_MS})
''')
        result = pytester.runpytest(f"--spoor-elf={elf}",
                                    f"--spoor-gdb=127.0.0.1:{qemu.gdb_port}")
    out = result.stdout.str()
    result.assert_outcomes(passed=5, failed=3)  # docs/python.md's example passes
    assert re.search(rf"AssertionError: thread '{other}' is '(?!running')[^']+', "
                     r"expected 'running'", out), out
    names = ", ".join(sorted(tasks))
    listed = re.search(r"AssertionError: no thread 'nobody' on the target \(threads: (.*)\)",
                       out)
    assert listed and ", ".join(sorted(listed.group(1).split(", "))) == names, out
    listed = re.search(r"AssertionError: no thread 'nobody' in the trace \(threads: (.*)\)",
                       out)
    assert listed and ", ".join(sorted(listed.group(1).split(", "))) == names, out


def test_stack_margins(pytester, tmp_path):
    """tests/e2e/fw/rtos_ctx_fw.c built for FreeRTOS (as tests/e2e/test_crash_stacks.py builds
    it), halted by gdb in fw_checkpoint with every task parked; each task's never-written stack
    counted here as uxTaskGetStackHighWaterMark counts it, on gdb's RAM dump."""
    from test_crash_stacks import CORES, RAM, RTOSES, TASKS, rtos_free
    from test_unwind_live import build_test_firmware
    defines, low_expr, high_expr, _ = RTOSES["freertos"]
    flags, machine = CORES["m3"]
    elf = build_test_firmware("rtos_ctx_fw", flags, 0, RAM, tmp_path / "freertos-m3.elf",
                              extra=defines)
    top = harness.symbol_addresses(elf)["__stack_top"]
    commands = ["break fw_checkpoint", "continue", "delete"]
    for name in TASKS:
        t = f"{name}_tcb"
        commands += [f'printf "@@{name} %u %u\\n", {low_expr.format(t=t)}, '
                     f'{high_expr.format(t=t)}']
    commands += [f"dump binary memory {tmp_path}/ram.bin {RAM:#x} {top:#x}", "disconnect"]
    with harness.Qemu(elf, machine, gdb=True) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, commands)
        bounds = {n: (int(lo), int(hi)) for n, lo, hi in re.findall(r"^@@(\w+) (\d+) (\d+)$",
                                                                     text, re.M)}
        if sorted(bounds) != sorted(TASKS):
            raise harness.HarnessError(f"gdb did not stop in fw_checkpoint:\n{text}")
        ram = (tmp_path / "ram.bin").read_bytes()
        free = {n: rtos_free("freertos", ram, lo, hi) for n, (lo, hi) in bounds.items()}
        size = {n: hi - lo for n, (lo, hi) in bounds.items()}
        margin = {n: 100.0 * free[n] / size[n] for n in TASKS}
        assert free["gamma"] == 0  # the task that overflowed its stack
        everyone = max(margin.values()) + 1  # above every task's margin
        pytester.makepyfile(f'''
def test_overflowed(spoor_target):
    spoor_target.assert_stack_margin(0)

def test_every_task_short(spoor_target):
    spoor_target.assert_stack_margin({everyone})
''')
        result = pytester.runpytest(f"--spoor-elf={elf}",
                                    f"--spoor-gdb=127.0.0.1:{qemu.gdb_port}")
    out = result.stdout.str()
    result.assert_outcomes(failed=2)

    def words(n):
        return (f"{n}: {free[n]} of {size[n]} bytes never written ({margin[n]:.1f} %)"
                + ("  OVERFLOWED" if n == "gamma" else ""))
    short = dict(re.findall(r"^E +AssertionError: stack margin under (\S+) %: (.*)$", out,
                            re.M))
    assert short.get("0") == words("gamma"), out
    assert sorted(short.get(f"{everyone:g}", "").split("; ")) == sorted(map(words, TASKS)), out


class Monitor:
    """QEMU's human monitor on a Unix socket: `info status` says whether the machine runs."""

    def __init__(self, path):
        self.path = path

    def status(self):
        import socket
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(30)
            sock.connect(str(self.path))
            sock.sendall(b"info status\n")
            seen = b""
            while b"VM status: " not in seen or not seen.split(b"VM status: ", 1)[1].count(b"\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                seen += chunk
        m = re.search(rb"VM status: ([^\r\n]+)", seen)
        return m.group(1).decode() if m else seen.decode(errors="replace")


def test_running_target_left_halted(pytester, tmp_path):
    """A target that runs when the test fails: the GDB server halts it when spoor connects,
    and it is left halted where the report found it (docs/python.md), as QEMU's monitor says."""
    elf, machine = harness.example("sched", "m3")
    port, sock = harness.free_port(), tmp_path / "monitor.sock"
    command = harness.qemu_command(elf, machine, gdb_port=port,
                                   semihosting_args="arg=sched,arg=100000")  # 100 s of ticks
    command.remove("-S")
    at = command.index("-monitor")
    command[at + 1] = f"unix:{sock},server=on,wait=off"
    with tmp_path.joinpath("qemu.log").open("w+b") as log:
        qemu = harness._spawn(command, log)
        try:
            harness.wait_until("QEMU's monitor and gdb port", lambda: sock.exists()
                               and harness._port_is_listening(port), timeout_s=30)
            monitor = Monitor(sock)
            assert monitor.status() == "running"
            pytester.makepyfile(TESTS)
            result = pytester.runpytest(f"--spoor-elf={elf}", f"--spoor-gdb=127.0.0.1:{port}",
                                        "-k", "reads_sensor")
            status = monitor.status()
        finally:
            harness._kill_group(qemu)
    result.assert_outcomes(failed=1, deselected=2)
    found = sections(result.stdout.str())
    assert len(found) == 1 and "threads (sched, 4):" in found[0], found
    assert status == "paused", status  # QEMU stopped it when spoor connected
