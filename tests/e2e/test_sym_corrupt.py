"""No silent wrong answers from corrupt DWARF or ELF headers.

Mutants of example ELFs of four cores (M0, M3, M4F with newlib, M33), each chosen from the ELF
itself, not from fixed offsets (dwarf_sites.py parses the sections, the abbreviation tables and
the DIE trees): seeded bit flips in each DWARF section and in the section header table, and
damage aimed at what addr2line checks and libdw reads past (see aimed()): end-of-siblings bytes
turned into other values, abbreviation codes into other or missing ones, an abbreviation's
attribute name or form changed, a unit's length that no longer ends its DIE tree, strp and
line_strp offsets moved to another string or past their section. For every mutant,
arm-none-eabi-addr2line is the referee of "this file is damaged": wherever it reports an error
on stderr and spoor's answers differ from those for the clean ELF, spoor must have said so (a
warning on stderr) or refused the file (non-zero exit). A mutant that spoor answers differently
with neither is a silent wrong answer and fails the test.

Also the named cases of the hardening issue: a line program with line_range 0 (warned, and
every answer that changed is marked "partial"), a unit length of 0, a section header whose
sh_link is out of range (refused, as readelf complains), and a RIOT-like ELF whose initialised
data section has the type SHT_REL with a size that is no multiple of a relocation: addr2line
answers from it as from the clean ELF, and so must spoor (same answers, exit 0).

The test can fail: with the per-unit DWARF damage scan of dwarf_scopes.c turned off (its
abbreviation and DIE-tree checks made to report nothing) it finds 5 silent changed answers among
these mutants (aimed abbrev-code, abbrev-form, bit flips in .debug_info and .debug_abbrev)."""
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


# One-byte attribute names and forms to change an abbreviation's into: names the symbolizer reads
# (name, linkage name, ranges, low/high pc, abstract origin, call file/line, sibling) and forms of
# every size class (fixed 1, 2, 4, 8 bytes, LEB128, strings, blocks, references, flag_present).
NAMES = [0x01, 0x03, 0x11, 0x12, 0x31, 0x47, 0x55, 0x58, 0x59, 0x6e, 0x3a, 0x3b, 0x49, 0x27]
FORMS = [0x01, 0x05, 0x06, 0x07, 0x08, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x13,
         0x17, 0x18, 0x19, 0x1f, 0x25, 0x02, 0x30, 0x7f]  # 0x02, 0x30, 0x7f: no such form


