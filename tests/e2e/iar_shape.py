"""An IAR-shaped ELF made from a GCC one, for the symbolizer's producer test: IAR writes
.debug_aranges sets whose ranges have length 0 and compile-unit DIEs without DW_AT_low_pc,
DW_AT_high_pc and DW_AT_ranges, so that a unit's code is known only from its line program's
sequences (as binutils finds it)."""
import re
import struct
import subprocess

OBJCOPY = "arm-none-eabi-objcopy"
READELF = "arm-none-eabi-readelf"
DW_AT_LOW_PC, DW_AT_HIGH_PC, DW_AT_RANGES = 0x11, 0x12, 0x55
DW_FORM_IMPLICIT_CONST = 0x21
HIDDEN = {DW_AT_LOW_PC: 0x3ff0, DW_AT_HIGH_PC: 0x3ff1, DW_AT_RANGES: 0x3ff2}


def uleb(b, p, signed=False):
    """The LEB128 number at b[p] and the offset after it."""
    v = shift = 0
    while True:
        x = b[p]
        p += 1
        v |= (x & 0x7f) << shift
        shift += 7
        if not x & 0x80:
            return (v - (1 << shift) if signed and x & 0x40 else v), p


def enc_uleb(v):
    out = bytearray()
    while True:
        x = v & 0x7f
        v >>= 7
        out.append(x | (0x80 if v else 0))
        if not v:
            return bytes(out)


def dump(elf, name, out):
    path = out / (name.strip(".") + ".bin")
    subprocess.run([OBJCOPY, f"--dump-section={name}={path}", str(elf)], check=True)
    return bytearray(path.read_bytes())


def units(info):
    """[(header offset, abbrev offset field position, DIE offset)] of 32-bit DWARF 2 to 5."""
    out, p = [], 0
    while p + 11 <= len(info):
        length, version = struct.unpack_from("<IH", info, p)
        if version >= 5:
            field, die = p + 8, p + 12
        else:
            field, die = p + 6, p + 11
        out.append((p, field, die))
        p += 4 + length
    return out


def abbrev_table(ab, off, sites=None):
    """[(code, tag, children, [(name, form, implicit const or None)])] from off to its end; with
    a list as sites, (name position, name, form position, form) of every attribute appended."""
    table, p = [], off
    while True:
        code, p = uleb(ab, p)
        if not code:
            return table
        tag, p = uleb(ab, p)
        children = ab[p]
        p += 1
        attrs = []
        while True:
            at_name = p
            name, p = uleb(ab, p)
            at_form = p
            form, p = uleb(ab, p)
            if not name and not form:
                break
            if sites is not None:
                sites.append((at_name, name, at_form, form))
            const = None
            if form == DW_FORM_IMPLICIT_CONST:
                const, p = uleb(ab, p, signed=True)
            attrs.append((name, form, const))
        table.append((code, tag, children, attrs))


def enc_sleb(v):
    out = bytearray()
    while True:
        x = v & 0x7f
        v >>= 7
        done = (v == 0 and not x & 0x40) or (v == -1 and x & 0x40)
        out.append(x | (0 if done else 0x80))
        if done:
            return bytes(out)


def hideable_units(elf):
    """Offsets of the units whose DIE's low_pc can go without changing what their other DIEs
    mean (from readelf): low_pc 0 or absent, or no range list below the unit DIE (range lists
    count from the unit's low_pc)."""
    out = subprocess.run([READELF, "--debug-dump=info", str(elf)], check=True,
                         capture_output=True, text=True).stdout
    units, unit, depth = {}, None, 0
    for line in out.splitlines():
        m = re.match(r"\s*Compilation Unit @ offset (0x[0-9a-f]+|0):", line)
        if m:
            unit = int(m.group(1), 16)
            units[unit] = {"low_pc": 0, "inner_ranges": False}
            continue
        m = re.match(r"\s*<(\d+)><[0-9a-f]+>:", line)
        if m:
            depth = int(m.group(1))
            continue
        m = re.match(r"\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(\S+)", line)
        if m and unit is not None:
            if depth == 0 and m.group(1) == "DW_AT_low_pc":
                units[unit]["low_pc"] = int(m.group(2), 16)
            if depth > 0 and m.group(1) == "DW_AT_ranges":
                units[unit]["inner_ranges"] = True
    return {u for u, a in units.items() if a["low_pc"] == 0 or not a["inner_ranges"]}


def iar_shaped(elf, out_elf, work):
    """Rewrites elf as IAR writes its DWARF: every .debug_aranges tuple of length 0, and the
    compile-unit DIEs without DW_AT_low_pc, high_pc and ranges (their abbreviations name
    vendor attributes nobody reads instead; the values stay where they were). Units whose
    range lists count from a non-zero low_pc keep it (the rewrite must not change what the
    DWARF means). Returns (units, units rewritten)."""
    info, ab, ar = dump(elf, ".debug_info", work), dump(elf, ".debug_abbrev", work), \
        dump(elf, ".debug_aranges", work)
    us = units(info)
    hideable = hideable_units(elf)
    cu_codes = {}
    for header, field, die in us:
        off = struct.unpack_from("<I", info, field)[0]
        codes = cu_codes.setdefault(off, set())
        if header in hideable:
            codes.add(uleb(info, die)[0])
    new_ab, moved = bytearray(), {}
    for off in sorted(cu_codes):
        moved[off] = len(new_ab)
        for code, tag, children, attrs in abbrev_table(ab, off):
            new_ab += enc_uleb(code) + enc_uleb(tag) + bytes([children])
            for name, form, const in attrs:
                if code in cu_codes[off]:
                    name = HIDDEN.get(name, name)
                new_ab += enc_uleb(name) + enc_uleb(form)
                if const is not None:
                    new_ab += enc_sleb(const)
            new_ab += b"\0\0"
        new_ab += b"\0"
    for _, field, _ in us:
        struct.pack_into("<I", info, field, moved[struct.unpack_from("<I", info, field)[0]])
    p = 0
    while p + 4 <= len(ar):
        length = struct.unpack_from("<I", ar, p)[0]
        end, t = p + 4 + length, p + 16
        while t + 8 <= end:
            lo, n = struct.unpack_from("<II", ar, t)
            if not lo and not n:
                break
            struct.pack_into("<I", ar, t + 4, 0)
            t += 8
        p = end
    for name, data in ((".debug_info", info), (".debug_abbrev", new_ab), (".debug_aranges", ar)):
        (work / (name.strip(".") + ".new")).write_bytes(data)
    subprocess.run([OBJCOPY, *[f"--update-section={n}={work / (n.strip('.') + '.new')}"
                               for n in (".debug_info", ".debug_abbrev", ".debug_aranges")],
                    str(elf), str(out_elf)], check=True)
    return len(us), len(hideable & {h for h, _, _ in us})
