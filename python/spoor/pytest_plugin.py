"""spoor's pytest plugin, for hardware-in-the-loop tests of Cortex-M firmware (docs/python.md).

    pytest --spoor-elf FW.elf --spoor-gdb HOST:PORT [--spoor-report-dir DIR]

When a test fails (its call, or its setup) the plugin reads the target once through its GDB
server (spoor.crash(elf, gdb=..., threads=True), and the report page of that same reading),
adds what it found to the failure report (a section "spoor: the target when the test failed":
the fault in words, the backtrace, every RTOS thread with its state and stack margin) and
writes the page `spoor report` writes beside the test results (its path in the section; an
extra of pytest-html's report when pytest-html is installed). The `spoor_target` fixture
asserts on the target (no fault, stack margins, thread states, a thread's CPU share from a
trace stream).

Registered through the `pytest11` entry point "spoor" (`-p no:spoor` turns it off). Without
--spoor-gdb it does nothing: no section, no page, no connection."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import pytest

SECTION = "spoor: the target when the test failed"
DEFAULT_REPORT_DIR = "spoor-reports"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("spoor", "spoor: the Cortex-M target of hardware-in-the-loop tests")
    group.addoption("--spoor-elf", metavar="FW.elf",
                    help="the firmware's ELF, for the target behind --spoor-gdb")
    group.addoption("--spoor-gdb", metavar="HOST:PORT",
                    help="the target's GDB server (OpenOCD, pyOCD, J-Link, QEMU -gdb): read "
                         "when a test fails, and by the spoor_target fixture")
    group.addoption("--spoor-report-dir", metavar="DIR",
                    help="where the report pages of failed tests go (default: "
                         f"{DEFAULT_REPORT_DIR}/ under pytest's rootdir)")


class _Options:
    """The plugin's options, checked once (pytest_configure)."""

    def __init__(self, elf: Optional[str], gdb: Optional[str], report_dir: Path,
                 here: Path) -> None:
        self.elf = elf
        self.gdb = gdb
        self.report_dir = report_dir
        self.here = here
        self._elf: Any = None

    def shown(self, path: Path) -> str:
        """A path as the report shows it: relative to where pytest was started when under it."""
        try:
            return str(path.relative_to(self.here))
        except ValueError:
            return str(path)

    def open_elf(self) -> Any:
        """The ELF, opened by libspoor once for the session."""
        import spoor
        if self._elf is None:
            self._elf = spoor.Elf(self.elf)
        return self._elf


_OPTIONS = pytest.StashKey[_Options]()


def pytest_configure(config: Any) -> None:
    elf, gdb = config.getoption("spoor_elf"), config.getoption("spoor_gdb")
    report_dir = config.getoption("spoor_report_dir")
    if gdb and not elf:
        raise pytest.UsageError("--spoor-gdb needs --spoor-elf FW.elf (the target's firmware)")
    if elf and not os.path.isfile(elf):
        raise pytest.UsageError(f"--spoor-elf {elf}: no such file")
    folder = Path(report_dir) if report_dir else Path(config.rootpath) / DEFAULT_REPORT_DIR
    config.stash[_OPTIONS] = _Options(elf, gdb, folder.resolve(),
                                      Path(config.invocation_params.dir).resolve())


# ---------------------------------------------------------------- the crash summary, in words


def _hex(value: Optional[str]) -> str:
    return value if value else "?"


def _frame_line(number: int, frame: Dict[str, Any]) -> str:
    if frame.get("kind") == "exception":
        return f"  #{number:<2} <exception {frame.get('exception')}: {frame.get('function')}>"
    where = frame.get("function") or "??"
    if frame.get("file"):
        where += f" at {frame['file']}:{frame.get('line') or '?'}"
    if frame.get("inlined"):
        where += " (inlined)"
    return f"  #{number:<2} {_hex(frame.get('pc'))} {where}"


FAULT_EXCEPTIONS = range(3, 8)  # HardFault, MemManage, BusFault, UsageFault, SecureFault


