"""Where the parts of an ELF's DWARF are, found by parsing the file (no readelf, no pyelftools):
the sections, and in .debug_info every DIE's abbreviation code, every end-of-siblings byte and
every string offset (DW_FORM_strp, DW_FORM_line_strp), so that a test can damage exactly one
kind of byte of whatever ELF it is given, whatever the layout of the example code."""
import struct

from iar_shape import abbrev_table, uleb

# Sizes of the forms of fixed size (32-bit DWARF, 4-byte addresses); the rest are read below.
FIXED = {0x01: 4, 0x05: 2, 0x06: 4, 0x07: 8, 0x0b: 1, 0x0c: 1, 0x0e: 4, 0x11: 1, 0x12: 2,
         0x13: 4, 0x14: 8, 0x17: 4, 0x19: 0, 0x1c: 4, 0x1d: 4, 0x1e: 16, 0x1f: 4, 0x20: 8,
         0x21: 0, 0x24: 8, 0x25: 1, 0x26: 2, 0x27: 3, 0x28: 4, 0x29: 1, 0x2a: 2, 0x2b: 3,
         0x2c: 4, 0x1f20: 4, 0x1f21: 4}
LEB = {0x0d, 0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23, 0x1f01, 0x1f02}
DW_FORM_STRP, DW_FORM_LINE_STRP = 0x0e, 0x1f


def sections(data):
    """{name: (file offset, size)} from the ELF32 section headers."""
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    hdrs = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        end = data.index(b"\0", stroff + h[0])
        out[data[stroff + h[0]:end].decode()] = (h[4], h[5])
    return out


def _skip(info, p, form, version):
    if form in FIXED:
        return p + FIXED[form]
    if form in LEB:
        return uleb(info, p)[1]
    if form == 0x10:  # ref_addr: an address in DWARF 2, an offset after
        return p + 4
    if form == 0x08:  # string
        return info.index(b"\0", p) + 1
    if form in (0x03, 0x04, 0x0a):  # block2, block4, block1
        size = {0x03: 2, 0x04: 4, 0x0a: 1}[form]
        n = int.from_bytes(info[p:p + size], "little")
        return p + size + n
    if form in (0x09, 0x18):  # block, exprloc
        n, p = uleb(info, p)
        return p + n
    if form == 0x16:  # indirect
        form, p = uleb(info, p)
        return _skip(info, p, form, version)
    raise ValueError(f"form 0x{form:x}")


class Sites:
    """Byte positions (offsets into .debug_info) of one ELF's DIE tree:
    codes: [(position, code, unit index)] of every DIE's abbreviation code;
    ends: [(position, unit index)] of every end-of-siblings byte;
    strps: [(position, form, value)] of every .debug_str / .debug_line_str offset;
    units: [(header offset, end offset, {code: abbreviation})];
    attrs: [(name position, name, form position, form)] of every attribute specification of
    the abbreviation tables the units use (positions are offsets into .debug_abbrev)."""

    def __init__(self, data):
        self.secs = sections(data)
        off, size = self.secs[".debug_info"]
        info = data[off:off + size]
        aoff, asize = self.secs[".debug_abbrev"]
        abbrev = data[aoff:aoff + asize]
        self.codes, self.ends, self.strps, self.units, self.attrs = [], [], [], [], []
        tables = set()
        p = 0
        while p + 11 <= len(info):
            length, version = struct.unpack_from("<IH", info, p)
            end = p + 4 + length
            if version >= 5:
                unit_type, _, abbrev_off = struct.unpack_from("<BBI", info, p + 6)
                q = p + 12 + (8 if unit_type in (2, 4, 5, 6) else 0)
            else:
                abbrev_off, = struct.unpack_from("<I", info, p + 6)
                q = p + 11
            table = {c: (tag, ch, attrs) for c, tag, ch, attrs in abbrev_table(abbrev, abbrev_off)}
            if abbrev_off not in tables:
                tables.add(abbrev_off)
                abbrev_table(abbrev, abbrev_off, sites=self.attrs)
            u = len(self.units)
            self.units.append((p, end, table))
            depth = 0
            while q < end:
                at = q
                code, q = uleb(info, q)
                if not code:
                    self.ends.append((at, u))
                    depth -= 1
                    if depth <= 0:
                        break
                    continue
                self.codes.append((at, code, u))
                tag, children, attrs = table[code]
                for _name, form, _const in attrs:
                    if form in (DW_FORM_STRP, DW_FORM_LINE_STRP):
                        self.strps.append((q, form, struct.unpack_from("<I", info, q)[0]))
                    q = _skip(info, q, form, version)
                if children:
                    depth += 1
                elif depth == 0:
                    break
            p = end
        self.info_offset = off

    def line_strps(self, data):
        """[(position, form, value)] of every string offset (DW_FORM_line_strp, DW_FORM_strp)
        in the directory and file entries of the DWARF 5 line program headers, positions as
        offsets into .debug_line."""
        off, size = self.secs[".debug_line"]
        line = data[off:off + size]
        out, p = [], 0
        while p + 10 <= len(line):
            length, version = struct.unpack_from("<IH", line, p)
            end = p + 4 + length
            if version >= 5:
                q = p + 4 + 2 + 2 + 4 + 5  # address/segment sizes, header_length, 5 bytes
                opcode_base = line[q]
                q += opcode_base  # opcode_base, standard_opcode_lengths
                for _ in range(2):  # directories, then file names
                    nformats = line[q]
                    q += 1
                    formats = []
                    for _ in range(nformats):
                        kind, q = uleb(line, q)
                        form, q = uleb(line, q)
                        formats.append(form)
                    count, q = uleb(line, q)
                    for _ in range(count):
                        for form in formats:
                            if form in (DW_FORM_STRP, DW_FORM_LINE_STRP):
                                out.append((q, form, struct.unpack_from("<I", line, q)[0]))
                            q = _skip(line, q, form, version)
            p = end
        return out

    def string_starts(self, data, name):
        """Offsets of the strings of a string section (each starts after a NUL, or at 0)."""
        off, size = self.secs[name]
        text = data[off:off + size]
        return [0] + [i + 1 for i in range(size - 1) if text[i] == 0]
