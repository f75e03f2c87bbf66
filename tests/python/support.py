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
