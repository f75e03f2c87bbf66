"""spoor sym -r / --return-addresses: every address is a return address (the caller frames of
a backtrace printed on the device by spoor_backtrace()), named by the call before it, as
spoor crash names a caller frame (pc - 1).

The addresses: every return address of the example firmware's calls (the instruction after
each bl/blx in arm-none-eabi-objdump's disassembly), given with the Thumb bit set, as an LR
holds them. The reference: arm-none-eabi-addr2line -f -i on address - 1 (function, file, line
and the inline chain). The offset printed is that of the address given, from the symbol table
(readelf). Without -r the same addresses name the instruction after the call, which for some of
them is another line: the test checks that -r changes those answers (so that it can fail)."""
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import sym_diff  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def return_addresses(elf):
    """The address after each bl / blx of the disassembly (Thumb bit clear)."""
    out = subprocess.run([sym_diff.OBJDUMP, "-d", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    rets = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+((?:[0-9a-f]{4} ?){1,2})\s+(bl|blx)\s", line)
        if m:
            size = 2 * len(m.group(2).split())
            rets.append(int(m.group(1), 16) + size)
    return rets


def spoor_json(elf, addrs, *flags):
    import json
    out = subprocess.run([SPOOR, "sym", "--json", *flags, "-e", str(elf)],
                         input="".join(f"0x{a:08x}\n" for a in addrs), capture_output=True,
                         text=True)
    check(out.returncode == 0, f"spoor sym {flags}: exit {out.returncode}: {out.stderr}")
    return [json.loads(ln) for ln in out.stdout.splitlines()]


def frames_of(obj):
    fr = [(obj["function"], sym_diff._norm_file(obj["file"]), sym_diff._norm_line(obj["line"]))]
    return fr + [(i["function"], sym_diff._norm_file(i["file"]), sym_diff._norm_line(i["line"]))
                 for i in obj["inlined"]]


def main():
    for program, cpu in (("calls", "m3"), ("crash", "m4f"), ("calls", "m0")):
        elf = harness.elf_path(program, cpu)
        rets = return_addresses(elf)
        check(len(rets) > 10, f"{elf.name}: only {len(rets)} calls found")
        thumb = [r | 1 for r in rets]
        ref = sym_diff.addr2line_frames(str(elf), [r - 1 for r in rets])
        syms = sym_diff.function_symbols(str(elf))
        got = spoor_json(elf, thumb, "-r")
        plain = spoor_json(elf, thumb)
        check(len(got) == len(rets), f"{elf.name}: {len(got)} answers for {len(rets)}")
        bad = changed = 0
        for r, obj, plain_obj in zip(rets, got, plain):
            if frames_of(obj) != ref[r - 1]:
                bad += 1
                if bad <= 5:
                    print(f"{elf.name} 0x{r:08x}: spoor -r {frames_of(obj)} addr2line(-1) "
                          f"{ref[r - 1]}")
            # the offset of the address given in the function symbol that holds the call
            holders = [s for s, z, n in syms if s <= r - 1 < s + z]
            if len(holders) == 1 and obj["offset"] != r - holders[0]:
                bad += 1
                print(f"{elf.name} 0x{r:08x}: offset {obj['offset']}, want {r - holders[0]}")
            changed += frames_of(plain_obj) != frames_of(obj)
        check(bad == 0, f"{elf.name}: {bad} of {len(rets)} return addresses differ")
        check(changed > 0, f"{elf.name}: -r changed no answer (the test cannot fail)")
        print(f"{elf.name}: {len(rets)} return addresses, {changed} named differently than "
              "without -r")
    r = subprocess.run([SPOOR, "sym", "--return-addresses", "-e",
                        str(harness.elf_path("calls", "m3")), "0x1"], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"--return-addresses: exit {r.returncode}: {r.stderr}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
