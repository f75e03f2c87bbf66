#!/usr/bin/env bash
# Byte-for-byte comparison of two `spoor sym` binaries (an old one, the reference, and a new one):
# standard output, standard error and exit status must be the same on every input, in every
# mode. For changes that must not change a single answer (speed work).
# usage: bench/sym_compare.sh OLD_SPOOR NEW_SPOOR [FIRMWARE_DIR]
#   FIRMWARE_DIR: a build's firmware directory (default build/check/firmware): every ELF under
#   it is an input. The inputs made once are kept in SYM_COMPARE_CACHE (default
#   build/sym_compare; delete it to make them again).
# Inputs, each through every mode (text, --json, --no-demangle, -r, --json -r, --json
# --no-demangle):
#   - the two ELFs of bench/sym.sh with its 100,000 addresses (stdin a file, and once a pipe);
#   - every ELF under FIRMWARE_DIR: 3,000 random code addresses and the addresses around data,
#     the vector table and past the end; once with tokens that are no addresses or odd ones
#     (decimal, 0X, leading zeros, more than 8 digits, a lone 0x, white space of every kind)
#     and once with 200 addresses as arguments;
#   - the producer ELFs of tests/e2e/test_sym_producers.py (g++, clang, C with DWARF 2 to 5 and
#     LTO, assembly with Rust and C++ symbols, STT_FILE, split DWARF) and the IAR-shaped ones;
#   - the mutants of tests/e2e/test_sym_corrupt.py (seeded bit flips per DWARF section and in
#     the section headers, the aimed damage, the named cases): 300 addresses given twice.
# Prints the number of runs and every difference; exit status 1 when there is one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 OLD_SPOOR NEW_SPOOR [FIRMWARE_DIR]" >&2; exit 2; }
old=$(realpath "$1")
new=$(realpath "$2")
fw=$(realpath "${3:-$root/build/check/firmware}")
cache=${SYM_COMPARE_CACHE:-$root/build/sym_compare}
mkdir -p "$cache"
cache=$(realpath "$cache")
[ -f "$cache/many.elf" ] || "$root/bench/sym_many_sections.sh" "$cache/many.elf" >/dev/null
SPOOR_BIN=$new SPOOR_FIRMWARE_DIR=$fw SPOOR_SOURCE_DIR=$root PYTHONPATH=$root/tests/e2e \
  python3 - "$old" "$new" "$fw" "$cache" <<'PY'
import concurrent.futures
import os
import pathlib
import random
import subprocess
import sys

import iar_shape
import sym_diff
import test_sym_corrupt
import test_sym_producers

old, new, fw, cache = sys.argv[1:5]
cache = pathlib.Path(cache)
MODES = [[], ["--json"], ["--no-demangle"], ["-r"], ["--json", "-r"], ["--json", "--no-demangle"]]
runs = []  # (label, args after "sym", stdin bytes or None, via a pipe)


def addr_text(addrs):
    return "".join(f"0x{a:08x}\n" for a in addrs).encode()


def odd_tokens(addrs):
    """The addresses in odd spellings, between tokens that are no addresses."""
    rng = random.Random(3)
    out = []
    for a in addrs:
        k = rng.randrange(10)
        out.append([f"0x{a:x}", f"0X{a:X}", str(a), f"0x{a:012x}", f"0x{a:x}",
                    f"{a:#x}", f"0x{a | 1:x}", "zz", "0x", f"0x{a:x}g"][k])
        out.append(rng.choice([" ", "\n", "\t", "\r\n", "  \n\v\f", ""]) or " ")
    out += ["0x", "\n", "0x123456789", " ", "0xffffffff", "\n", "4294967296", "\n", "-1", " ",
            "0x" + "1" * 70, "\n", "0x0", "\n", "0x1", " 0x2"]  # last token without newline
    return "".join(out).encode()


def add(label, elf, stdin, modes=MODES, pipe=False, args=None):
    for m in modes:
        runs.append((f"{label} {' '.join(m)}", [*m, "-e", str(elf), *(args or [])], stdin, pipe))


# the bench ELFs and their 100,000 addresses
bench = [pathlib.Path(fw) / "examples" / "printf-m4f.elf", cache / "many.elf"]
for elf in bench:
    text = addr_text(sym_diff.random_addresses(str(elf), 100000, 7))
    add(f"bench {elf.name}", elf, text)
    add(f"bench {elf.name} (pipe)", elf, text, modes=[[]], pipe=True)