def aimed(data, rng):
    """(label, mutant) pairs of damage aimed at what addr2line checks and libdw reads past,
    positions found by parsing the ELF given (dwarf_sites.py), AIMED of each kind:
    end-of-siblings: an end-of-siblings byte turned into an abbreviation code of the unit, or
      into any other byte value;
    abbrev-code: a DIE's abbreviation code turned into another one of the unit, or into one the
      unit's table does not have;
    abbrev-attr, abbrev-form: an attribute's name or form in an abbreviation changed (the form
      to another size, or to a form that does not exist);
    unit-length: a unit's length a few bytes shorter or longer (its DIE tree no longer ends
      exactly at its end);
    strp, line_strp: a string offset of a DIE (strp, line_strp), or of a DWARF 5 line program's
      directory and file entries, moved to the start of another string of its section
      (.debug_str, .debug_line_str), or past the section's end."""
    sites = dwarf_sites.Sites(data)
    base = sites.info_offset
    abbrev_base = sites.secs[".debug_abbrev"][0]
    line, line_strps = sites.secs[".debug_line"][0], sites.line_strps(data)
    out = []

    def mutant(label, pos, value, fmt="<B"):
        m = bytearray(data)
        struct.pack_into(fmt, m, pos, value)
        out.append((label, bytes(m)))

    for i in range(AIMED):
        pos, unit = rng.choice(sites.ends)
        codes = [c for c in sites.units[unit][2] if c < 0x80]
        code = rng.choice(codes) if i % 2 == 0 else rng.randrange(1, 256)
        mutant(f"end-of-siblings@0x{pos:x}={code}", base + pos, code)
        pos, code, unit = rng.choice([c for c in sites.codes if c[1] < 0x80])
        table = sites.units[unit][2]
        if i % 2 == 0:
            new = rng.choice([c for c in table if c < 0x80 and c != code] or [code])
        else:
            new = rng.choice([c for c in range(1, 0x80) if c not in table])
        mutant(f"abbrev-code@0x{pos:x}={new}", base + pos, new)
        at_name, name, at_form, form = rng.choice([a for a in sites.attrs if a[1] < 0x80])
        new = rng.choice([n for n in NAMES if n != name])
        mutant(f"abbrev-attr@0x{at_name:x}=0x{new:x}", abbrev_base + at_name, new)
        at_name, name, at_form, form = rng.choice([a for a in sites.attrs if a[3] < 0x80])
        new = rng.choice([f for f in FORMS if f != form])
        mutant(f"abbrev-form@0x{at_form:x}=0x{new:x}", abbrev_base + at_form, new)
        header, end, _ = rng.choice(sites.units)
        length = end - header - 4
        delta = rng.choice([-8, -4, -3, -2, -1, 1, 2, 3, 4, 8])
        mutant(f"unit-length@0x{header:x}={length + delta}", base + header, length + delta, "<I")
        for kind, offsets, at in (("strp", sites.strps, base), ("line_strp", line_strps, line)):
            for form, sec in ((dwarf_sites.DW_FORM_STRP, ".debug_str"),
                              (dwarf_sites.DW_FORM_LINE_STRP, ".debug_line_str")):
                mine = [x for x in offsets if x[1] == form]
                if not mine or sec not in sites.secs:
                    continue
                pos, _, value = rng.choice(mine)
                if i % 2 == 0:
                    new = rng.choice([o for o in sites.string_starts(data, sec) if o != value])
                else:
                    new = sites.secs[sec][1] + rng.randrange(0, 1 << 16)
                mutant(f"{kind}@0x{pos:x}=0x{new:x}", at + pos, new, "<I")
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
    """RIOT's linker script gives .relocate (flags WA) the type SHT_REL: here the first writable
    PROGBITS section of the example ELFs whose size is no multiple of an 8-byte Elf32_Rel made
    SHT_REL with entry size 8 (chosen from the section headers, whatever the layout)."""
    for name in ELVES:
        elf = os.path.join(EXAMPLES, name)
        data = bytearray(open(elf, "rb").read())
        _, (shoff, shentsize, shnum) = sections(bytes(data))
        shstrndx, = struct.unpack_from("<H", data, 0x32)
        stroff = struct.unpack_from("<I", data, shoff + shstrndx * shentsize + 16)[0]
        for i in range(shnum):
            hdr = shoff + i * shentsize
            name_off, sh_type, flags = struct.unpack_from("<III", data, hdr)
            size, = struct.unpack_from("<I", data, hdr + 20)
            if sh_type == 1 and flags & 3 == 3 and size % 8:  # PROGBITS, SHF_WRITE|SHF_ALLOC
                section = data[stroff + name_off:data.index(b"\0", stroff + name_off)].decode()
                struct.pack_into("<I", data, hdr + 4, 9)  # SHT_REL
                struct.pack_into("<I", data, hdr + 36, 8)  # sh_entsize
                break
        else:
            continue
        break
    else:
        raise AssertionError("no example ELF has a writable section of a size that is no "
                             "multiple of a relocation")
    path = os.path.join(tmp, "rel-data.elf")
    open(path, "wb").write(bytes(data))
    addrs = sym_diff.random_addresses(elf, ADDRESSES, seed=5)
    ref_clean, ref = addr2line(elf, addrs), addr2line(path, addrs)
    assert ref[0] == 0 and ref[2] == ref_clean[2], "addr2line no longer reads the RIOT-like ELF"
    clean, got = spoor(elf, addrs), spoor(path, addrs)
    ok = got[0] == 0 and got[2] == clean[2]
    print(f"{'ok  ' if ok else 'FAIL'} SHT_REL {section} of {name}: exit {got[0]}, stderr "
          f"{got[1].strip().splitlines()[:2]}, answers "
          f"{'as for the clean ELF' if got[2] == clean[2] else 'changed'} (addr2line: the same)")
    return not ok


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        failed = named_cases(tmp)
        failed |= check_mutants(tmp)
    sys.exit(1 if failed else 0)