def has_fault(report: Dict[str, Any]) -> bool:
    """Whether a spoor.crash() report is of a fault: a dump that says so, or (a live target, a
    snapshot: no reason recorded) a core in a fault handler (IPSR 3-7) or a fault status bit
    set. A target halted elsewhere (a breakpoint, a tick handler) has none."""
    reason = report.get("reason")
    if reason is not None:
        return reason in ("fault", "assert")
    if (report.get("fault") or {}).get("bits"):
        return True
    xpsr = (report.get("registers") or {}).get("xpsr")
    return xpsr is not None and int(xpsr, 16) & 0x1FF in FAULT_EXCEPTIONS


def fault_words(report: Dict[str, Any]) -> str:
    """The fault (or assert) of a spoor.crash() report in one line; "none" and why when there
    is none."""
    fault = report.get("fault")
    reason = report.get("reason")
    if reason == "assert" and report.get("assert"):
        a = report["assert"]
        words = f"assert failed at {a.get('file')}:{a.get('line')}"
        return words + (f": {a['message']}" if a.get("message") else "")
    if not fault or not has_fault(report):
        if reason:
            return f"none (the dump's reason: {reason})"
        return "none (not in a fault handler, no fault status bit set)"
    words = fault.get("type") or "fault"
    if fault.get("escalated"):
        words += " (escalated to HardFault)"
    meanings = [f"{b.get('name')}: {b.get('meaning')}" for b in fault.get("bits") or []]
    if meanings:
        words += ": " + "; ".join(meanings)
    if fault.get("address"):
        words += f"; address {fault['address']}"
    if fault.get("stack_overflow"):
        words += "; the stack had overflowed"
    return words


def stack_margin(stack: Optional[Dict[str, Any]]) -> Optional[float]:
    """The never-written part of a stack (its "free_min") in percent of its size; None when
    either is unknown."""
    if not stack or stack.get("free_min") is None or not stack.get("size"):
        return None
    return 100.0 * stack["free_min"] / stack["size"]


def _stack_words(stack: Optional[Dict[str, Any]]) -> str:
    margin = stack_margin(stack)
    if margin is None:
        if not stack:
            return "stack unknown"
        size = f"{stack['size']} bytes" if stack.get("size") else "size unknown"
        used = f", {stack['used']} used" if stack.get("used") is not None else ""
        return f"{size}{used}, never-written part unknown"
    words = f"{stack['free_min']} of {stack['size']} bytes never written ({margin:.1f} %)"
    if stack.get("overflowed"):
        words += "  OVERFLOWED"
    elif stack.get("nearly_full"):
        words += "  NEARLY FULL"
    return words


def summary(report: Dict[str, Any]) -> str:
    """The text of the failure report's section: the fault in words, the backtrace (function,
    file, line), every thread with its state and stack margin, the warnings."""
    lines = [f"fault: {fault_words(report)}", "backtrace:"]
    lines += [_frame_line(i, f) for i, f in enumerate(report.get("backtrace") or [])]
    if report.get("stop"):
        lines.append(f"  (stopped: {report['stop']})")
    threads = report.get("threads")
    if threads:
        lines.append(f"threads ({report.get('rtos')}, {len(threads)}):")
        width = max(len(t.get("name") or "?") for t in threads)
        for t in threads:
            top = next((f for f in t.get("backtrace") or [] if f.get("kind") != "exception"),
                       None)
            at = f"  in {top.get('function') or '??'}" if top else ""
            lines.append(f"  {'*' if t.get('current') else ' '} {(t.get('name') or '?'):<{width}}"
                         f"  {t.get('state')}  {_stack_words(t.get('stack'))}{at}")
        if report.get("threads_partial"):
            lines.append(f"  (partial: {report['threads_partial']})")
    elif report.get("threads_error"):
        lines.append(f"threads: none ({report['threads_error']})")
    main = report.get("main_stack")
    if main:
        lines.append(f"main stack: {_stack_words(main)}")
    lines += [f"warning: {w}" for w in report.get("warnings") or []]
    return "\n".join(lines)


