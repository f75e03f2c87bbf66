"""Files where spoor expects a regular file (DUMP, --regs, --mem): a FIFO must not block, a
device or a huge file must be refused before it is read, each with one line and exit 2. An ELF
that spoor sym refuses (no symbols at all) is refused by spoor crash and gdbserver too.

The checks time every run: a FIFO that blocked open() would hit the timeout."""
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
        r = subprocess.run([SPOOR, *args], capture_output=True, text=True, timeout=10)
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
        cases = [
            ("stripped ELF to crash", ["crash", "-e", stripped, "--regs", regs], "no symbols"),
            ("stripped ELF to gdbserver", ["gdbserver", "-e", stripped, "--regs", regs],
             "no symbols"),
            ("FIFO as DUMP", ["crash", "-e", str(elf), fifo], "fifo: not a regular file"),
            ("FIFO as --regs", ["crash", "-e", str(elf), "--regs", fifo],
             "fifo: not a regular file"),
            ("FIFO as --mem", ["crash", "-e", str(elf), "--regs", regs, "--mem", f"0:{fifo}"],
             "fifo: not a regular file"),
            ("/dev/zero as --mem", ["crash", "-e", str(elf), "--regs", regs, "--mem",
                                    "0x20000000:/dev/zero"], "/dev/zero: not a regular file"),
            ("3 GiB --mem", ["crash", "-e", str(elf), "--regs", regs, "--mem",
                             f"0x20000000:{big}"], "larger than 256 MiB"),
            ("3 GiB DUMP", ["gdbserver", "-e", str(elf), big], "larger than 256 MiB"),
        ]
        for name, args, want in cases:
            rc, err, took = run(args)
            lines = err.strip().splitlines()
            ok = rc == 2 and len(lines) == 1 and want in lines[0] and took < 5
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc} in {took:.2f} s: {err.strip()}")
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
