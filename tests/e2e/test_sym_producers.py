"""spoor sym on firmware from several producers, against arm-none-eabi-addr2line, with
llvm-symbolizer as the second referee.

The sources in tests/e2e/fw/producers/ are built here for the mps2-an385 (Cortex-M3) memory map
(they are never run): C++ with classes, namespaces, templates, overloads and inlined members by
arm-none-eabi-g++ (-O2 DWARF 5, -Os DWARF 4, -O1 DWARF 3, which names functions with
DW_AT_MIPS_linkage_name) and by clang (LLVM: its own DWARF 5 and line-0 rows); C with newlib at
-gdwarf-2, -3, -4 and -5 and with -flto (inlining across units); functions named by Rust
(v0 and legacy) and C++ symbols from GNU as, with DWARF and with the symbol table alone.

For every halfword address inside a function symbol (or 3,000 random ones where there are
more), `spoor sym --json` must give addr2line's innermost function, file basename, line and
inline chain, twice: names demangled (spoor's default, `addr2line -C`) and raw (`spoor sym
--no-demangle`, addr2line without -C). Where the two differ, llvm-symbolizer is asked: the test
fails only where spoor disagrees with both. The counts are printed per ELF.

An IAR-shaped ELF, made from example firmware (calls-m3, printf-m4f) by iar_shape.py: every
.debug_aranges range of length 0 and the compile-unit DIEs without DW_AT_low_pc, high_pc and
ranges (readelf shows them so), as IAR writes them. Every halfword of its code must give
addr2line's answer, addr2line must give on it what it gives on the GCC original (the rewrite
kept the DWARF's meaning), and the lines must be there (before spoor read such a unit's line
program, these addresses had no file and line). llvm-symbolizer (14) finds no line for such
units (it trusts the empty aranges): its agreement is printed, not required.

Code without a line row (gcc-stt-file: top-level assembly in a unit with DWARF, a C file built
without debug information, an assembly file): addr2line and llvm-symbolizer give a local
function's address the file of the STT_FILE symbol before it; spoor prints exactly that file with
line 0 (text `FILE:0`, JSON `"line":0`), and no file for a global function.

Also checked: C++ names really come demangled with parameters; line-0 rows keep their file
(text `FILE:0`, JSON line 0, llvm-symbolizer's `FILE:0`; addr2line prints `FILE:?`); the -flto
and g++ builds have inlined code among the addresses; and -gsplit-dwarf builds (DWARF 4 and 5)
are refused with one line on stderr and exit status 2.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import iar_shape  # noqa: E402
import sym_diff  # noqa: E402
from harness import firmware_dir, require_tool  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FW = SOURCE_DIR / "tests" / "e2e" / "fw"
SRC = FW / "producers"
LINK = ["-T", str(FW / "unwind_fw.ld"), "-Wl,--defsym=FW_FLASH=0x0,--defsym=FW_RAM=0x20000000"]
M3 = ["-mcpu=cortex-m3", "-mthumb"]
CXX_COMPILE = ["-fno-exceptions", "-fno-rtti", "-ffreestanding", "-Wall", "-Wextra", "-Werror"]
CXX_FLAGS = [*CXX_COMPILE, "-nostartfiles", "-nodefaultlibs"]  # no libstdc++, no crt0
C_FLAGS = ["-ffreestanding", "-nostartfiles", "-Wall", "-Wextra", "-Werror"]
C_SOURCES = [str(SRC / "c_inline.c"), str(SRC / "c_lto_peer.c")]
NEWLIB = ["-lc", "-lgcc"]
CXX_LINK = [*LINK, "-lc", "-lgcc"]  # after the sources

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def builds(out):
    """name -> list of commands that make out/name.elf (in out as working directory)."""
    gxx, gcc = require_tool("arm-none-eabi-g++"), require_tool("arm-none-eabi-gcc")
    clang = require_tool("clang")
    cxx = str(SRC / "cxx_classes.cpp")
    b = {
        "gxx-O2-dwarf5": [[gxx, *M3, "-g", "-gdwarf-5", "-O2", *CXX_FLAGS, cxx, *CXX_LINK, "-o"]],
        "gxx-Os-dwarf4": [[gxx, *M3, "-g", "-gdwarf-4", "-Os", *CXX_FLAGS, cxx, *CXX_LINK, "-o"]],
        "gxx-O1-dwarf3": [[gxx, *M3, "-g", "-gdwarf-3", "-O1", *CXX_FLAGS, cxx, *CXX_LINK, "-o"]],
        "clang-cxx-O2": [
            [clang, "--target=arm-none-eabi", *M3, "-g", "-O2", *CXX_COMPILE, "-c", cxx, "-o",
             "clang-cxx.o"],
            [gcc, *M3, "-nostartfiles", "clang-cxx.o", *CXX_LINK, "-o"]],
        "gas-rust": [[gcc, *M3, "-g", "-nostdlib", *LINK, str(SRC / "rust_names.s"), "-o"]],
    }
    for v in (2, 3, 4, 5):
        b[f"gcc-c-dwarf{v}"] = [[gcc, *M3, "-g", f"-gdwarf-{v}", "-O2", *C_FLAGS, *LINK,
                                 *C_SOURCES, *NEWLIB, "-o"]]
    b["gcc-c-lto"] = [[gcc, *M3, "-g", "-O2", "-flto", *C_FLAGS, *LINK, *C_SOURCES, *NEWLIB,
                       "-o"]]
    stt = [gcc, *M3, "-O1", "-Wall", "-Wextra", "-Werror", "-c"]
    b["gcc-stt-file"] = [  # code without line rows: files from STT_FILE symbols
        [*stt, "-g", str(SRC / "stt_file.c"), "-o", "stt_file.o"],
        [*stt, "-g0", str(SRC / "stt_file_nodebug.c"), "-o", "stt_file_nodebug.o"],
        [*stt, str(SRC / "stt_file_asm.s"), "-o", "stt_file_asm.o"],
        [gcc, *M3, "-nostdlib", *LINK, "stt_file.o", "stt_file_nodebug.o", "stt_file_asm.o",
         "-o"]]
    for v in (4, 5):
        b[f"gcc-c-split-dwarf{v}"] = [[gcc, *M3, "-g", f"-gdwarf-{v}", "-gsplit-dwarf", "-O2",
                                       *C_FLAGS, *LINK, *C_SOURCES, *NEWLIB, "-o"]]
    return b


def build_all(out):
    elves = {}
    for name, commands in builds(out).items():
        elf = out / f"{name}.elf"
        for cmd in commands:
            cmd = cmd + [str(elf)] if cmd[-1] == "-o" else cmd
            subprocess.run(cmd, check=True, cwd=out)
        elves[name] = elf
    stripped = out / "gas-rust-nodebug.elf"
    subprocess.run([require_tool("arm-none-eabi-objcopy"), "--strip-debug", str(elves["gas-rust"]),
                    str(stripped)], check=True)
    elves["gas-rust-nodebug"] = stripped
    return elves


def spoor(*args):
    return subprocess.run([SPOOR, "sym", *args], capture_output=True, text=True)


def check_agreement(name, elf):
    addrs = sym_diff.all_or_random_addresses(str(elf), 3000, seed=len(name))
    for demangle in (True, False):
        print(f"--- {name}: names {'demangled' if demangle else 'raw (--no-demangle)'}")
        n, bad = sym_diff.compare(SPOOR, str(elf), addrs=addrs, demangle=demangle,
                                  second_referee=True, show=5)
        check(not bad, f"{name}: {len(bad)} of {n} addresses disagree with both referees")
    return addrs


def check_names(name, elf, addrs):
    """Per-ELF facts that make the comparison mean something."""
    frames = sym_diff.spoor_frames(SPOOR, str(elf), addrs)
    inlined = sum(1 for a in addrs if len(frames[a]) > 1)
    line0 = [a for a in addrs if frames[a][0][1] and frames[a][0][2] == 0]
    names = {f[0] for a in addrs for f in frames[a] if f[0]}
    print(f"{name}: {len(addrs)} addresses, {inlined} in inlined code, {len(line0)} on line-0 "
          f"rows, {len(names)} function names")
    if name.startswith(("gxx", "clang")):
        check("sensor::Accelerometer::I2C_RegisterRead(unsigned char, unsigned char)" in names,
              f"{name}: no demangled overload name among {sorted(names)[:8]}")
        check(any(n.startswith("util::Ring<int, 8>::") for n in names),
              f"{name}: no demangled template member name")
    if name.startswith("gas-rust"):
        check({"foo::example_function", "<std::path::PathBuf>::new", "foo::bar",
               "core::fmt::Formatter::pad", "my_crate::main::{closure#0}"} <= names,
              f"{name}: Rust names not demangled: {sorted(names)}")
    if name in ("gxx-O2-dwarf5", "gcc-c-lto", "gcc-c-dwarf5", "clang-cxx-O2"):
        check(inlined > 0, f"{name}: no address in inlined code was checked")
    return line0


def check_line_zero(name, elf, addrs):
    """A line-0 row: spoor keeps the file; text FILE:0, JSON 0; llvm-symbolizer FILE:0."""
    a = addrs[0]
    text = spoor("-e", str(elf), hex(a)).stdout
    obj = json.loads(spoor("--json", "-e", str(elf), hex(a)).stdout)
    llvm = subprocess.run([require_tool("llvm-symbolizer"), f"--obj={elf}", hex(a)],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    a2l = subprocess.run([require_tool("arm-none-eabi-addr2line"), "-e", str(elf), hex(a)],
                         capture_output=True, text=True, check=True).stdout.strip()
    print(f"{name}: line 0 at {a:#x}: spoor '{text.strip()}', llvm-symbolizer '{llvm[1]}', "
          f"addr2line '{a2l}'")
    check(obj["file"] and obj["line"] == 0, f"{name}: JSON line-0 row: {obj}")
    check(text.split("\n")[0].endswith(f" at {obj['file']}:0"), f"{name}: text: {text!r}")
    check(llvm[1].rsplit(":", 2)[0] == obj["file"] and llvm[1].rsplit(":", 2)[1] == "0",
          f"{name}: llvm-symbolizer says {llvm[1]}")
    check(a2l == f"{obj['file']}:?", f"{name}: addr2line says {a2l}")


def check_symbol_files(name, elf, addrs):
    """Where no line row covers an address, addr2line (and llvm-symbolizer) give the file of the
    STT_FILE symbol before the function symbol, for a local symbol: spoor prints the same file
    (exactly as addr2line does, not only its basename) with line 0: text `FILE:0`, JSON
    `"file":FILE,"line":0`. A global function symbol gets no file."""
    a2l = subprocess.run([require_tool("arm-none-eabi-addr2line"), "-a", "-f", "-e", str(elf)],
                         input="".join(f"0x{a:x}\n" for a in addrs), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    got = {int(o["addr"], 16): o for o in map(json.loads, spoor(
        "--json", "-e", str(elf), *map(hex, addrs)).stdout.splitlines())}
    text = dict(zip(addrs, spoor("-e", str(elf), *map(hex, addrs)).stdout.splitlines()))
    files, unfiled = {}, set()
    for i in range(0, len(a2l), 3):
        addr, func, loc = int(a2l[i], 16), a2l[i + 1], a2l[i + 2]
        file, _, line = loc.rpartition(":")
        if line != "?":
            continue
        if file == "??":
            unfiled.add(func)
            check(got[addr]["file"] is None, f"{name}: {addr:#x} ({func}): addr2line gives no "
                  f"file, spoor {got[addr]['file']}")
            continue
        files.setdefault(func, file)
        check(got[addr]["file"] == file and got[addr]["line"] == 0
              and text[addr].endswith(f" at {file}:0"),
              f"{name}: {addr:#x} ({func}): addr2line '{file}:?', spoor JSON file "
              f"{got[addr]['file']!r} line {got[addr]['line']!r}, text {text[addr]!r}")
    print(f"{name}: files of code without line rows (addr2line's STT_FILE rule): {files}; "
          f"none for {sorted(unfiled)}")
    want = {"stt_asm_in_c_local": "stt_file.c", "stt_nodebug_local": "stt_file_nodebug.c"}
    check(all(files.get(f) == want[f] for f in want) and "stt_asm_local" in files,
          f"{name}: addr2line no longer names these files: {files}")
    check({"stt_asm_in_c_global", "stt_nodebug_global", "stt_asm_global"} <= unfiled,
          f"{name}: addr2line gives a global function a file: {unfiled}")


def check_iar_shaped(out):
    for program in ("calls-m3", "printf-m4f"):
        gcc = firmware_dir() / "examples" / f"{program}.elf"
        elf = out / f"{program}-iar.elf"
        nunits, rewritten = iar_shape.iar_shaped(gcc, elf, out)
        info = subprocess.run([require_tool("arm-none-eabi-readelf"), "--debug-dump=info",
                               str(elf)], capture_output=True, text=True, check=True).stdout
        shown = sum(1 for unit in info.split("Compilation Unit @")[1:]
                    if not re.search(r"DW_AT_(low_pc|high_pc|ranges)",
                                     unit.split("<1>")[0]))
        print(f"{program}-iar: {rewritten} of {nunits} unit DIEs without code ranges "
              f"(readelf shows {shown})")
        check(rewritten == shown and rewritten * 2 > nunits,
              f"{program}-iar: {rewritten} units rewritten, readelf shows {shown} without ranges")
        addrs = sym_diff.all_or_random_addresses(str(elf), 1 << 20, seed=1)
        n, bad = sym_diff.compare(SPOOR, str(elf), addrs=addrs, show=5)
        check(not bad, f"{program}-iar: {len(bad)} of {n} addresses disagree with addr2line")
        ref, orig = sym_diff.addr2line_frames(str(elf), addrs), \
            sym_diff.addr2line_frames(str(gcc), addrs)
        same = sum(ref[a] == orig[a] for a in addrs)
        lines = sum(1 for a in addrs if ref[a] and ref[a][0][1])
        check(same == len(addrs), f"{program}-iar: addr2line answers {len(addrs) - same} "
              f"addresses otherwise than on the GCC ELF: the rewrite changed the DWARF's meaning")
        check(lines * 10 > len(addrs) * 9, f"{program}-iar: only {lines} of {len(addrs)} "
              f"addresses have a file in addr2line: not a test of line programs")
        llvm = sym_diff.llvm_symbolizer_frames(str(elf), addrs)
        got = sym_diff.spoor_frames(SPOOR, str(elf), addrs)
        print(f"{program}-iar: {n} addresses, {lines} with a file; llvm-symbolizer agrees on "
              f"{sum(llvm[a] == got[a] for a in addrs)} (not required)")


def check_split_refused(name, elf):
    r = spoor("-e", str(elf), "0x10")
    lines = r.stderr.strip().splitlines()
    ok = (r.returncode == 2 and len(lines) == 1 and "split DWARF (-gsplit-dwarf)" in lines[0]
          and ".dwo" in lines[0] and not r.stdout)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {r.returncode}, {lines}")
    check(ok, f"{name}: not refused with one line")


def main():
    require_tool("llvm-symbolizer")
    with tempfile.TemporaryDirectory() as tmp:
        elves = build_all(Path(tmp))
        line0_seen = 0
        for name, elf in elves.items():
            if "split" in name:
                check_split_refused(name, elf)
                continue
            addrs = check_agreement(name, elf)
            if name == "gcc-stt-file":
                check_symbol_files(name, elf, addrs)
            line0 = check_names(name, elf, addrs)
            if line0:
                check_line_zero(name, elf, line0)
                line0_seen += 1
        check(line0_seen > 0, "no build had a line-0 row among its addresses")
        check_iar_shaped(Path(tmp))
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
