#!/usr/bin/env bash
# Builds the symbolizer bench's second ELF: about the size and shape of a FreeRTOS demo built
# with -ffunction-sections (some 1.1 MB, 700+ sections, hundreds of compile units): the printf
# example's sources and newlib, plus UNITS generated compile units of kernel-like code (lists,
# queues, timers: loops, switches, static inline helpers that end up inlined, calls between
# units), all at -g3 -O1 -ffunction-sections, linked with a script that keeps every function in
# its own output section (the .text.* input sections are orphans, as with a linker script that
# names only .text). No FreeRTOS sources are needed: the DWARF and section shapes are what count.
# usage: bench/sym_many_sections.sh OUT.elf [UNITS]   (default 56 units)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
units=${2:-56}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "$units" <<'PY'
import os, random, sys
d, units = sys.argv[1], int(sys.argv[2])
rng = random.Random(21)
with open(os.path.join(d, "kernel.h"), "w") as h:
    h.write("#include <stdint.h>\n#include <stddef.h>\n"
            "struct item { struct item *next, *prev; uint32_t value; void *owner; };\n"
            "struct list { struct item *head; uint32_t count; uint32_t flags; };\n"
            "struct tcb { uint32_t *sp; struct item state; uint32_t prio; char name[16]; };\n")
    for u in range(units):
        for f in range(12):
            h.write(f"uint32_t k{u}_op{f}(struct list *l, uint32_t x);\n")
for u in range(units):
    with open(os.path.join(d, f"k{u}.c"), "w") as c:
        c.write('#include "kernel.h"\n')
        c.write(f"static uint32_t k{u}_state[8];\n")
        for i in range(4):  # helpers that are inlined into their callers
            c.write(f"static inline uint32_t k{u}_helper{i}(struct list *l, uint32_t x)\n{{\n"
                    f"    struct item *it = l->head;\n    uint32_t acc = x ^ {rng.randrange(1 << 16)}u;\n"
                    f"    while (it && acc < {rng.randrange(100, 1000)}u) {{\n"
                    f"        acc += it->value * {rng.randrange(2, 9)}u;\n        it = it->next;\n    }}\n"
                    f"    k{u}_state[{i}] = acc;\n    return acc;\n}}\n")
        for f in range(12):
            c.write(f"uint32_t k{u}_op{f}(struct list *l, uint32_t x)\n{{\n    uint32_t r = 0;\n")
            for s in range(rng.randrange(2, 6)):
                kind = rng.randrange(4)
                if kind == 0:
                    c.write(f"    r += k{u}_helper{rng.randrange(4)}(l, x + {s}u);\n")
                elif kind == 1:
                    c.write(f"    switch (x & 7u) {{\n    case 0: r ^= {rng.randrange(999)}u; break;\n"
                            f"    case 3: r += l->count; break;\n    case 5: l->flags |= r; break;\n"
                            f"    default: r -= x; break;\n    }}\n")
                elif kind == 2:
                    c.write(f"    for (uint32_t i = 0; i < (x & 15u); i++)\n"
                            f"        r += k{u}_state[i & 7u] >> (i & 3u);\n")
                else:
                    v, g = rng.randrange(units), rng.randrange(12)
                    c.write(f"    if (r & 1u)\n        r += k{v}_op{g}(l, r >> 1);\n")
            c.write("    return r;\n}\n")
with open(os.path.join(d, "kmain.c"), "w") as c:
    c.write('#include "kernel.h"\nvolatile uint32_t kernel_sink;\nvoid kernel_run(void)\n{\n'
            "    static struct list l;\n")
    for u in range(units):
        for f in range(12):
            c.write(f"    kernel_sink += k{u}_op{f}(&l, kernel_sink);\n")
    c.write("}\n")
PY
# every .text.* and .rodata.* input section an orphan: its own output section
sed -e 's/\*(\.text \.text\.\*)/*(.text)/' -e 's/\*(\.rodata \.rodata\.\*)/*(.rodata)/' \
    "$root/examples/ld/sections.ld" >"$tmp/sections.ld"
cp "$root/examples/ld/mps2-an386.ld" "$tmp/fw.ld"
flags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -g3 -O1 -funwind-tables
       -ffunction-sections -fdata-sections -I"$root/examples/common" -I"$tmp"
       -DSPOOR_EXAMPLE_CPU='"m4f"' -DSPOOR_EXAMPLE_MACHINE='"mps2-an386"')
# the printf example calls kernel_run() too, so that nothing is garbage-collected
sed 's/^int main(void)$/void kernel_run(void);\nint main(void)/; s/^    fflush(stdout);$/    kernel_run();\n    fflush(stdout);/' \
    "$root/examples/printf/printf.c" >"$tmp/printf.c"
srcs=("$tmp/printf.c" "$root/examples/common/newlib_syscalls.c" "$root/examples/common/startup.c"
      "$root/examples/common/semihost.c" "$tmp/kmain.c")
for ((u = 0; u < units; u++)); do srcs+=("$tmp/k$u.c"); done
objs=()
for s in "${srcs[@]}"; do
  o=$tmp/$(basename "$s" .c).o
  arm-none-eabi-gcc "${flags[@]}" -c "$s" -o "$o"
  objs+=("$o")
done
arm-none-eabi-gcc "${flags[@]}" -nostartfiles -L"$tmp" -T"$tmp/fw.ld" -Wl,--gc-sections \
  -Wl,--build-id=sha1 -o "$out" "${objs[@]}" -lm
echo "$out: $(stat -c %s "$out") bytes, $(arm-none-eabi-readelf -SW "$out" | grep -c '^  \[') sections"
