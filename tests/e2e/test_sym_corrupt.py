"""No silent wrong answers from corrupt DWARF or ELF headers.

Mutants of example ELFs of four cores (M0, M3, M4F with newlib, M33), each chosen from the ELF
itself, not from fixed offsets (dwarf_sites.py parses the sections and the DIE trees): seeded
bit flips in each DWARF section and in the section header table, and damage aimed at what the
symbolizer reads past: an end-of-siblings byte of the DIE tree turned into an abbreviation code
of the unit, a DIE's abbreviation code turned into another one or one the unit does not have, a
DW_FORM_strp offset moved to another string or past .debug_str. For every mutant,
arm-none-eabi-addr2line is the referee of "this file is damaged": wherever it reports an error
on stderr and spoor's answers differ from those for the clean ELF, spoor must have said so (a
warning on stderr) or refused the file (non-zero exit). A mutant that spoor answers differently
with neither is a silent wrong answer and fails the test.

Also the named cases of the hardening issue: a line program with line_range 0 (warned, and
every answer that changed is marked "partial"), a unit length of 0, a section header whose
sh_link is out of range (refused, as readelf complains), and a RIOT-like ELF whose initialised
data section has the type SHT_REL with a size that is no multiple of a relocation: addr2line
answers from it as from the clean ELF, and so must spoor (same answers, exit 0)."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import dwarf_sites  # noqa: E402
import sym_diff  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
EXAMPLES = os.path.join(os.environ["SPOOR_FIRMWARE_DIR"], "examples")
ELVES = ["calls-m0.elf", "calls-m3.elf", "printf-m4f.elf", "calls-m33.elf"]
SECTIONS = [".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_aranges",
            ".debug_rnglists", ".debug_ranges", ".debug_line_str"]
MUTANTS = 12  # bit-flip mutants per section and ELF
AIMED = 10  # mutants per ELF of each aimed kind
ADDRESSES = 300


def sections(data):
    """{name: (file offset, size)} from the ELF32 section headers, and (shoff, shentsize,
    shnum)."""
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x2E)
    return dwarf_sites.sections(data), (shoff, shentsize, shnum)


def answers(args, elf, addrs):
    """(exit status, stderr, stdout) of a symbolizer over addrs."""
    inp = "".join(f"0x{a:08x}\n" for a in addrs)
    r = subprocess.run([*args, elf], input=inp.encode(), capture_output=True, timeout=60)
    # names read from damaged string sections need not be UTF-8
    return r.returncode, r.stderr.decode(errors="replace"), r.stdout.decode(errors="replace")


def spoor(elf, addrs):
    return answers([SPOOR, "sym", "--json", "-e"], elf, addrs)


def addr2line(elf, addrs):
    return answers(["arm-none-eabi-addr2line", "-a", "-f", "-i", "-e"], elf, addrs)


def flip(data, rng, start, size, count):
    out = bytearray(data)
    for _ in range(count):
        pos = start + rng.randrange(size)
        out[pos] ^= 1 << rng.randrange(8)
    return bytes(out)


def aimed(data, rng):
    """(label, mutant) pairs of damage aimed at the DIE trees, positions found by parsing."""
    sites = dwarf_sites.Sites(data)
    base = sites.info_offset
    strp = [x for x in sites.strps if x[1] == dwarf_sites.DW_FORM_STRP]
    starts = sites.string_starts(data, ".debug_str")
    str_size = sites.secs[".debug_str"][1]
    out = []
    for i in range(AIMED):
        m = bytearray(data)
        pos, unit = rng.choice(sites.ends)
        code = rng.choice([c for c in sites.units[unit][2] if c < 0x80])
        m[base + pos] = code
        out.append((f"end-of-siblings@0x{pos:x}={code}", bytes(m)))
        m = bytearray(data)
        pos, code, unit = rng.choice([c for c in sites.codes if c[1] < 0x80])
        table = sites.units[unit][2]
        new = rng.choice([c for c in table if c < 0x80 and c != code] + [max(table) + 1])
        m[base + pos] = new if new < 0x80 else 0x7f
        out.append((f"abbrev-code@0x{pos:x}={m[base + pos]}", bytes(m)))
        m = bytearray(data)
        pos, _, value = rng.choice(strp)
        new = rng.choice(starts) if i % 2 == 0 else str_size + rng.randrange(1, 1 << 16)
        struct.pack_into("<I", m, base + pos, new)
        out.append((f"strp@0x{pos:x}=0x{new:x}", bytes(m)))
    return out


def judge(name, label, mutant_path, addrs, clean, stats):
    """Runs both symbolizers on a mutant; False when spoor changed an answer silently where
    addr2line noticed the damage, or refused the file in other than one line."""
    a2l = addr2line(mutant_path, addrs)
    got = spoor(mutant_path, addrs)
    damaged = a2l[0] != 0 or a2l[1].strip() != ""
    differs = got[0] != 0 or got[2] != clean[2]
    said = got[0] != 0 or got[1].strip() != ""
    stats[0] += 1
    stats[1] += damaged
    stats[2] += differs
    ok = True
    if damaged and differs and not said:
        stats[3] += 1
        ok = False
        print(f"SILENT {name} {label}: addr2line says {a2l[1].strip().splitlines()[:1]}, spoor "
              f"answers differently with exit 0 and nothing on stderr")
    if got[0] != 0 and (got[0] != 2 or len(got[1].strip().splitlines()) != 1):
        ok = False
        print(f"FAIL {name} {label}: refused with exit {got[0]} and stderr {got[1][:300]!r} "
              f"(want exit 2 and one line)")
    return ok


def check_mutants(tmp):
    failed, totals = False, {}
    for name in ELVES:
        elf = os.path.join(EXAMPLES, name)
        data = open(elf, "rb").read()
        secs, (shoff, shentsize, shnum) = sections(data)
        addrs = sym_diff.random_addresses(elf, ADDRESSES, seed=7)
        clean = spoor(elf, addrs)
        assert clean[0] == 0 and clean[2], f"{name}: spoor fails on the clean ELF: {clean[1]}"
        targets = [(s, *secs[s]) for s in SECTIONS if s in secs and secs[s][1] > 0]
        targets.append(("section headers", shoff, shentsize * shnum))
        for sec, off, size in targets:
            rng = random.Random(f"{name}{sec}")
            stats = totals.setdefault(sec, [0, 0, 0, 0])
            for i in range(MUTANTS):
                mutant = os.path.join(tmp, f"{name}.{sec.strip('.')}.{i}.elf")
                with open(mutant, "wb") as f:
                    f.write(flip(data, rng, off, size, rng.choice((1, 2, 4))))
                failed |= not judge(name, f"{sec} mutant {i}", mutant, addrs, clean, stats)
        rng = random.Random(f"{name}aimed")
        for label, mutated in aimed(data, rng):
            mutant = os.path.join(tmp, f"{name}.aimed.elf")
            with open(mutant, "wb") as f:
                f.write(mutated)
            kind = "aimed " + label.split("@")[0]
            failed |= not judge(name, label, mutant, addrs, clean, totals.setdefault(kind, [0] * 4))
    for sec, (n, damaged, differs, silent) in totals.items():
        print(f"{sec}: {n} mutants, addr2line complained on {damaged}, spoor's answer changed on "
              f"{differs}, silently on {silent}")
    return failed


def named_cases(tmp):
    """line_range 0, unit length 0, sh_link out of range."""
    failed = False
    elf = os.path.join(EXAMPLES, "calls-m3.elf")
    data = open(elf, "rb").read()
    secs, (shoff, shentsize, shnum) = sections(data)
    addrs = sym_diff.random_addresses(elf, ADDRESSES, seed=3)
    clean = spoor(elf, addrs)

    def patched(label, offset, fmt, value):
        out = bytearray(data)
        struct.pack_into(fmt, out, offset, value)
        path = os.path.join(tmp, f"{label}.elf")
        open(path, "wb").write(bytes(out))
        return path

    line_off, _ = secs[".debug_line"]
    version, = struct.unpack_from("<H", data, line_off + 4)
    # DWARF 2-4: length(4) version(2) header_length(4) min_inst(1) [max_ops(1) v4+]
    # default_is_stmt(1) line_base(1) line_range(1); DWARF 5 adds address_size and seg_sel.
    lr = line_off + 4 + 2 + (2 if version >= 5 else 0) + 4 + 1 + (1 if version >= 4 else 0) + 2
    cases = [
        ("line_range0", lr, "<B", 0, "warn"),
        ("unit_length0", secs[".debug_info"][0], "<I", 0, "warn"),
    ]
    symtab = next(i for i in range(shnum)
                  if struct.unpack_from("<I", data, shoff + i * shentsize + 4)[0] == 2)
    cases.append(("sh_link", shoff + symtab * shentsize + 24, "<I", shnum + 5, "refuse"))
    for label, off, fmt, value, want in cases:
        path = patched(label, off, fmt, value)
        got = spoor(path, addrs)
        lines = got[1].strip().splitlines()
        if want == "refuse":
            ok = got[0] == 2 and len(lines) == 1
        else:
            ok = got[0] != 0 or (got[2] == clean[2]) or len(lines) >= 1
        if label == "line_range0":  # one unit's rows lost: each changed answer says so
            unmarked = [b for a, b in zip(clean[2].splitlines(), got[2].splitlines())
                        if a != b and json.loads(b).get("partial") is not True]
            ok &= got[0] == 0 and len(lines) == 1 and not unmarked
            if unmarked:
                print(f"  changed answers not marked partial: {unmarked[:2]}")
        print(f"{'ok  ' if ok else 'FAIL'} {label}: exit {got[0]}, stderr {lines[:2]}, "
              f"answers {'unchanged' if got[2] == clean[2] else 'changed'}")
        failed |= not ok
    return failed | rel_data_section(tmp)


def rel_data_section(tmp):
    """RIOT's linker script gives .relocate (flags WA) the type SHT_REL: here printf-m4f.elf's
    .data (0x9c4 bytes, no multiple of an 8-byte Elf32_Rel) made SHT_REL with entry size 8."""
    elf = os.path.join(EXAMPLES, "printf-m4f.elf")
    data = bytearray(open(elf, "rb").read())
    secs, (shoff, shentsize, shnum) = sections(bytes(data))
    stroff = struct.unpack_from("<I", data, shoff + struct.unpack_from("<H", data, 0x32)[0] *
                                shentsize + 16)[0]
    for i in range(shnum):
        hdr = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", data, hdr)
        if data[stroff + name_off:].startswith(b".data\0"):
            size, = struct.unpack_from("<I", data, hdr + 20)
            assert size % 8, "want a size that is no multiple of a relocation"
            struct.pack_into("<I", data, hdr + 4, 9)  # SHT_REL
            struct.pack_into("<I", data, hdr + 36, 8)  # sh_entsize
    path = os.path.join(tmp, "rel-data.elf")
    open(path, "wb").write(bytes(data))
    addrs = sym_diff.random_addresses(elf, ADDRESSES, seed=5)
    ref_clean, ref = addr2line(elf, addrs), addr2line(path, addrs)
    assert ref[0] == 0 and ref[2] == ref_clean[2], "addr2line no longer reads the RIOT-like ELF"
    clean, got = spoor(elf, addrs), spoor(path, addrs)
    ok = got[0] == 0 and got[2] == clean[2]
    print(f"{'ok  ' if ok else 'FAIL'} SHT_REL .data: exit {got[0]}, stderr "
          f"{got[1].strip().splitlines()[:2]}, answers "
          f"{'as for the clean ELF' if got[2] == clean[2] else 'changed'} (addr2line: the same)")
    return not ok


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        failed = named_cases(tmp)
        failed |= check_mutants(tmp)
    sys.exit(1 if failed else 0)
