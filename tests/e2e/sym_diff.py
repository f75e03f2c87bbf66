"""Differential check of `spoor sym` against arm-none-eabi-addr2line -f -i (the reference).

For N random halfword-aligned addresses inside the ELF's function symbols, both tools must
give the same innermost function, file basename and line, and the same inline chain
(caller function, call-site file basename and line for each level). Names are compared
demangled (addr2line -C, spoor's default) or raw (addr2line without -C, spoor --no-demangle).
Where the two differ, llvm-symbolizer can be asked as a second referee (compare(...,
second_referee=True)): spoor agreeing with it is counted, not failed."""
import json
import os
import random
import re
import subprocess

ADDR2LINE = "arm-none-eabi-addr2line"
LLVM_SYMBOLIZER = "llvm-symbolizer"
READELF = "arm-none-eabi-readelf"
OBJDUMP = "arm-none-eabi-objdump"


def function_symbols(elf):
    """[(start, size, name)] of every defined FUNC symbol, from arm-none-eabi-readelf."""
    out = subprocess.run([READELF, "-sW", elf], check=True, capture_output=True,
                         text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 8 and parts[3] == "FUNC" and parts[6] != "UND":
            syms.append((int(parts[1], 16) & ~1, int(parts[2], 0), parts[7]))
    return syms


def boundary_quirk(addr, got, ref, syms):
    """addr2line names an assembly function (no DWARF: no file, no line) whose symbol range
    reaches addr - it ends exactly at addr, or its .size overlaps the next function - although a
    later function starts at or before addr and covers it. The symbol table (nm) is the judge:
    accept spoor's answer when it names that later covering function (its DWARF name may drop
    a GCC clone suffix such as .part.0) and gives a file for it."""
    if not ref or len(ref) != 1 or ref[0][1] is not None or not got or got[0][1] is None:
        return False
    ref_starts = [s for s, z, n in syms if n == ref[0][0] and s <= addr <= s + z]
    if not ref_starts:
        return False
    later = {n for s, z, n in syms if s > min(ref_starts) and s <= addr < s + z}
    later |= {n.split(".")[0] for n in later}
    return got[0][0] in later


def decoded_line_rows(elf):
    """Sorted [(addr, is_end, file basename, line)] from objdump --dwarf=decodedline."""
    out = subprocess.run([OBJDUMP, "--dwarf=decodedline", elf], check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"^(\S+)\s+(\d+|-)\s+(0x[0-9a-f]+)\b", line)
        if m:
            end = m.group(2) == "-"
            rows.append((int(m.group(3), 16), 0 if end else 1, os.path.basename(m.group(1)),
                         0 if end else int(m.group(2))))
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def missed_sequence(addr, got, ref, rows):
    """addr2line keeps the right function but gives no line where one line sequence ends and
    another starts at the same address. objdump's decoded line table is the judge: accept
    spoor's file:line when it is the last row at or before addr and that row is no end."""
    if not ref or not got or len(ref) != 1 or ref[0][1] is not None or got[0][0] != ref[0][0]:
        return False
    best = None
    for r in rows:
        if r[0] > addr:
            break
        best = r
    return best is not None and best[1] == 1 and (best[2], best[3]) == (got[0][1], got[0][2])


def random_addresses(elf, count, seed):
    rng = random.Random(seed)
    ranges = [(start, size) for start, size, _ in function_symbols(elf) if size >= 2]
    if not ranges:
        raise SystemExit(f"{elf}: no sized function symbols")
    weights = [size for _, size in ranges]
    picks = rng.choices(ranges, weights=weights, k=count)
    return [start + (rng.randrange(size) & ~1) for start, size in picks]


def all_or_random_addresses(elf, count, seed):
    """Every halfword address inside a sized function symbol when there are at most count of
    them, else count random ones (weighted by symbol size, as random_addresses)."""
    every = sorted({start + off for start, size, _ in function_symbols(elf) if size >= 2
                    for off in range(0, size, 2)})
    return every if len(every) <= count else random_addresses(elf, count, seed)


def _norm_file(path):
    if path in (None, "??", ""):
        return None
    return os.path.basename(path)


def _norm_line(line):
    if line in (None, "?", 0, "0"):
        return 0
    return int(line)


def addr2line_frames(elf, addrs, demangle=True):
    """Map address -> [(function, file basename, line), ...] innermost first."""
    inp = "".join(f"0x{a:08x}\n" for a in addrs)
    out = subprocess.run([ADDR2LINE, "-a", "-f", "-i", *(["-C"] if demangle else []), "-e", elf],
                         input=inp, check=True, capture_output=True, text=True).stdout.splitlines()
    result, i = {}, 0
    while i < len(out):
        addr = int(out[i], 16)
        i += 1
        frames = []
        while i + 1 < len(out) + 1 and i < len(out) and not re.fullmatch(r"0x[0-9a-f]{8}", out[i]):
            func = out[i]
            loc = re.sub(r" \(discriminator \d+\)$", "", out[i + 1])
            file, _, line = loc.rpartition(":")
            frames.append((None if func == "??" else func, _norm_file(file), _norm_line(line)))
            i += 2
        result[addr] = frames
    return result


def llvm_symbolizer_frames(elf, addrs, demangle=True):
    """Map address -> [(function, file basename, line), ...] innermost first, from
    llvm-symbolizer (function names by linkage name, inlined frames, one blank line after each
    address). Its "??" file and line 0 mean unknown, as addr2line's "??:0" and "?"."""
    inp = "".join(f"0x{a:08x}\n" for a in addrs)
    out = subprocess.run([LLVM_SYMBOLIZER, f"--obj={elf}", "--inlining", "--functions=linkage",
                          "--demangle" if demangle else "--no-demangle"],
                         input=inp, check=True, capture_output=True, text=True).stdout
    result = {}
    blocks = out.split("\n\n")
    for a, block in zip(addrs, blocks):
        lines = block.strip("\n").splitlines()
        frames = []
        for func, loc in zip(lines[0::2], lines[1::2]):
            parts = loc.rsplit(":", 2)
            file, line = (parts[0], parts[1]) if len(parts) == 3 else ("??", "0")
            frames.append((None if func == "??" else func, _norm_file(file), _norm_line(line)))
        result[a] = frames
    return result


def spoor_frames(spoor, elf, addrs, demangle=True):
    inp = "".join(f"0x{a:08x}\n" for a in addrs)
    out = subprocess.run([spoor, "sym", "--json", *([] if demangle else ["--no-demangle"]), "-e",
                          elf], input=inp, check=True, capture_output=True, text=True).stdout.splitlines()
    result = {}
    for line in out:
        obj = json.loads(line)
        frames = [(obj["function"], _norm_file(obj["file"]), _norm_line(obj["line"]))]
        for inl in obj["inlined"]:
            frames.append((inl["function"], _norm_file(inl["file"]), _norm_line(inl["line"])))
        result[int(obj["addr"], 16)] = frames
    return result


def compare(spoor, elf, count=10000, seed=1, show=10, addrs=None, demangle=True,
            second_referee=False):
    """Returns (addresses checked, list of (addr, spoor frames, addr2line frames) mismatches).
    With second_referee, an address where spoor and addr2line differ is no mismatch when
    llvm-symbolizer gives spoor's answer; the counts say how many were settled that way."""
    addrs = addrs if addrs is not None else random_addresses(elf, count, seed)
    ref = addr2line_frames(elf, addrs, demangle)
    got = spoor_frames(spoor, elf, addrs, demangle)
    syms = function_symbols(elf)
    bad, quirks, missed, rows, llvm, by_llvm = [], 0, 0, None, None, 0
    for a in addrs:
        if got.get(a) == ref.get(a):
            continue
        if boundary_quirk(a, got.get(a), ref.get(a), syms):
            quirks += 1
            continue
        rows = rows if rows is not None else decoded_line_rows(elf)
        if missed_sequence(a, got.get(a), ref.get(a), rows):
            missed += 1
            continue
        if second_referee:
            if llvm is None:
                differing = [b for b in addrs if got.get(b) != ref.get(b)]
                llvm = llvm_symbolizer_frames(elf, differing, demangle)
            if got.get(a) == llvm.get(a):
                by_llvm += 1
                continue
        bad.append((a, got.get(a), ref.get(a)))
    if missed:
        print(f"{elf}: {missed} addresses at a line-sequence boundary where addr2line gives no "
              f"line (objdump --dwarf=decodedline is the judge)")
    if quirks:
        print(f"{elf}: {quirks} addresses where addr2line names an assembly function whose "
              f"symbol overreaches a later one (readelf's symbol table is the judge)")
    if second_referee:
        print(f"{elf}: {by_llvm} addresses where addr2line differs and llvm-symbolizer gives "
              f"spoor's answer")
    print(f"{elf}: {len(addrs) - quirks - missed - by_llvm - len(bad)} identical, "
          f"{quirks + missed + by_llvm} judged, {len(bad)} disagree"
          f"{' with both referees' if second_referee else ''}")
    for a, g, r in bad[:show]:
        print(f"MISMATCH 0x{a:08x}\n  spoor:     {g}\n  addr2line: {r}"
              + (f"\n  llvm-symbolizer: {llvm.get(a)}" if second_referee else ""))
    return len(addrs), bad


def inline_count(spoor, elf, count=10000, seed=1):
    """How many of the sampled addresses lie in inlined code (spoor's and addr2line's agree)."""
    addrs = random_addresses(elf, count, seed)
    ref = addr2line_frames(elf, addrs)
    return sum(1 for a in addrs if len(ref.get(a, [])) > 1)


if __name__ == "__main__":
    import sys
    spoor = os.environ.get("SPOOR_BIN", "spoor")
    for elf in sys.argv[1:]:
        compare(spoor, elf)
