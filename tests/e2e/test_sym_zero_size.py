"""spoor sym names code after a function symbol of size 0 as addr2line and gdb do.

Assembly without .size (Zephyr's arch_cpu_idle, ThreadX's _tx_timer_interrupt) leaves a FUNC
symbol of size 0: addr2line and gdb name every address from it up to the next symbol in its
section after it, and a local label inside it (ThreadX's __tx_ts_wait: STT_NOTYPE) names the
code from the label on. tests/e2e/fw/producers/asm_nosize.s has such functions, a function with
.size between them and one without .size that ends its output section; it is linked with a C
unit, once with DWARF (GNU as writes line rows but no DW_TAG_subprogram for a function without
.size) and once without.

For every halfword from the first assembly function to past the end of each code section,
spoor sym (text and --json) must give addr2line's function (-f) and, where addr2line has a line,
its file basename and line; where the function is one of size 0 (or a label in it), gdb's `info
symbol` must name the same symbol with the same offset. Padding after a sized function stays
unnamed (gdb names nothing there). spoor crash's backtrace names a pc in that code the same way
(frame 0 from registers)."""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import require_tool  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
ASM = SOURCE_DIR / "tests" / "e2e" / "fw" / "producers" / "asm_nosize.s"
M3 = ["-mcpu=cortex-m3", "-mthumb"]
C_SOURCE = """
extern void arch_cpu_idle(void);
extern void _tx_timer_interrupt(void);
extern void last_nosize(void);
int sized_c(int x) { return x * 3 + 1; }
void _start(void) { arch_cpu_idle(); _tx_timer_interrupt(); last_nosize(); for (;;) ; }
"""
ZERO_SIZE = {"arch_cpu_idle", "_tx_timer_interrupt", "__tx_ts_wait", "last_nosize"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def build(out, debug):
    gcc = require_tool("arm-none-eabi-gcc")
    g = ["-g"] if debug else []
    suffix = "g" if debug else "nodebug"
    (out / "main.c").write_text(C_SOURCE)
    subprocess.run([gcc, *M3, *g, "-O1", "-c", str(out / "main.c"), "-o",
                    str(out / f"main-{suffix}.o")], check=True)
    subprocess.run([gcc, *M3, *g, "-c", str(ASM), "-o", str(out / f"asm-{suffix}.o")], check=True)
    elf = out / f"nosize-{suffix}.elf"
    subprocess.run([gcc, *M3, "-nostdlib", "-Wl,-Ttext=0x1000", str(out / f"main-{suffix}.o"),
                    str(out / f"asm-{suffix}.o"), "-o", str(elf)], check=True)
    return elf


def code_sections(elf):
    """[(name, addr, size)] of the ELF's executable sections (readelf)."""
    out = subprocess.run([require_tool("arm-none-eabi-readelf"), "-SW", str(elf)], check=True,
                         capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)"
                     r"\s+\S+\s+(\S+)", line)
        if m and "X" in m.group(4):
            found.append((m.group(1), int(m.group(2), 16), int(m.group(3), 16)))
    return found


def symbol(elf, name):
    out = subprocess.run([require_tool("arm-none-eabi-nm"), str(elf)], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    raise AssertionError(f"{elf}: no symbol {name}")


def addr2line(elf, addrs):
    out = subprocess.run([require_tool("arm-none-eabi-addr2line"), "-a", "-f", "-e", str(elf)],
                         input="".join(f"0x{a:x}\n" for a in addrs), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    ref = {}
    for i in range(0, len(out), 3):
        func = None if out[i + 1] == "??" else out[i + 1]
        file, _, line = out[i + 2].rpartition(":")
        line = line.split()[0]
        ref[int(out[i], 16)] = (func, None if line in ("?", "0") else
                                (os.path.basename(file), int(line)))
    return ref


def gdb_names(elf, addrs):
    """gdb's `info symbol` for each address: (name, offset) or None."""
    cmds = [a for addr in addrs for a in ("-ex", f"info symbol 0x{addr:x}")]
    out = subprocess.run([require_tool("gdb-multiarch"), "-nx", "-batch", *cmds, str(elf)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    check(len(out) == len(addrs), f"gdb printed {len(out)} lines for {len(addrs)} addresses")
    names = {}
    for addr, line in zip(addrs, out):
        m = re.match(r"(\S+)(?: \+ (\d+))? in section", line)
        names[addr] = (m.group(1), int(m.group(2) or 0)) if m else None
    return names


def spoor_answers(elf, addrs):
    text = subprocess.run([SPOOR, "sym", "-e", str(elf), *map(hex, addrs)], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    js = subprocess.run([SPOOR, "sym", "--json", "-e", str(elf), *map(hex, addrs)],
                        capture_output=True, text=True, check=True).stdout.splitlines()
    check(len(text) == len(addrs) and len(js) == len(addrs), "spoor sym: one line per address")
    return dict(zip(addrs, text)), {int(o["addr"], 16): o for o in map(json.loads, js)}


def check_elf(elf):
    first = symbol(elf, "arch_cpu_idle")
    addrs = []
    for name, addr, size in code_sections(elf):
        lo = max(addr, first) if name == ".text" else addr
        addrs += range(lo, addr + size + 4, 2)  # and two halfwords past the section
    ref = addr2line(elf, addrs)
    gdb = gdb_names(elf, addrs)
    text, js = spoor_answers(elf, addrs)
    named = set()
    for a in addrs:
        func, loc = ref[a]
        o = js[a]
        got_func = o.get("function")
        got_loc = (os.path.basename(o["file"]), o["line"]) if o.get("file") and o["line"] else None
        if func in ZERO_SIZE:
            named.add(func)
        check(got_func == func, f"{elf.name} {a:#x}: spoor names {got_func}, addr2line {func}")
        if func is not None or got_loc is not None:
            check(got_loc == loc, f"{elf.name} {a:#x}: spoor at {got_loc}, addr2line at {loc}")
        if func in ZERO_SIZE:
            start = symbol(elf, func)
            check(gdb[a] == (func, a - start),
                  f"{elf.name} {a:#x}: gdb says {gdb[a]}, addr2line {func}+{a - start:#x}")
            check(o.get("offset") == a - start and
                  text[a].startswith(f"0x{a:08x} {func}+0x{a - start:x}"),
                  f"{elf.name} {a:#x}: offset: JSON {o.get('offset')}, text {text[a]!r}")
    check(named == ZERO_SIZE, f"{elf.name}: addr2line named {sorted(named)} of the size-0 "
          f"symbols (the test's firmware no longer has what it tests)")
    # a backtrace names such code the same way: frame 0 of spoor crash on registers whose pc is
    # inside the label's code
    pc = symbol(elf, "__tx_ts_wait") + 2
    regs = elf.parent / f"{elf.stem}-regs.json"
    regs.write_text(json.dumps({"pc": hex(pc), "lr": hex(symbol(elf, "_start") + 9),
                                "sp": "0x20000ff0", "xpsr": "0x01000000"}))
    crash = subprocess.run([SPOOR, "crash", "-e", str(elf), "--regs", str(regs)],
                           capture_output=True, text=True).stdout
    check(re.search(rf"#0 +0x{pc:08x} __tx_ts_wait\+0x2\b", crash),
          f"{elf.name}: spoor crash's frame 0 at {pc:#x}: {crash}")
    print(f"{elf.name}: {len(addrs)} addresses, {sum(1 for a in addrs if ref[a][0] in ZERO_SIZE)} "
          f"in code of size-0 symbols")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for debug in (True, False):
            check_elf(build(Path(tmp), debug))
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
