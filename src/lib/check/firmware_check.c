/* spoor check's findings (spoor/firmware_check.h): what a firmware ELF says of how spoor's target
 * library is wired into it. Everything comes from the ELF: its symbols, its vector table, its
 * sections and program headers, and the Thumb branches of its code. */
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_sections.h"
#include "spoor/elf_dir.h"
#include "spoor/firmware_check.h"
#include "spoor/thumb.h"

#define MAX_RANGES 512

/* ---------------------------------------------------------------- Thumb branches */

/* The target of the branch at pc (h1, h2 its halfwords): B (T1, T2), BL, B.W (T4), B<c>.W
 * (T3); false for any other instruction. */
static bool branch_target(uint32_t pc, uint16_t h1, uint16_t h2, uint32_t *target)
{
    if ((h1 & 0xF800u) == 0xE000u) { /* B T2 */
        int32_t imm = (int32_t)((h1 & 0x7FFu) << 1);
        *target = pc + 4 + (uint32_t)(imm & 0x800 ? imm - 0x1000 : imm);
        return true;
    }
    if ((h1 & 0xF000u) == 0xD000u && ((h1 >> 8) & 0xFu) < 0xEu) { /* B<c> T1 */
        *target = pc + 4 + (uint32_t)((int32_t)(int8_t)(h1 & 0xFFu) * 2);
        return true;
    }
    if ((h1 & 0xF800u) != 0xF000u || !(h2 & 0x8000u))
        return false;
    uint32_t s = (h1 >> 10) & 1u, j1 = (h2 >> 13) & 1u, j2 = (h2 >> 11) & 1u, imm;
    if ((h2 & 0x5000u) == 0x5000u || (h2 & 0x5000u) == 0x1000u) { /* BL, B.W T4 */
        uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
        imm = s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FFu) << 12 | (h2 & 0x7FFu) << 1;
        if (s)
            imm |= 0xFE000000u;
    } else if ((h2 & 0x5000u) == 0 && ((h1 >> 6) & 0xFu) < 0xEu) { /* B<c>.W T3 */
        imm = s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3Fu) << 12 | (h2 & 0x7FFu) << 1;
        if (s)
            imm |= 0xFFE00000u;
    } else {
        return false;
    }
    *target = pc + 4 + imm;
    return true;
}

/* Whether the instruction (h1, h2) saves LR on the stack: PUSH {..., lr} (T1, T2) or
 * STR lr, [sp, #-4]!. */
static bool saves_lr(uint16_t h1, uint16_t h2)
{
    return ((h1 & 0xFE00u) == 0xB400u && (h1 & 0x100u)) || (h1 == 0xE92Du && (h2 & 0x4000u)) ||
           (h1 == 0xF84Du && h2 == 0xED04u);
}

/* Walks the instructions of [lo, hi) of one range; for each branch to target: stops with its
 * address in *site. *lr_saved: whether an instruction before it saved LR. */
static bool find_branch(const spoor_elf_range *r, uint32_t lo, uint32_t hi, uint32_t target,
                        uint32_t *site, bool *lr_saved)
{
    bool saved = false;
    uint64_t base = r->addr, end = base + r->size; /* 64 bits: a range may end at 4 GiB */
    uint64_t from = lo < base ? base : lo, to = hi > end ? end : hi;
    from += (from - base) & 1u; /* halfwords from the range's start */
    for (uint64_t pc = from; pc + 2 <= to;) {
        const uint8_t *at = r->data + (size_t)(pc - base);
        uint16_t h1 = spoor_le16(at), h2 = 0;
        unsigned size = spoor_thumb_size(h1);
        if (size == 4 && pc + 4 <= to)
            h2 = spoor_le16(at + 2);
        uint32_t dest;
        if (branch_target((uint32_t)pc, h1, h2, &dest) && (dest & ~1u) == (target & ~1u)) {
            *site = (uint32_t)pc;
            if (lr_saved)
                *lr_saved = saved;
            return true;
        }
        saved |= saves_lr(h1, h2);
        pc += size;
    }
    return false;
}

static size_t ranges_of(const spoor_elf *elf, spoor_elf_range **out)
{
    static spoor_elf_range none;
    size_t n = spoor_elf_ranges(elf, NULL, 0);
    *out = n ? malloc(n * sizeof **out) : NULL;
    if (!*out) {
        *out = &none;
        return 0;
    }
    return spoor_elf_ranges(elf, *out, n);
}