# every ELF of the firmware directory
elves = sorted(pathlib.Path(fw).rglob("*.elf"))
for elf in elves:
    try:
        addrs = sym_diff.random_addresses(str(elf), 3000, 11)
    except Exception:  # no function symbols
        addrs = []
    addrs += [0, 2, 0x10, 0x40, 0x100, 0x20000000, 0x20000100, 0xfffffffe, 0xffffffff]
    add(f"firmware {elf.relative_to(fw)}", elf, addr_text(addrs))
    add(f"firmware {elf.relative_to(fw)} (odd tokens)", elf, odd_tokens(addrs[:400]),
        modes=[[], ["--json"]])
    add(f"firmware {elf.relative_to(fw)} (arguments)", elf, None, modes=[[], ["--json"], ["-r"]],
        args=[f"0x{a:x}" for a in addrs[:200]])

# the producer ELFs
prod = cache / "producers"
if not (prod / "done").exists():
    prod.mkdir(exist_ok=True)
    test_sym_producers.build_all(prod)
    for program in ("calls-m3", "printf-m4f"):
        iar_shape.iar_shaped(pathlib.Path(fw) / "examples" / f"{program}.elf",
                             prod / f"{program}-iar.elf", prod)
    (prod / "done").write_text("")
for elf in sorted(prod.glob("*.elf")):
    try:
        addrs = sym_diff.all_or_random_addresses(str(elf), 3000, seed=1)
    except Exception:
        addrs = [0x100, 0x200]
    add(f"producer {elf.name}", elf, addr_text(addrs))

# the corrupt mutants
mut = cache / "mutants"
if not (mut / "done").exists():
    mut.mkdir(exist_ok=True)
    test_sym_corrupt.named_cases(str(mut))  # leaves line_range0.elf, unit_length0.elf, ...
    for name in test_sym_corrupt.ELVES:
        elf = os.path.join(fw, "examples", name)
        data = open(elf, "rb").read()
        secs, (shoff, shentsize, shnum) = test_sym_corrupt.sections(data)
        targets = [(s, *secs[s]) for s in test_sym_corrupt.SECTIONS if s in secs and secs[s][1] > 0]
        targets.append(("section headers", shoff, shentsize * shnum))
        for sec, off, size in targets:
            rng = random.Random(f"{name}{sec}")
            for i in range(test_sym_corrupt.MUTANTS):
                m = test_sym_corrupt.flip(data, rng, off, size, rng.choice((1, 2, 4)))
                (mut / f"{name}.{sec.strip('.').replace(' ', '_')}.{i}.elf").write_bytes(m)
        rng = random.Random(f"{name}aimed")
        for i, (label, m) in enumerate(test_sym_corrupt.aimed(data, rng)):
            (mut / f"{name}.aimed.{i}.{label.split('@')[0]}.elf").write_bytes(m)
    (mut / "done").write_text("")
addr_cache = {}
for elf in sorted(mut.glob("*.elf")):
    base = next((e for e in test_sym_corrupt.ELVES if elf.name.startswith(e)), "calls-m3.elf")
    if base not in addr_cache:
        a = sym_diff.random_addresses(os.path.join(fw, "examples", base), 300, seed=7)
        addr_cache[base] = addr_text(a + a)
    add(f"mutant {elf.name}", elf, addr_cache[base], modes=[[], ["--json"], ["-r"]])


def run(binary, args, stdin, pipe):
    if stdin is None:
        r = subprocess.run([binary, "sym", *args], capture_output=True, timeout=600)
    elif pipe:
        p = subprocess.Popen([binary, "sym", *args], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.communicate(stdin, timeout=600)
        return p.returncode, out, err
    else:
        import tempfile
        with tempfile.TemporaryFile() as f:
            f.write(stdin)
            f.seek(0)
            r = subprocess.run([binary, "sym", *args], stdin=f, capture_output=True, timeout=600)
    return r.returncode, r.stdout, r.stderr


def compare(item):
    label, args, stdin, pipe = item
    a, b = run(old, args, stdin, pipe), run(new, args, stdin, pipe)
    if a == b:
        return None
    what = [k for k, x, y in zip(("exit", "stdout", "stderr"), a, b) if x != y]
    detail = ""
    if a[1] != b[1]:
        la, lb = a[1].splitlines(), b[1].splitlines()
        i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        detail = f" first stdout line {i + 1}: {la[i:i + 1]} vs {lb[i:i + 1]}"
    elif a[2] != b[2]:
        detail = f" stderr {a[2][:200]!r} vs {b[2][:200]!r}"
    else:
        detail = f" exit {a[0]} vs {b[0]}"
    return f"DIFFERS {label}: {', '.join(what)};{detail}"


with concurrent.futures.ThreadPoolExecutor(2) as pool:
    diffs = [d for d in pool.map(compare, runs) if d]
for d in diffs:
    print(d)
kinds = {}
for label, *_ in runs:
    kinds[label.split()[0]] = kinds.get(label.split()[0], 0) + 1
print(f"{len(runs)} runs ({', '.join(f'{k} {v}' for k, v in kinds.items())}), "
      f"{len(elves)} firmware ELFs: {len(diffs)} differ")
sys.exit(1 if diffs else 0)
PY