# ---------------------------------------------------------------- the failure hook


def _page_name(nodeid: str, when: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:150]
    return f"{name}{'' if when == 'call' else '-' + when}.html"


def _read_target(options: _Options, nodeid: str, when: str) -> tuple:
    """(section text, page path or None) for a failed test."""
    import spoor
    head = f"target {options.gdb} ({options.elf}), read when the test's {when} failed"
    try:  # spoor.crash() and spoor.report_html() of one reading of the target
        report, page = spoor._crash_and_page(options.open_elf(), gdb=options.gdb, threads=True)
    except spoor.Error as e:
        return f"{head}\ncould not read the target: {e}", None
    text = f"{head}\n{summary(report)}"
    try:
        if isinstance(page, spoor.Error):
            raise page
        path = _write_page(options, nodeid, when, page)
    except (spoor.Error, OSError) as e:
        return f"{text}\nno report page: {e}", None
    return f"{text}\nreport page: {options.shown(path)}", path


def _write_page(options: _Options, nodeid: str, when: str, page: str) -> Path:
    """The page (`spoor report --threads`'s of the target) in the report folder."""
    options.report_dir.mkdir(parents=True, exist_ok=True)
    path = options.report_dir / _page_name(nodeid, when)
    path.write_text(page, encoding="utf-8")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    options = item.config.stash.get(_OPTIONS, None)
    if (options is None or not options.gdb or not report.failed
            or report.when not in ("setup", "call") or hasattr(report, "wasxfail")):
        return
    text, page = _read_target(options, item.nodeid, report.when)
    report.sections.append((SECTION, text))
    if page is not None:
        item.user_properties.append(("spoor_report", str(page)))
        _html_extra(item, report, page)


def _html_extra(item: Any, report: Any, page: Path) -> None:
    """The page as a link in pytest-html's report, when pytest-html is installed (not in
    Debian: untested)."""
    if not item.config.pluginmanager.hasplugin("html"):
        return
    try:
        import pytest_html  # type: ignore[import]
        from pytest_html import extras  # type: ignore[import]
        major = int(str(getattr(pytest_html, "__version__", "3")).split(".")[0])
    except (ImportError, ValueError):
        return
    attr = "extras" if major >= 4 else "extra"  # pytest-html 4 renamed it
    setattr(report, attr, getattr(report, attr, []) + [extras.url(page.as_uri(),
                                                                   name="spoor report")])


# ---------------------------------------------------------------- the spoor_target fixture


