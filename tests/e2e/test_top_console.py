"""spoor top's console on a terminal and piped: under a pseudo-terminal (Python's pty, the
window size set with TIOCSWINSZ as a terminal emulator does) each interval's table replaces
the previous one in place, as top does: cursor home (ESC [ H), each line followed by erase to
the end of the line (ESC [ K), the rest of the screen erased after the table (ESC [ J; ECMA-48
CUP, EL, ED); no clearing of the whole screen. On a terminal narrower than the table each line
is cut at the width (a wrapped line would push the top of the table off the screen). Piped,
the tables are plain lines, the same text. The summary at the end is plain lines after the
last table in both cases. Stream and memory: the RTX5-shaped test firmware
(test_top_rtos_shapes.py), -I 1: one table per switch."""

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from top_testlib import check, exit_status  # noqa: E402
from test_top_rtos_shapes import shape_with_stream  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
IN_PLACE = re.compile(r"\x1b\[H(.*?)\x1b\[J", re.S)


def on_terminal(command, cols, rows=50):
    """command's standard output as a terminal of cols x rows shows it (bytes, CR LF)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(command, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out = bytearray()
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not data:
            break
        out += data
    os.close(master)
    proc.wait(timeout=60)
    check(proc.returncode == 0, f"{command}: exit {proc.returncode} {proc.stderr.read()}")
    return out.decode().replace("\r\n", "\n")


def reports(piped):
    """The piped output's reports, each as written: its lines, then a blank line."""
    return [r + "\n\n" for r in piped.split("\n\n") if r]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data, itm = shape_with_stream("RTX5", work, ["main_thread", "sensor", "idle",
                                                          "main_thread", "sensor"])
        command = [SPOOR, "top", "-e", str(elf), "--mem", f"0x20000000:{data}", "--input",
                   str(itm), "-F", "1000000", "-I", "1", "-E"]

        piped = subprocess.run(command, capture_output=True, text=True, timeout=60)
        check(piped.returncode == 0 and "\x1b" not in piped.stdout,
              f"piped: exit {piped.returncode}, escapes in {piped.stdout[:200]!r}")
        want = reports(piped.stdout)
        tables, summary = want[:-1], want[-1]
        check(len(tables) == 6 and summary.startswith("=== Whole run"),
              f"piped: {len(tables)} tables, then {summary[:40]!r}")

        wide = on_terminal(command, 200)
        shown = IN_PLACE.findall(wide)
        check("\x1b[2J" not in wide and len(shown) == len(tables),
              f"wide terminal: {len(shown)} in-place tables for {len(tables)}")
        for got, table in zip(shown, tables):
            lines = got.split("\n")[:-1]
            check(all(line.endswith("\x1b[K") for line in lines),
                  f"a line not erased to its end: {lines}")
            check("".join(line[:-3] + "\n" for line in lines) == table,
                  f"in place != piped:\n{got}\n{table}")
        check(wide.endswith("\x1b[J" + summary), f"the summary after the last table: "
              f"{wide[-300:]!r}")

        narrow = on_terminal(command, 40)
        shown_narrow = IN_PLACE.findall(narrow)
        check(len(shown_narrow) == len(tables), f"narrow: {len(shown_narrow)} tables")
        for got, table in zip(shown_narrow, tables):
            lines = [line[:-3] for line in got.split("\n")[:-1]]
            full = table.split("\n")[:-1]
            check(len(lines) == len(full) and all(len(x) <= 40 for x in lines)
                  and all(f[:40] == x for f, x in zip(full, lines))
                  and any(len(f) > 40 for f in full),
                  f"narrow terminal: lines not cut at 40 columns: {lines}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
