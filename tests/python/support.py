"""What the Python package's tests share: where things are, the CLI to compare with, and the
sanitizer preload taken away from the programs the tests start (see run.py)."""
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", HERE.parent.parent))
BUILD = Path(os.environ.get("SPOOR_BUILD_DIR", ".")).resolve()
SPOOR = os.environ.get("SPOOR_BIN", "spoor")
DEBIAN_PYTHON = "/usr/bin/python3"

# the sanitizer runtimes, for a Python program a test starts (a venv's interpreter); this
# process already has them, the other programs it runs (spoor, QEMU, gdb) must not
PRELOAD = {k: os.environ[k] for k in ("LD_PRELOAD", "ASAN_OPTIONS") if k in os.environ}
os.environ.pop("LD_PRELOAD", None)


def run(*command, check=True, timeout=300, **kwargs):
    """Runs a program; its CompletedProcess (text). check: a non-zero exit fails the test with
    the program's output."""
    r = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                       timeout=timeout, **kwargs)
    if check and r.returncode != 0:
        raise AssertionError(f"{command} exit {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def cli(*args, check=True, **kwargs):
    """The same build's spoor CLI."""
    return run(SPOOR, *args, check=check, **kwargs)


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def rendered_page(page):
    """(title text, [text of each backtrace row]) of a spoor report page as headless Chromium
    renders it with the network cut off (tests/e2e/test_report.py's Chromium and DOM reader,
    loaded by its path: tests/python has a test_report.py of its own); fails when the page
    printed or fetched anything, or did not render."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("e2e_test_report",
                                                  SOURCE / "tests" / "e2e" / "test_report.py")
    e2e = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(e2e)
    proxy = e2e.Proxy()
    dom_text, console = e2e.chromium(page, proxy)
    assert console == [] and proxy.requests == []  # nothing said, nothing fetched
    dom = e2e.Dom(dom_text).root
    assert dom.find(tag="html").attrs.get("data-rendered") == "yes"
    return (dom.by_id("title").text(),
            [row.text() for row in dom.by_id("backtrace").find_all("bt-row")])