bool spoor_elf_refers_to(const spoor_elf *elf, uint32_t target, uint32_t lo, uint32_t hi)
{
    spoor_elf_range *r;
    size_t n = ranges_of(elf, &r);
    bool found = false;
    uint32_t site;
    for (size_t i = 0; i < n && !found; i++) {
        if (r[i].code && r[i].addr < hi && (uint64_t)r[i].addr + r[i].size > lo &&
            find_branch(&r[i], lo, hi, target, &site, NULL))
            found = true;
        for (uint32_t off = (4 - (r[i].addr & 3u)) & 3u; !found && off + 4 <= r[i].size; off += 4)
            found = r[i].addr + off >= lo && r[i].addr + off < hi &&
                    spoor_le32(r[i].data + off) == (target | 1u);
    }
    if (n)
        free(r);
    return found;
}

bool spoor_elf_function_used(const spoor_elf *elf, const char *name)
{
    uint32_t addr;
    return spoor_elf_symbol(elf, name, &addr, NULL) &&
           spoor_elf_refers_to(elf, addr, 0, UINT32_MAX);
}

/* ---------------------------------------------------------------- items */

struct checker {
    const spoor_elf *elf;
    spoor_check_item *items;
    size_t n, max;
    spoor_elf_range *ranges;
    size_t nranges;
};

__attribute__((format(printf, 4, 5))) static void
item(struct checker *c, const char *name, spoor_check_status status, const char *fmt, ...)
{
    if (c->n >= c->max)
        return;
    spoor_check_item *it = &c->items[c->n++];
    it->name = name;
    it->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->text, sizeof it->text, fmt, ap);
    va_end(ap);
}

static const spoor_elf_range *code_range(const struct checker *c, uint32_t addr)
{
    for (size_t i = 0; i < c->nranges; i++)
        if (c->ranges[i].code && addr - c->ranges[i].addr < c->ranges[i].size)
            return &c->ranges[i];
    return NULL;
}

/* Whether the function at addr (its extent from the symbols or DWARF) branches to target. */
static bool function_branches_to(const struct checker *c, uint32_t addr, uint32_t target)
{
    uint32_t start, size, site;
    const spoor_elf_range *r = code_range(c, addr);
    if (!r || !spoor_elf_function(c->elf, addr, NULL, &start, &size))
        return false;
    if (!size) /* unknown extent: a handler is short */
        size = 64;
    return find_branch(r, start, start + size, target, &site, NULL);
}

/* The vector table: a symbol or section by one of the usual names, else the start of the
 * lowest allocated section; it must hold a Thumb reset address into code at word 1. */
static bool vector_table(const struct checker *c, uint32_t *at, const char **how)
{
    static const char *const symbols[] = {"__isr_vector",    "__Vectors",     "g_pfnVectors",
                                          "__vector_table",  "_vector_table", "vector_table",
                                          "isr_vector",      "_vectors",      "vectors",
                                          "exception_table", "_isr_vector"};
    static const char *const sections[] = {".isr_vector", ".vectors", ".vector_table", ".intvecs",
                                           ".isr_vector_table"};
    uint32_t addr, reset;
    for (size_t i = 0; i < sizeof symbols / sizeof *symbols; i++)
        if (spoor_elf_symbol(c->elf, symbols[i], &addr, NULL) &&
            spoor_elf_read(c->elf, addr + 4, &reset, 4) == 4 && (reset & 1u) &&
            code_range(c, reset & ~1u)) {
            *at = addr, *how = symbols[i];
            return true;
        }
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        if (spoor_elf_section(c->elf, sections[i], &addr, NULL, NULL) &&
            spoor_elf_read(c->elf, addr + 4, &reset, 4) == 4 && (reset & 1u) &&
            code_range(c, reset & ~1u)) {
            *at = addr, *how = sections[i];
            return true;
        }
    const spoor_elf_range *low = NULL;
    for (size_t i = 0; i < c->nranges; i++)
        if (!c->ranges[i].writable && (!low || c->ranges[i].addr < low->addr))
            low = &c->ranges[i];
    if (low && low->size >= 8 && spoor_elf_read(c->elf, low->addr + 4, &reset, 4) == 4 &&
        (reset & 1u) && code_range(c, reset & ~1u)) {
        *at = low->addr, *how = low->name;
        return true;
    }
    return false;
}

