"""spoor sym agrees with arm-none-eabi-addr2line -f -i on 10,000 random code addresses of
the example firmware and of the larger newlib printf build; and its CLI errors are one line
with exit status 2."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import sym_diff  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
EXAMPLES = os.path.join(os.environ["SPOOR_FIRMWARE_DIR"], "examples")
ELVES = ["calls-m3.elf", "calls-m33.elf", "calls-m0.elf", "printf-m4f.elf"]


def check_agreement():
    failed = False
    for name in ELVES:
        elf = os.path.join(EXAMPLES, name)
        n, bad = sym_diff.compare(SPOOR, elf, count=10000, seed=len(name))
        inl = sym_diff.inline_count(SPOOR, elf, count=10000, seed=len(name))
        print(f"{name}: {inl} of the {n} addresses are in inlined code")
        if bad:
            failed = True
        if name.startswith("calls") and inl == 0:
            print(f"{name}: no address in inlined code was checked")
            failed = True
    return failed


def run_spoor(*args, stdin=""):
    return subprocess.run([SPOOR, "sym", *args], input=stdin, capture_output=True, text=True)


def check_errors():
    failed = False
    elf = os.path.join(EXAMPLES, "calls-m3.elf")
    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, "stripped.elf")
        subprocess.run(["arm-none-eabi-objcopy", "--strip-all", elf, stripped], check=True)
        truncated = os.path.join(tmp, "truncated.elf")
        with open(elf, "rb") as src, open(truncated, "wb") as dst:
            dst.write(src.read(4096))
        cases = [
            (["-e", "/nonexistent.elf", "0x0"], "cannot open"),
            (["-e", "/bin/sh", "0x0"], "not a 32-bit ARM ELF"),
            (["-e", truncated, "0x0"], "truncated or corrupt ELF"),
            (["-e", stripped, "0x0"], "no symbols"),
            (["-e", elf, "zork"], "not an address"),
            (["0x0"], "no ELF given"),
            (["-e", elf, "--bogus"], "unknown or incomplete option"),
        ]
        for args, needle in cases:
            r = run_spoor(*args)
            lines = r.stderr.strip().splitlines()
            ok = r.returncode == 2 and len(lines) == 1 and needle in lines[0]
            print(f"{'ok  ' if ok else 'FAIL'} spoor sym {' '.join(args)} -> {r.returncode} {lines}")
            failed |= not ok
    r = run_spoor("--help")
    failed |= r.returncode != 0 or "usage: spoor sym" not in r.stdout
    return failed


if __name__ == "__main__":
    failed = check_agreement()
    failed |= check_errors()
    sys.exit(1 if failed else 0)
