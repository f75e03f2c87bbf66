"""spoor itm -c PORT,FMT: formats are checked when the option is read. Widths and precisions
are at most 64, a flag appears at most once, '#' only with x/X, %c takes none of them, one
conversion at most; anything else is refused with one line on stderr and exit status 2 before
the source is opened (the source given here does not exist, so an error naming the -c
argument, not the file, shows the format was refused first). Before this, a width above
INT_MAX made every printf fail (no output, exit 0), a width of 2147483647 wrote gigabytes
per packet, and more than 28 flag characters lost the width.

Accepted formats print what C's printf prints for the value; the reference is coreutils'
printf(1) (C's conversion rules, including the corners where Python's % differs: %#x of 0 is
"0", %.0d of 0 is empty), given the value the stream carries: sign-extended from the write's
size for %d/%i, unsigned for %u %x %X."""
import os
import re
import shutil
import subprocess
import sys

SPOOR = os.environ["SPOOR_BIN"]
MISSING = "/nonexistent/capture.itm"
PRINTF = shutil.which("printf", path="/usr/bin:/bin")  # the program, not a shell builtin

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def itm(args, stdin=b""):
    return subprocess.run([SPOOR, "itm", *args], input=stdin, capture_output=True, timeout=30)


REFUSED = [
    ("width above INT_MAX", "1,%99999999999d", "width"),
    ("width INT_MAX", "1,%2147483647d", "width"),
    ("width 65", "1,%65u", "width"),
    ("precision 65", "1,%.65x", "precision"),
    ("precision above INT_MAX", "1,%.99999999999x", "precision"),
    ("30 flag characters", "1,%" + "-" * 30 + "5d", "flag"),
    ("a flag twice", "1,%00d", "flag"),
    ("'#' with %d", "1,%#d", "'#'"),
    ("%c with a width", "0,%5c", "%c"),
    ("%c with a precision", "0,%.2c", "%c"),
    ("two conversions", "1,%d %d", "one"),
    ("unknown conversion", "1,%s", "conversion"),
    ("lone %", "1,abc%", "conversion"),
]


def test_refused():
    for name, arg, word in REFUSED:
        r = itm(["-c", arg, MISSING])
        err = r.stderr.decode().strip()
        lines = err.splitlines()
        check(r.returncode == 2 and len(lines) == 1 and f"-c {arg}" in lines[0] and
              word in lines[0] and MISSING not in lines[0] and not r.stdout,
              f"{name}: exit {r.returncode}, {err!r}")


def sw(port, size, value):
    """A software source packet (ARMv7-M ARM D4.2.8): header A[4:0] << 3 | SS."""
    ss = {1: 1, 2: 2, 4: 3}[size]
    return bytes([port << 3 | ss]) + value.to_bytes(size, "little")


VALUES = [(1, 0x80), (2, 0xFFFF), (4, 42), (4, 0xFFFFFFFE), (4, 0x80000000), (1, 0)]


def signed(size, value):
    bits = 8 * size
    return value - (1 << bits) if value >> (bits - 1) else value


ACCEPTED = ["%64d|", "%-64u|", "%.64x|", "%64.64X|", "%+.5i|", "%-08x|", "%#x|", "%#X|",
            "% d|", "%064u|", "%5.3d|", "%.d|", "%.0u|", "[%%%u%%]|", "text only|"]


def test_accepted():
    stream = b"".join(sw(1, size, value) for size, value in VALUES)
    for fmt in ACCEPTED:
        r = itm(["-c", f"1,{fmt}", "-"], stdin=stream)
        m = re.search(r"%[-+ 0#]*[0-9]*(?:\.[0-9]*)?([diuxX])", fmt)
        want = ""
        for size, value in VALUES:
            arg = [] if not m else [str(signed(size, value) if m.group(1) in "di" else value)]
            want += subprocess.run([PRINTF, fmt, *arg], capture_output=True, text=True,
                                   check=True).stdout
        got = r.stdout.decode()
        check(r.returncode == 0 and got == want, f"-c 1,{fmt}: {got[:80]!r} (want {want[:80]!r})")
    # the largest accepted width writes 64 characters, not gigabytes
    r = itm(["-c", "1,%64d\\n", "-"], stdin=sw(1, 4, 7))
    check(r.stdout == b" " * 63 + b"7\n", "width 64 writes 64 characters")


for t in (test_refused, test_accepted):
    try:
        t()
    except Exception as e:  # a crash of one check must not hide the others
        check(False, f"{t.__name__}: {e!r}")

print(f"{len(failures)} failure(s)" if failures else "all -c format checks passed")
sys.exit(1 if failures else 0)