/* spoor's own entries a fault handler may hand over to. */
static const char *const spoor_entries[] = {"spoor_fault_capture", "spoor_crash_fatal",
                                            "spoor_crash_capture"};

static void check_vectors(struct checker *c)
{
    static const struct {
        const char *name, *item;
        unsigned index;
    } faults[] = {{"HardFault_Handler", "HardFault vector", 3},
                  {"MemManage_Handler", "MemManage vector", 4},
                  {"BusFault_Handler", "BusFault vector", 5},
                  {"UsageFault_Handler", "UsageFault vector", 6},
                  {"SecureFault_Handler", "SecureFault vector", 7}};
    uint32_t capture;
    bool linked = spoor_elf_symbol(c->elf, "spoor_fault_capture", &capture, NULL);
    uint32_t table;
    const char *how;
    if (!vector_table(c, &table, &how)) {
        item(c, "vector table", SPOOR_CHECK_FAIL,
             "no vector table found (no symbol or section by a usual name, and the lowest "
             "section holds no reset address at word 1)");
        return;
    }
    spoor_elf_arch arch = spoor_elf_cpu_arch(c->elf);
    bool v6m = arch == SPOOR_ELF_ARCH_V6M || arch == SPOOR_ELF_ARCH_V6SM ||
               arch == SPOOR_ELF_ARCH_V8M_BASE;
    bool v8m_main = arch == SPOOR_ELF_ARCH_V8M_MAIN || arch == SPOOR_ELF_ARCH_V81M_MAIN;
    for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
        if (f && f < 4 && v6m)
            continue; /* reserved on Armv6-M and Armv8-M Baseline */
        if (f == 4 && !v8m_main)
            continue;
        uint32_t entry = 0;
        uint32_t at = table + 4 * faults[f].index;
        if (spoor_elf_read(c->elf, at, &entry, 4) != 4) {
            item(c, faults[f].item, SPOOR_CHECK_FAIL,
                 "entry %u of the vector table (%s at "
                 "0x%08x) is not in the ELF",
                 faults[f].index, how, at);
            continue;
        }
        entry = spoor_le32((const uint8_t *)&entry);
        if (f == 4 && entry == 0) {
            item(c, faults[f].item, SPOOR_CHECK_SKIP,
                 "entry 7 is 0: no SecureFault handler (a Non-secure image)");
            continue;
        }
        const char *name = NULL;
        uint32_t start = 0;
        bool named = spoor_elf_function(c->elf, entry & ~1u, &name, &start, NULL) && name;
        char what[200];
        snprintf(what, sizeof what, "entry %u (%s+0x%x) -> 0x%08x %s%s", faults[f].index, how,
                 4 * faults[f].index, entry & ~1u, named ? name : "(no symbol)",
                 named && start != (entry & ~1u) ? " (not its start)" : "");
        if (!linked) {
            item(c, faults[f].item, SPOOR_CHECK_FAIL,
                 "%s: spoor's crash capture is not linked (no spoor_fault_capture: call "
                 "spoor_crash_init() and link the target library)",
                 what);
            continue;
        }
        bool spoors = false;
        for (size_t k = 0; k < sizeof spoor_entries / sizeof *spoor_entries && !spoors; k++) {
            uint32_t to;
            spoors = spoor_elf_symbol(c->elf, spoor_entries[k], &to, NULL) &&
                     function_branches_to(c, entry & ~1u, to);
        }
        if (spoors)
            item(c, faults[f].item, SPOOR_CHECK_OK, "%s, which hands over to spoor", what);
        else
            item(c, faults[f].item, SPOOR_CHECK_FAIL,
                 "%s, which does not call spoor: a fault there hangs or resets without a dump. "
                 "Make the startup's %s weak (or remove it) so spoor's takes its place "
                 "(docs/integrating.md, vendor startups)",
                 what, faults[f].name);
    }
}

static bool in_rom_segment(const spoor_elf_range *seg, size_t nseg, uint32_t addr, uint32_t size)
{
    for (size_t i = 0; i < nseg; i++)
        if (!seg[i].writable && addr >= seg[i].addr && addr - seg[i].addr <= seg[i].size &&
            size <= seg[i].size - (addr - seg[i].addr))
            return true;
    return false;
}

