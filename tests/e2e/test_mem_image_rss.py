"""A --mem image costs only the pages spoor reads: it is mapped, not copied.

A 256 MiB sparse image (the largest accepted) given to `spoor crash --regs --mem`: the
process's peak resident size must stay far below the image (it was twice the image, 560 MB, when
the file was read and then copied), and the report must be the one a 64 KiB image with the
same bytes gives. A file one byte larger is refused with one line.
"""

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from top_testlib import check, exit_status, minimal_regs  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
ELF = Path(os.environ.get("SPOOR_FIRMWARE_DIR", ".")) / "examples" / "sched-m3.elf"


def crash(regs, image):
    return subprocess.run([SPOOR, "crash", "-e", str(ELF), "--regs", str(regs), "--mem",
                           f"0x20000000:{image}"], capture_output=True, text=True, timeout=120)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        regs = minimal_regs(work)
        big, small, over = work / "big.bin", work / "small.bin", work / "over.bin"
        for path, size in ((big, 256 << 20), (small, 64 << 10), (over, (256 << 20) + 1)):
            with open(path, "wb") as f:
                f.truncate(size)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        result = crash(regs, big)
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        check(result.returncode == 0, f"256 MiB image: exit {result.returncode}: {result.stderr}")
        check(peak_kb < 64 * 1024, f"256 MiB image: peak resident {peak_kb} KiB (before any "
              f"child {before} KiB)")
        want = crash(regs, small)
        check(result.stdout == want.stdout.replace(str(small), str(big)),
              f"256 MiB image: report differs from the 64 KiB one:\n{result.stdout}\n"
              f"{want.stdout}")
        refused = crash(regs, over)
        check(refused.returncode == 2 and refused.stderr == f"spoor crash: {over}: "
              f"{(256 << 20) + 1} bytes, larger than 256 MiB\n",
              f"256 MiB + 1: exit {refused.returncode}: {refused.stderr!r}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
