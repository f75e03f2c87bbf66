"""No silent wrong backtraces from a corrupt .debug_frame.

spoor crash unwinds with the DWARF call frame information of .debug_frame (libdw). Dumps of the
crash example (Cortex-M3: nested, badptr, div0; most of their frames are unwound by CFI) are
taken once in QEMU; then seeded byte flips in .debug_frame of crash-m3.elf give mutants, and for
each one `spoor crash --json` runs on the same dump. arm-none-eabi-readelf --debug-dump=frames
is the referee of "this section is damaged" (a warning on its stderr, or an FDE whose CIE it
calls invalid): wherever it says so and spoor's backtrace differs from the clean ELF's, spoor
must have printed a warning naming .debug_frame on stderr and listed it in the JSON
`warnings` (or refused the file). Flips that leave a well-formed section with other rules (an
offset, a register number) are the wrong answers no tool can see: they are counted and
printed, not failed.

Also: an FDE whose length runs into the next entries must give that warning, and the clean
ELF none."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import test_crash_scenarios as scenarios  # noqa: E402
from test_sym_corrupt import flip, sections  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
DUMPS = ["nested", "badptr", "div0"]
MUTANTS = 40


def crash(elf, dump):
    """(exit status, stderr, backtrace as (pc, function, kind) and stop, JSON warnings)."""
    r = subprocess.run([SPOOR, "crash", "--json", "-e", elf, dump], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        return r.returncode, r.stderr, None, []
    report = json.loads(r.stdout)
    trace = [(f.get("pc"), f.get("function"), f.get("kind")) for f in report["backtrace"]]
    return 0, r.stderr, (trace, report["stop"]), report["warnings"]


def warned(got):
    """spoor refused the file, or said on stderr and in JSON that .debug_frame is unreadable."""
    if got[0] != 0:
        return got[0] == 2 and len(got[1].strip().splitlines()) == 1
    return (any(".debug_frame" in line and "WARNING" in line for line in got[1].splitlines())
            and any(".debug_frame" in w for w in got[3]))


def readelf_complains(elf):
    r = subprocess.run(["arm-none-eabi-readelf", "--debug-dump=frames", elf],
                       capture_output=True, text=True, errors="replace", timeout=60)
    return r.stderr.strip() != "" or "cie=invalid" in r.stdout


def long_fde(data):
    """The ELF with an FDE length that runs into the next entries: the second FDE's + 0x400."""
    off, _ = sections(data)[0][".debug_frame"]
    cie_len, = struct.unpack_from("<I", data, off)
    fde = off + 4 + cie_len
    fde_len, = struct.unpack_from("<I", data, fde)
    second = fde + 4 + fde_len
    bad = bytearray(data)
    struct.pack_into("<I", bad, second, struct.unpack_from("<I", data, second)[0] + 0x400)
    return bytes(bad)


def main():
    failed = False
    elf, _ = scenarios.harness.example("crash", "m3")
    elf = str(elf)
    data = open(elf, "rb").read()
    secs, _ = sections(data)
    off, size = secs[".debug_frame"]
    with tempfile.TemporaryDirectory() as tmp:
        dumps = {s: str(scenarios.crash_and_collect("m3", s, tmp)[2]) for s in DUMPS}
        cleans = {s: crash(elf, d) for s, d in dumps.items()}
        for s, clean in cleans.items():
            if clean[0] != 0 or clean[3] or ".debug_frame" in clean[1]:
                print(f"FAIL clean ELF, {s}: exit {clean[0]}, warnings {clean[3]} {clean[1]!r}")
                failed = True
            elif not any(t[2] == "frame" for t in clean[2][0]):
                print(f"FAIL clean ELF, {s}: no frames")
                failed = True

        path = os.path.join(tmp, "long-fde.elf")
        open(path, "wb").write(long_fde(data))
        got = crash(path, dumps["nested"])
        ok = readelf_complains(path) and warned(got)
        print(f"{'ok  ' if ok else 'FAIL'} FDE length into the next entries: exit {got[0]}, "
              f"stderr {got[1].strip().splitlines()[-1:]}")
        failed |= not ok

        n = damaged = differs = silent = unseen = 0
        for s, dump in dumps.items():
            rng = random.Random(f"debug_frame {s}")
            for i in range(MUTANTS):
                mutant = os.path.join(tmp, f"{s}.{i}.elf")
                with open(mutant, "wb") as f:
                    f.write(flip(data, rng, off, size, rng.choice((1, 2, 4))))
                got = crash(mutant, dump)
                n += 1
                complains = readelf_complains(mutant)
                damaged += complains
                changed = got[0] != 0 or got[2] != cleans[s][2]
                differs += changed
                if changed and not warned(got):
                    if complains:
                        silent += 1
                        failed = True
                        print(f"SILENT {s} mutant {i}: readelf sees damage, the backtrace "
                              f"changed, spoor said nothing: {got[1].strip()[:200]!r}")
                    else:
                        unseen += 1
                if got[0] != 0 and not warned(got):
                    failed = True
                    print(f"FAIL {s} mutant {i}: exit {got[0]}, stderr {got[1][:300]!r}")
        print(f".debug_frame: {n} mutants, readelf complained on {damaged}, the backtrace "
              f"changed on {differs}, silently where readelf complained on {silent}; changed "
              f"with a section that reads as well-formed (no tool can tell) on {unseen}")
    return failed


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