static void check_build_id(struct checker *c)
{
    const uint8_t *id;
    size_t len;
    uint32_t addr, start, end;
    size_t size = 0;
    if (!spoor_elf_build_id(c->elf, &id, &len)) {
        item(c, "build-id", SPOOR_CHECK_FAIL,
             "no GNU build-id note: link with -Wl,--build-id=sha1 (the dump names its ELF by it)");
        return;
    }
    if (!spoor_elf_section(c->elf, ".note.gnu.build-id", &addr, NULL, &size)) {
        item(c, "build-id", SPOOR_CHECK_FAIL,
             "the build-id note is not in an allocated .note.gnu.build-id section: INCLUDE "
             "spoor-sections.ld in the linker script");
        return;
    }
    spoor_elf_range seg[64];
    size_t nseg = spoor_elf_load_segments(c->elf, seg, 64);
    if (nseg > 64)
        nseg = 64;
    if (!in_rom_segment(seg, nseg, addr, (uint32_t)size)) {
        item(c, "build-id", SPOOR_CHECK_FAIL,
             ".note.gnu.build-id at 0x%08x is in no read-only LOAD segment: it is not in "
             "flash, so the crash handler cannot copy it (INCLUDE spoor-sections.ld after the "
             "sections that go to flash)",
             addr);
        return;
    }
    if (!spoor_elf_symbol(c->elf, "__build_id_start", &start, NULL) ||
        !spoor_elf_symbol(c->elf, "__build_id_end", &end, NULL) || start > addr ||
        end < addr + size) {
        item(c, "build-id", SPOOR_CHECK_FAIL,
             "__build_id_start/__build_id_end do not enclose .note.gnu.build-id at 0x%08x: the "
             "dump carries no build-id (INCLUDE spoor-sections.ld)",
             addr);
        return;
    }
    char hex[129];
    item(c, "build-id", SPOOR_CHECK_OK, "%s, in flash at 0x%08x", spoor_build_id_hex(id, len, hex),
         addr);
}

static void check_noinit(struct checker *c)
{
    uint32_t addr;
    size_t size = 0;
    Elf *e = spoor_elf_libelf(c->elf);
    if (!spoor_elf_section(c->elf, ".noinit", &addr, NULL, &size)) {
        item(c, ".noinit", SPOOR_CHECK_FAIL,
             "no .noinit section: the dump buffer must be in memory the startup code neither "
             "loads nor zeroes (INCLUDE spoor-sections.ld)");
        return;
    }
    size_t phnum = 0;
    if (e && elf_getphdrnum(e, &phnum) == 0)
        for (size_t i = 0; i < phnum; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_memsz)
                continue;
            if (ph.p_vaddr < (uint64_t)addr + size && addr < ph.p_vaddr + ph.p_memsz) {
                item(c, ".noinit", SPOOR_CHECK_FAIL,
                     ".noinit (0x%08x, %zu bytes) is in LOAD segment %zu (0x%08llx, %llu bytes): "
                     "a loader that loads by program headers (QEMU at every reset, some "
                     "debuggers) zero-fills the dump. Give .noinit ':NONE' and the script a PHDRS "
                     "block (spoor-sections.ld says how)",
                     addr, size, i, (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_memsz);
                return;
            }
        }
    item(c, ".noinit", SPOOR_CHECK_OK, "0x%08x, %zu bytes, in no LOAD segment", addr, size);
}

static void check_ehabi(struct checker *c)
{
    uint32_t bt, start, end, addr;
    size_t size = 0;
    if (!spoor_elf_symbol(c->elf, "spoor_backtrace", &bt, NULL)) {
        item(c, "EHABI tables", SPOOR_CHECK_SKIP, "the on-target backtracer is not linked");
        return;
    }
    if (!spoor_elf_section(c->elf, ".ARM.exidx", &addr, NULL, &size) || !size) {
        item(c, "EHABI tables", SPOOR_CHECK_FAIL,
             "spoor_backtrace is linked but there is no .ARM.exidx: compile with "
             "-funwind-tables and keep the section (spoor-sections.ld)");
        return;
    }
    if (!spoor_elf_symbol(c->elf, "__exidx_start", &start, NULL) ||
        !spoor_elf_symbol(c->elf, "__exidx_end", &end, NULL) || start > addr || end < addr + size) {
        item(c, "EHABI tables", SPOOR_CHECK_FAIL,
             "__exidx_start/__exidx_end do not enclose .ARM.exidx (0x%08x): spoor_backtrace "
             "finds no table (INCLUDE spoor-sections.ld, remove the script's own .ARM.exidx)",
             addr);
        return;
    }
    item(c, "EHABI tables", SPOOR_CHECK_OK, ".ARM.exidx at 0x%08x, %zu bytes (%zu entries)", addr,
         size, size / 8);
}

