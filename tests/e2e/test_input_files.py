"""Files where spoor expects a regular file (the ELF of every command that takes one, DUMP,
--regs, --mem): a FIFO must not block, a device or a huge file must be refused before it is
read, each with one line and exit 2. An ELF that spoor sym refuses (no symbols at all) is
refused by spoor crash and gdbserver too.

The checks time every run: a FIFO that blocked open() would hit the timeout. A FIFO is refused
within a second, with "PATH: not a regular file (a FIFO)"."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]


def run(args):
    start = time.monotonic()
    try:
        r = subprocess.run([SPOOR, *args], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "timed out (blocked?)", 10.0
    return r.returncode, r.stderr, time.monotonic() - start


def main():
    elf, _ = harness.example("crash", "m3")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        regs = os.path.join(tmp, "regs.json")
        with open(regs, "w") as f:
            f.write('{"pc": "0x100", "sp": "0x20001000"}')
        big = os.path.join(tmp, "big.bin")
        with open(big, "wb") as f:  # sparse: 3 GiB that take no disk
            f.truncate(3 << 30)
        stripped = os.path.join(tmp, "stripped.elf")
        subprocess.run([harness.require_tool("arm-none-eabi-strip"), "-o", stripped, str(elf)],
                       check=True)
        empty = os.path.join(tmp, "empty.bin")
        open(empty, "wb").close()
        not_regular = f"{fifo}: not a regular file (a FIFO)"
        # every command that takes an ELF, given a FIFO as -e (with what it needs besides)
        fifo_elf = [
            ["sym", "-e", fifo, "0x100"],
            ["crash", "-e", fifo, "--regs", regs],
            ["gdbserver", "-e", fifo, "--regs", regs],
            ["mtb", "-e", fifo, "--mem", f"0x20000000:{empty}"],
            ["calls", "-e", fifo, "--regs", regs, "--mem", f"0x20000000:{empty}"],
            ["top", "-e", fifo, "-F", "1000000", "--input", empty],
        ]
        cases = [(f"FIFO as -e of {a[0]}", a, not_regular, 1.0) for a in fifo_elf] + [
            ("FIFO as DUMP of gdbserver", ["gdbserver", "-e", str(elf), fifo], not_regular, 1.0),
            ("FIFO as DUMP of mtb", ["mtb", "-e", str(elf), fifo], not_regular, 1.0),
            ("FIFO as DUMP of calls", ["calls", "-e", str(elf), fifo], not_regular, 1.0),
            ("FIFO as --mem of mtb", ["mtb", "-e", str(elf), "--mem", f"0x20000000:{fifo}"],
             not_regular, 1.0),
        ]
        cases += [(*c, 5.0) for c in [
            ("stripped ELF to crash", ["crash", "-e", stripped, "--regs", regs], "no symbols"),
            ("stripped ELF to gdbserver", ["gdbserver", "-e", stripped, "--regs", regs],
             "no symbols"),
            ("FIFO as DUMP", ["crash", "-e", str(elf), fifo], not_regular),
            ("FIFO as --regs", ["crash", "-e", str(elf), "--regs", fifo], not_regular),
            ("FIFO as --mem", ["crash", "-e", str(elf), "--regs", regs, "--mem", f"0:{fifo}"],
             not_regular),
            ("/dev/zero as --mem", ["crash", "-e", str(elf), "--regs", regs, "--mem",
                                    "0x20000000:/dev/zero"], "/dev/zero: not a regular file (a character device)"),
            ("3 GiB --mem", ["crash", "-e", str(elf), "--regs", regs, "--mem",
                             f"0x20000000:{big}"], "larger than 256 MiB"),
            ("3 GiB DUMP", ["gdbserver", "-e", str(elf), big], "larger than 256 MiB"),
        ]]
        for name, args, want, limit in cases:
            rc, err, took = run(args)
            lines = err.strip().splitlines()
            ok = (rc == 2 and len(lines) == 1 and want in lines[0] and
                  took < harness.time_limit(0.0, limit))
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc} in {took:.2f} s: {err.strip()}")
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