class Target:
    """The target behind --spoor-gdb, for assertions in a test (the spoor_target fixture).
    Each call reads the target anew through its GDB server (which halts a running target)."""

    def __init__(self, options: _Options) -> None:
        self._options = options
        self.gdb = options.gdb
        self.elf = options.elf

    def crash(self, threads: bool = True) -> Dict[str, Any]:
        """The target now: the document `spoor crash --json --gdb HOST:PORT [--threads]`
        prints, as spoor.crash() returns it."""
        import spoor
        return spoor.crash(self._options.open_elf(), gdb=self.gdb, threads=threads)

    def assert_no_fault(self) -> Dict[str, Any]:
        """Fails when the target has a fault (or stopped at an assert): says which, and where.
        Returns the report."""
        report = self.crash(threads=False)
        if has_fault(report):
            frames = [f for f in report.get("backtrace") or [] if f.get("kind") != "exception"]
            where = _frame_line(0, frames[0]).split(None, 1)[1] if frames else "unknown"
            raise AssertionError(f"the target has a fault: {fault_words(report)} (at {where})")
        return report

    def threads(self) -> List[Dict[str, Any]]:
        """Every RTOS thread of the target (the report's "threads"); a failure when the
        firmware's RTOS was not found."""
        return _threads_of(self.crash())

    def thread(self, name: str) -> Dict[str, Any]:
        """The thread called name: its object in the report's "threads" (tcb, state, prio,
        stack, backtrace, ...); a failure naming the threads there are when none is."""
        threads = self.threads()
        for t in threads:
            if t.get("name") == name:
                return t
        names = ", ".join(str(t.get("name")) for t in threads)
        raise AssertionError(f"no thread {name!r} on the target (threads: {names})")

    def assert_thread_state(self, name: str, state: str) -> Dict[str, Any]:
        """Fails when the thread's state is not state (in spoor's words: "running", "ready",
        "blocked on semaphore sem_ready", ...; docs/rtos.md). Returns the thread."""
        t = self.thread(name)
        if t.get("state") != state:
            raise AssertionError(f"thread {name!r} is {t.get('state')!r}, expected {state!r}")
        return t

    def assert_stack_margin(self, percent: float, main_stack: bool = False) -> None:
        """Fails unless every thread's never-written stack (free_min, from the RTOS's fill
        pattern) is at least percent % of its size; main_stack=True checks the main stack too.
        The message names each thread below it (or whose margin is unknown) with its margin."""
        report = self.crash()
        threads = _threads_of(report) if not main_stack or report.get("threads") else []
        stacks = [(str(t.get("name")), t.get("stack")) for t in threads]
        if main_stack:
            stacks.append(("main stack", report.get("main_stack")))
        short = []
        for name, stack in stacks:
            margin = stack_margin(stack)
            if margin is None:
                short.append(f"{name}: stack margin unknown"
                             + (f" (from {stack['from']})" if stack and stack.get("from") else ""))
            elif margin < percent or stack.get("overflowed"):
                short.append(f"{name}: {_stack_words(stack)}")
        if short:
            raise AssertionError(f"stack margin under {percent:g} %: " + "; ".join(short))

    def cpu_share(self, thread: str, trace: Union[bytes, str, "os.PathLike[str]"],
                  **options: Any) -> float:
        """The thread's share of the CPU in percent over a trace stream of the target (the
        ITM/DWT bytes spoor top reads, a binary file object or a path), as spoor top computes
        it: spoor.top.run(elf, trace, **options) (cpu_freq is required; the keywords are
        spoor.top.Session's), the "cpu" of the summary of the run (without one, with
        intervals=N: the intervals' times added up). The threads' names are read from the
        target (gdb=--spoor-gdb) unless mem, dump, gdb or telnet is given. thread: a name, or
        a TCB address as spoor top writes it ("0x20002068")."""
        from spoor import top  # type: ignore[attr-defined]
        if all(options.get(k) is None for k in ("mem", "dump", "gdb", "telnet")):
            options["gdb"] = self.gdb
        intervals = top.run(self._options.open_elf(), trace, **options)
        summary = [i for i in intervals if i.get("summary")]
        chosen = summary[-1:] or intervals
        rows = [t for i in chosen for t in i.get("threads") or []
                if thread in (t.get("name"), t.get("tcb"))]
        if not rows:
            names = sorted({str(t.get("name") or t.get("tcb")) for i in intervals
                            for t in i.get("threads") or []})
            raise AssertionError(f"no thread {thread!r} in the trace (threads: "
                                 f"{', '.join(names) or 'none'})")
        if summary:
            return float(rows[0]["cpu"])
        total = sum(i.get("interval_ms") or 0 for i in chosen)
        if not total:
            raise AssertionError("the trace holds no time (no complete interval)")
        return 100.0 * sum(t.get("time_ms") or 0 for t in rows) / total


def _threads_of(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    if not report.get("threads"):
        raise AssertionError("no RTOS threads on the target: "
                             f"{report.get('threads_error') or 'the thread lists are empty'}")
    return report["threads"]


@pytest.fixture
def spoor_target(request: Any) -> Target:
    """The target behind --spoor-gdb with its firmware --spoor-elf (see Target)."""
    options = request.config.stash.get(_OPTIONS, None)
    if options is None or not options.gdb or not options.elf:
        raise pytest.UsageError("the spoor_target fixture needs --spoor-gdb HOST:PORT and "
                                "--spoor-elf FW.elf")
    return Target(options)