/* Every function that calls the hook: a naked one (no LR saved before the call) is flagged, and
 * named as the SVCall or PendSV handler when it is one. */
static void check_hooks(struct checker *c, uint32_t table, bool have_table)
{
    uint32_t hook;
    if (!spoor_elf_symbol(c->elf, "__cyg_profile_func_enter", &hook, NULL)) {
        item(c, "instrumented handlers", SPOOR_CHECK_SKIP,
             "nothing is instrumented (no __cyg_profile_func_enter)");
        return;
    }
    size_t bad = 0, calls = 0;
    uint32_t switchers[2] = {0, 0};
    if (have_table) { /* SVCall (11) and PendSV (14): an RTOS's context switch */
        uint8_t w[4];
        if (spoor_elf_read(c->elf, table + 44, w, 4) == 4)
            switchers[0] = spoor_le32(w) & ~1u;
        if (spoor_elf_read(c->elf, table + 56, w, 4) == 4)
            switchers[1] = spoor_le32(w) & ~1u;
    }
    for (size_t i = 0; i < c->nranges; i++) {
        const spoor_elf_range *r = &c->ranges[i];
        if (!r->code)
            continue;
        uint32_t site, lo = r->addr;
        while (find_branch(r, lo, r->addr + r->size, hook, &site, NULL)) {
            lo = site + 4;
            const char *name = NULL;
            uint32_t start, size;
            if (!spoor_elf_function(c->elf, site, &name, &start, &size) || !name)
                continue;
            calls++;
            bool lr_saved = true;
            uint32_t again;
            find_branch(r, start, site + 4, hook, &again, &lr_saved);
            if (lr_saved)
                continue;
            bad++;
            item(c, "instrumented handlers", SPOOR_CHECK_FAIL,
                 "%s (0x%08x%s) calls __cyg_profile_func_enter at 0x%08x before saving LR: a "
                 "naked function, instrumented (the hook destroys LR and runs before the "
                 "function saves anything). Exclude it from -finstrument-functions (its file, "
                 "e.g. the RTOS port's portable/, or __attribute__((no_instrument_function)))",
                 name, start,
                 start == switchers[0]   ? ", the SVCall handler"
                 : start == switchers[1] ? ", the PendSV handler: the RTOS's context switch"
                                         : "",
                 site);
        }
    }
    if (!bad)
        item(c, "instrumented handlers", SPOOR_CHECK_OK,
             "%zu calls of __cyg_profile_func_enter, none from a naked function", calls);
}

static void check_recorder(struct checker *c)
{
    uint32_t state, init;
    if (!spoor_elf_symbol(c->elf, "spoor_calls_state", &state, NULL)) {
        item(c, "call recorder", SPOOR_CHECK_SKIP, "not linked");
        return;
    }
    bool has_init = spoor_elf_symbol(c->elf, "spoor_calls_init", &init, NULL);
    bool inited = has_init && spoor_elf_refers_to(c->elf, init, 0, UINT32_MAX);
    bool instrumented = spoor_elf_function_used(c->elf, "__cyg_profile_func_enter");
    if (inited)
        item(c, "call recorder", SPOOR_CHECK_OK,
             "linked and initialised (spoor_calls_init is "
             "called)%s",
             instrumented ? "" : ", though nothing calls its hooks");
    else if (instrumented)
        item(c, "call recorder", SPOOR_CHECK_FAIL,
             "functions are instrumented (they call __cyg_profile_func_enter) but nothing calls "
             "spoor_calls_init: no call is recorded (docs/calls.md)");
    else
        item(c, "call recorder", SPOOR_CHECK_SKIP,
             "linked but not used: nothing is instrumented and spoor_calls_init is never called "
             "(harmless: spoor crash shows no calls section)");
}

size_t spoor_firmware_check(const spoor_elf *elf, spoor_check_item *items, size_t max)
{
    struct checker c = {elf, items, 0, max, NULL, 0};
    c.nranges = ranges_of(elf, &c.ranges);
    uint32_t table = 0;
    const char *how;
    bool have_table = vector_table(&c, &table, &how);
    check_vectors(&c);
    check_build_id(&c);
    check_noinit(&c);
    check_ehabi(&c);
    check_hooks(&c, table, have_table);
    check_recorder(&c);
    if (c.nranges)
        free(c.ranges);
    return c.n;
}
