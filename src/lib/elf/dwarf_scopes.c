/* The compile units of the DWARF and the code each claims; one unit's DIEs walked into scopes
 * (functions and inlined instances, with their code ranges) and its line rows. */
#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "base/byteorder.h"
#include "base/partition_point.h"
#include "elf/symbols_internal.h"

static int cmp_claim(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Sorts the claimed ranges and joins overlapping or adjacent ones. */
static void join_claims(struct unit_claims *c)
{
    if (c->n < 2)
        return;
    qsort(c->ranges, c->n, sizeof *c->ranges, cmp_claim);
    size_t n = 1;
    for (size_t i = 1; i < c->n; i++) {
        if (c->ranges[i][0] <= c->ranges[n - 1][1]) {
            if (c->ranges[i][1] > c->ranges[n - 1][1])
                c->ranges[n - 1][1] = c->ranges[i][1];
        } else {
            c->ranges[n][0] = c->ranges[i][0];
            c->ranges[n][1] = c->ranges[i][1];
            n++;
        }
    }
    c->n = n;
}

/* Adds [lo, hi) to c unless it is empty, past 32 bits or, unless a function really starts at 0,
 * at 0 (code of a section the linker discarded). */
static int add_claim(struct unit_claims *c, size_t *cap, uint64_t lo, uint64_t hi, bool keep_zero)
{
    if (lo >= hi || hi > UINT32_MAX || (lo == 0 && !keep_zero))
        return 0;
    if (spoor_grow((void **)&c->ranges, cap, c->n + 1, sizeof *c->ranges))
        return -1;
    c->ranges[c->n][0] = (uint32_t)lo;
    c->ranges[c->n][1] = (uint32_t)hi;
    c->n++;
    return 0;
}

/* What libdw last said went wrong. */
static const char *libdw_problem(void)
{
    int err = dwarf_errno();
    return err ? dwarf_errmsg(err) : "unreadable";
}

/* The code ranges the unit's DIE gives (DW_AT_ranges, low_pc/high_pc). 0: read; 1: the ranges
 * are unreadable (warned, c->known false); -1 without memory. */
static int die_claims(const spoor_elf *e, Dwarf_Off unit, Dwarf_Die *cu, bool keep_zero,
                      struct unit_claims *c)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    size_t cap = 0;
    c->n = 0;
    while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
        if (add_claim(c, &cap, lo, hi, keep_zero))
            return -1;
    if (off < 0) {
        spoor_elf_warn(e, ".debug_info unit at 0x%llx: code ranges unreadable (%s)",
                       (unsigned long long)unit, libdw_problem());
        c->known = false;
        return 1;
    }
    /* without range attributes, rows are judged by their address alone */
    c->known = dwarf_hasattr(cu, DW_AT_ranges) || dwarf_hasattr(cu, DW_AT_low_pc);
    join_claims(c);
    return 0;
}

static void free_names(struct name_block *b)
{
    for (struct name_block *next; b; b = next) {
        next = b->next;
        free(b);
    }
}

/* For a unit that neither .debug_aranges nor its DIE gives code ranges for (IAR writes units
 * so): the ranges of its line program's sequences, as binutils finds such a unit's code. A
 * sequence that starts at 0 is code the linker discarded, unless a function really starts at 0
 * (a unit with only such sequences has no code). The line program is the one of the unit DIE cu
 * or, with cu NULL, the one at stmt_list (comp_dir the unit's DW_AT_comp_dir, NULL: none).
 * LINE_DONE (c->known when there is a sequence), LINE_UNREADABLE (warned), LINE_NOMEM, or
 * (cu NULL) LINE_NOT_HANDLED: libdw must read the program. */
static line_status line_claims(const spoor_elf *e, const struct symbol_tables *t, Dwarf_Die *cu,
                               uint64_t stmt_list, const char *comp_dir, struct unit_claims *c)
{
    struct unit_lines lines = {0};
    const struct unit_claims every_row = {0}; /* rows judged by nothing: all kept */
    struct name_block *names = NULL;
    struct dw_line *rows = NULL;
    size_t nrows = 0, cap_rows = 0, cap = 0;
    /* rows come in program order (spoor's reader) or sorted by address (libdw): either way a
     * sequence's rows run from its first row to its end row, unless sequences overlap */
    line_status r =
        cu ? spoor_line_rows(e, &names, cu, &every_row, true, &lines, &rows, &nrows, &cap_rows)
           : spoor_line_rows_at(e, &names, stmt_list, comp_dir, NULL, &every_row, true, &lines,
                                &rows, &nrows, &cap_rows);
    bool sequences = false;
    for (size_t i = 0, first = 0; r == LINE_DONE && i < nrows; i++) {
        if (!rows[i].end_sequence)
            continue;
        sequences = true;
        if (add_claim(c, &cap, rows[first].addr, rows[i].addr, t->keep_zero))
            r = LINE_NOMEM;
        first = i + 1;
    }
    free(rows);
    free_names(names);
    spoor_unit_lines_free(&lines);
    if (r == LINE_DONE && sequences) {
        c->known = true;
        join_claims(c);
    }
    return r;
}

/* The unit whose header is at off in .debug_info, or t->nunits (units are in file order). */
struct unit_key {
    const struct symbol_tables *t;
    uint64_t off;
};

static bool unit_before(const void *ctx, size_t i)
{
    const struct unit_key *k = ctx;
    return k->t->units[i].header < k->off;
}

static size_t unit_at(const struct symbol_tables *t, uint64_t off)
{
    const struct unit_key key = {t, off};
    size_t lo = spoor_partition_point(0, t->nunits, unit_before, &key);
    return lo < t->nunits && t->units[lo].header == off ? lo : t->nunits;
}

/* What .debug_aranges says each unit claims; it is read without libdw, which would decode every
 * unit's first DIE and abbreviations to check it. A unit it names gets the ranges listed for it
 * (empty ones, past 32 bits or at 0 left out as for the DIEs'). Nothing is taken from a section
 * that is absent, compressed or not well-formed. -1 without memory. */
static int aranges_claims(const spoor_elf *e, struct symbol_tables *t)
{
    const struct elf_section *sec = spoor_elf_known_section(e, SEC_DEBUG_ARANGES);
    if (!sec)
        return 0;
    const uint8_t *p = sec->data, *end = sec->data + sec->size;
    size_t *caps = calloc(t->nunits + 1, sizeof *caps);
    if (!caps)
        return -1;
    int result = 0;
    const char *bad = NULL;
    const uint8_t *set = p;
    while (!bad && end - p >= 4) {
        set = p;
        uint64_t length = spoor_le32(p), info;
        p += 4;
        if (length >= 0xfffffff0u || length > (uint64_t)(end - p) || length < 8) {
            bad = "length past the section"; /* 64-bit DWARF is not used on 32-bit ARM */
            break;
        }
        const uint8_t *next = p + length;
        unsigned version = spoor_le16(p);
        info = spoor_le32(p + 2);
        unsigned address_size = p[6], segment_size = p[7];
        size_t u = unit_at(t, info);
        if (version != 2 || address_size != 4 || segment_size != 0) {
            bad = "version, address size or segment size not 2, 4, 0";
            break;
        }
        if (u == t->nunits) {
            bad = "not the offset of a unit in .debug_info";
            break;
        }
        t->units[u].claims.known = true;
        p = set + 16; /* tuples are aligned to twice the address size from the set's start */
        for (; next - p >= 8; p += 8) {
            uint32_t lo = spoor_le32(p), len = spoor_le32(p + 4);
            if (!lo && !len)
                break;
            if (add_claim(&t->units[u].claims, &caps[u], lo, (uint64_t)lo + len, t->keep_zero)) {
                result = -1;
                bad = "out of memory";
                break;
            }
        }
        p = next;
    }
    free(caps);
    if (bad && !result)
        spoor_elf_warn(e,
                       ".debug_aranges set at 0x%llx: %s: the section is ignored, units are "
                       "found by their own code ranges",
                       (unsigned long long)(set - sec->data), bad);
    for (size_t i = 0; i < t->nunits; i++) {
        struct unit_claims *c = &t->units[i].claims;
        if (bad) { /* take nothing from it */
            free(c->ranges);
            memset(c, 0, sizeof *c);
        }
        join_claims(c);
    }
    return result;
}

/* Warns that the DIE of unit u cannot be read: nothing is taken from the unit. */
static void unit_die_unreadable(const spoor_elf *e, struct dw_unit *u)
{
    if (!u->damaged)
        spoor_elf_warn(e, ".debug_info unit at 0x%llx: unit DIE unreadable (%s): unit ignored",
                       (unsigned long long)u->header, libdw_problem());
    u->damaged = true;
}

static int own_unit_claims(const spoor_elf *e, struct symbol_tables *t, struct dw_unit *u);

int spoor_dwarf_units(const spoor_elf *e, struct symbol_tables *t)
{
    Dwarf *dwarf = spoor_elf_libdw(e);
    Dwarf_Off off = 0, next;
    size_t hsize, cap = 0;
    int r;
    Dwarf_Off abbrev;
    while ((r = dwarf_nextcu(dwarf, off, &next, &hsize, &abbrev, NULL, NULL)) == 0) {
        if (spoor_grow((void **)&t->units, &cap, t->nunits + 1, sizeof *t->units))
            return -1;
        struct dw_unit *u = &t->units[t->nunits++];
        memset(u, 0, sizeof *u);
        u->header = off;
        u->die = off + hsize;
        u->abbrev = abbrev;
        off = next;
    }
    if (r < 0) { /* the units after this one cannot be found */
        spoor_elf_warn(e,
                       ".debug_info unit at 0x%llx: unit header unreadable (%s): this and "
                       "later units ignored",
                       (unsigned long long)off, libdw_problem());
        ((spoor_elf *)e)->damaged = true;
    }
    if (aranges_claims(e, t))
        return -1;
    for (size_t i = 0; i < t->nunits; i++) { /* units .debug_aranges gives no code for */
        struct dw_unit *u = &t->units[i];
        Dwarf_Die cu;
        if (u->claims.n)
            continue;
        int got = own_unit_claims(e, t, u);
        if (got == 2 && (got = -2, dwarf_offdie(dwarf, u->die, &cu)) &&
            dwarf_tag(&cu) != DW_TAG_invalid) {
            got = die_claims(e, u->header, &cu, t->keep_zero, &u->claims);
            if (got == 0 && !u->claims.known) /* no range attributes: the line program's */
                got = line_claims(e, t, &cu, 0, NULL, &u->claims);
        }
        if (got == -1)
            return -1;
        if (got == -2)
            unit_die_unreadable(e, u);
        if (got) { /* its code, wherever it is, is answered for by other units */
            u->damaged = true;
            ((spoor_elf *)e)->damaged = true;
        }
    }
    return 0;
}

/* The unit DIE's attributes the build reads, read with the unit's abbreviations (read_cu_die)
 * instead of through libdw, whose first look at a unit DIE reads the unit's abbreviations into
 * its own tables. */
struct cu_die {
    bool has_low, has_high, has_ranges, has_stmt_list;
    uint64_t low, high; /* high: the address past the code (a constant high_pc added to low) */
    uint64_t base;      /* the unit's base address as libdw takes it: low_pc, entry_pc or 0 */
    uint64_t ranges, stmt_list; /* offsets in .debug_ranges/.debug_rnglists, .debug_line */
    const char *comp_dir;       /* NULL: none */
    int language;               /* -1: none (as dwarf_srclang) */
};

/* A range list (DW_AT_ranges) read as libdw's dwarf_ranges reads it, for 4-byte addresses:
 * DWARF 2 to 4 .debug_ranges pairs (a base address selection, the end pair), DWARF 5
 * .debug_rnglists entries without an address index (offset pair, base address, start and end or
 * length, end of list). */
struct range_list {
    const uint8_t *p, *end;
    uint64_t base;
    bool v5;
};

/* False when the list is not read so (no such section, an offset past it): libdw decides. */
static bool range_list_start(const spoor_elf *e, unsigned version, uint64_t off, uint64_t base,
                             struct range_list *l)
{
    const struct elf_section *s =
        spoor_elf_known_section(e, version >= 5 ? SEC_DEBUG_RNGLISTS : SEC_DEBUG_RANGES);
    if (!s || off >= s->size)
        return false;
    *l = (struct range_list){s->data + off, s->data + s->size, base, version >= 5};
    return true;
}

/* A LEB128 number of at most 5 bytes (a 32-bit address or length); false otherwise. */
static bool range_leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *at = *p;
    return spoor_uleb128(p, end, v) && *p - at <= 5;
}

/* The next range of the list into *lo, *hi: 1; 0 at its end; -1 when it is not read so (libdw
 * decides: an entry it reads otherwise or not at all, data past the section). */
static int range_list_next(struct range_list *l, uint64_t *lo, uint64_t *hi)
{
    for (;;) {
        if (!l->v5) {
            if (l->end - l->p < 8)
                return -1;
            uint64_t b = spoor_le32(l->p), x = spoor_le32(l->p + 4);
            l->p += 8;
            if (b == 0xffffffffu) { /* a base address selection */
                if (x == 0xffffffffu)
                    return -1;
                l->base = x;
                continue;
            }
            if (!b && !x)
                return 0;
            *lo = b + l->base;
            *hi = x + l->base;
            return 1;
        }
        if (l->p >= l->end)
            return -1;
        uint64_t a, b;
        switch (*l->p++) {
        case DW_RLE_end_of_list: return 0;
        case DW_RLE_offset_pair:
            if (!range_leb(&l->p, l->end, &a) || !range_leb(&l->p, l->end, &b))
                return -1;
            *lo = a + l->base;
            *hi = b + l->base;
            return 1;
        case DW_RLE_base_address:
            if (l->end - l->p < 4)
                return -1;
            l->base = spoor_le32(l->p);
            l->p += 4;
            continue;
        case DW_RLE_start_end:
            if (l->end - l->p < 8)
                return -1;
            *lo = spoor_le32(l->p);
            *hi = spoor_le32(l->p + 4);
            l->p += 8;
            return 1;
        case DW_RLE_start_length:
            if (l->end - l->p < 4)
                return -1;
            *lo = spoor_le32(l->p);
            l->p += 4;
            if (!range_leb(&l->p, l->end, &b))
                return -1;
            *hi = *lo + b;
            return 1;
        default: return -1;
        }
    }
}

/* die_claims from the unit DIE read_cu_die read: 0: read; -1 without memory; 2: not read so
 * (die_claims must). */
static int cu_claims(const spoor_elf *e, unsigned version, const struct cu_die *d, bool keep_zero,
                     struct unit_claims *c)
{
    size_t cap = 0;
    c->n = 0;
    if (d->has_low && d->has_high) { /* as dwarf_ranges takes low_pc and high_pc first */
        if (add_claim(c, &cap, d->low, d->high, keep_zero))
            return -1;
    } else if (d->has_ranges) {
        struct range_list l;
        uint64_t lo, hi;
        int got;
        if (!range_list_start(e, version, d->ranges, d->base, &l))
            return 2;
        while ((got = range_list_next(&l, &lo, &hi)) > 0)
            if (add_claim(c, &cap, lo, hi, keep_zero))
                return -1;
        if (got < 0) {
            c->n = 0;
            return 2;
        }
    }
    c->known = d->has_ranges || d->has_low;
    join_claims(c);
    return 0;
}

struct walker {
    const spoor_elf *e;
    struct symbol_tables *t;
    struct dw_unit *u;
    uint32_t unit;
    size_t cap_ranges;
    const char *const *files;
    size_t nfiles;
    bool warned;    /* a DIE of the unit was unreadable: said once */
    bool tentative; /* the fast walk: a problem is not warned but stops it (bailed) */
    int mangling;   /* mangling_language's answer, -1: not asked yet */
    /* add_scope_raw before the line table is read (die_tree_problem's walk): the file numbers
     * are checked (max_file) and the call files looked up (call_files, number + 1 per scope from
     * first_scope, 0: none) once it is */
    bool defer_files, any_file;
    uint64_t max_file;
    uint32_t *call_files;
    size_t first_scope, cap_call_files;
    bool bailed;
    const struct cu_die *cu; /* the unit DIE as read_cu_die read it, NULL: through libdw */
};

/* Warns (once per unit) that DIE die of the unit cannot be read: what is wrong, why (libdw's
 * message, NULL when it is not libdw's finding) and what it costs. */
static void die_problem(struct walker *w, Dwarf_Die *die, const char *what, const char *why,
                        const char *skipped)
{
    if (w->tentative) { /* the walk through libdw will say it */
        w->bailed = true;
        return;
    }
    w->u->damaged = true;
    if (w->warned)
        return;
    w->warned = true;
    spoor_elf_warn(w->e, ".debug_info unit at 0x%llx: DIE at 0x%llx: %s%s%s%s: %s",
                   (unsigned long long)w->u->header, (unsigned long long)dwarf_dieoffset(die), what,
                   why ? " (" : "", why ? why : "", why ? ")" : "", skipped);
}

/* The attributes of a function's or inlined instance's DIE that the walk reads, gathered in one
 * pass over the DIE (dwarf_getattrs) instead of one search each; the names also through the
 * abstract origin or specification, as dwarf_attr_integrate finds them. */
enum scope_attr {
    LINKAGE_NAME,
    MIPS_LINKAGE_NAME,
    NAME,
    ORIGIN,
    SPECIFICATION,
    DECL_FILE,
    CALL_FILE,
    CALL_LINE,
    SCOPE_ATTRS
};

struct scope_attrs {
    Dwarf_Attribute attr[SCOPE_ATTRS];
    bool has[SCOPE_ATTRS];
};

/* Which of the scope attributes attribute name is, -1: none. */
static int scope_attr_kind(uint64_t name)
{
    switch (name) {
    case DW_AT_linkage_name: return LINKAGE_NAME;
    case DW_AT_MIPS_linkage_name: return MIPS_LINKAGE_NAME;
    case DW_AT_name: return NAME;
    case DW_AT_abstract_origin: return ORIGIN;
    case DW_AT_specification: return SPECIFICATION;
    case DW_AT_decl_file: return DECL_FILE;
    case DW_AT_call_file: return CALL_FILE;
    case DW_AT_call_line: return CALL_LINE;
    default: return -1;
    }
}

static int gather_attr(Dwarf_Attribute *attr, void *arg)
{
    struct scope_attrs *a = arg;
    int k = scope_attr_kind(dwarf_whatattr(attr));
    if (k < 0)
        return DWARF_CB_OK;
    if (!a->has[k]) { /* the first of a kind, as dwarf_attr finds it */
        a->attr[k] = *attr;
        a->has[k] = true;
    }
    return DWARF_CB_OK;
}

/* The attributes of die itself into *own, and into names the names (LINKAGE_NAME to NAME) as
 * dwarf_attr_integrate finds each: on die or on the first DIE of the chain of abstract origins
 * (else specifications) that has it, 16 links at most. */
static void scope_attrs(Dwarf_Die *die, struct scope_attrs *own, struct scope_attrs *names)
{
    memset(own, 0, sizeof *own);
    dwarf_getattrs(die, gather_attr, own, 0);
    *names = *own;
    struct scope_attrs level = *own;
    Dwarf_Die next;
    for (int chain = 16; chain-- > 0;) {
        if (names->has[LINKAGE_NAME] && names->has[MIPS_LINKAGE_NAME] && names->has[NAME])
            return;
        Dwarf_Attribute *ref = level.has[ORIGIN]          ? &level.attr[ORIGIN]
                               : level.has[SPECIFICATION] ? &level.attr[SPECIFICATION]
                                                          : NULL;
        if (!ref || !dwarf_formref_die(ref, &next))
            return;
        memset(&level, 0, sizeof level);
        dwarf_getattrs(&next, gather_attr, &level, 0);
        for (int k = LINKAGE_NAME; k <= NAME; k++)
            if (!names->has[k] && level.has[k]) {
                names->attr[k] = level.attr[k];
                names->has[k] = true;
            }
    }
}

/* The file that attribute k (CALL_FILE, DECL_FILE) of die gives among the unit's line-table
 * files; NULL when there is none, and a problem when the index is not a file (binutils: "bad
 * file number"). */
static const char *file_attr(struct walker *w, Dwarf_Die *die, struct scope_attrs *own,
                             enum scope_attr k)
{
    Dwarf_Word idx;
    if (!w->files || !own->has[k])
        return NULL;
    bool unreadable = dwarf_formudata(&own->attr[k], &idx) != 0;
    if (unreadable || idx >= w->nfiles) {
        die_problem(w, die,
                    k == CALL_FILE ? "DW_AT_call_file is not a file of the line table"
                                   : "DW_AT_decl_file is not a file of the line table",
                    unreadable ? libdw_problem() : NULL, "its file is not known");
        return NULL;
    }
    return w->files[idx];
}

/* Name k of the scope; NULL when there is none, and a problem when it is there but cannot be
 * read (a string offset past .debug_str). */
static const char *string_attr(struct walker *w, Dwarf_Die *die, struct scope_attrs *names,
                               enum scope_attr k)
{
    if (!names->has[k])
        return NULL;
    const char *s = dwarf_formstring(&names->attr[k]);
    if (!s)
        die_problem(w, die, "a name unreadable", libdw_problem(),
                    "the function is named by the symbol table");
    return s;
}

/* A problem when the abstract origin or specification of a function is no DIE (or points into
 * the middle of one), as binutils finds it ("invalid abstract instance DIE ref"). */
static void check_origin(struct walker *w, Dwarf_Die *die, struct scope_attrs *own)
{
    static const enum scope_attr refs[] = {ORIGIN, SPECIFICATION};
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
        Dwarf_Die target;
        if (own->has[refs[i]] && (!dwarf_formref_die(&own->attr[refs[i]], &target) ||
                                  dwarf_tag(&target) == DW_TAG_invalid)) {
            die_problem(w, die, "a reference to no DIE", libdw_problem(),
                        "the function is named by the symbol table");
            return;
        }
    }
}

/* Whether a unit's language names its functions by mangled symbols (C++, Rust, ...): binutils'
 * list of languages without mangling (dwarf2.c, mangle_style), the rest has it. */
static bool language_mangles(int language)
{
    switch (language) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case 0x2c: /* DW_LANG_C17 */
    case DW_LANG_UPC:
    case DW_LANG_Cobol74:
    case DW_LANG_Cobol85:
    case DW_LANG_Fortran77:
    case DW_LANG_Pascal83:
    case DW_LANG_PLI:
    case DW_LANG_Mips_Assembler:
    case 0x31: /* DW_LANG_Assembly */ return false;
    default: return true;
    }
}

/* unit_mangles for the walker's unit, asked once. */
static bool mangling_language(struct walker *w)
{
    if (w->mangling >= 0)
        return w->mangling;
    Dwarf_Die cu;
    w->mangling = 1;
    if (dwarf_offdie(spoor_elf_libdw(w->e), w->u->die, &cu))
        w->mangling = language_mangles(dwarf_srclang(&cu));
    return w->mangling;
}

/* A function's name as addr2line gives it without -C: its linkage name (the DIE's, or that of
 * its abstract origin or specification) when it has one, else its DW_AT_name. An out-of-line
 * function of a mangling language without a linkage name in DWARF (a C++ function in an
 * anonymous namespace, main) is named by the function symbol that starts where its code
 * (range lo) does, as binutils and llvm-symbolizer name it. Lookups show it demangled unless the
 * ELF was told otherwise (spoor_elf_set_demangle). */
static const char *scope_name(struct walker *w, Dwarf_Die *die, int tag, uint32_t lo,
                              struct scope_attrs *names)
{
    const char *name = string_attr(w, die, names, LINKAGE_NAME);
    if (!name)
        name = string_attr(w, die, names, MIPS_LINKAGE_NAME);
    if (name)
        return name;
    name = string_attr(w, die, names, NAME);
    if (tag == DW_TAG_subprogram) {
        const struct elf_symbol *sym = spoor_elf_symbol_at(w->e, lo);
        if (sym && sym->start == lo && (!name || strcmp(sym->name, name)) && mangling_language(w))
            return sym->name;
    }
    return name;
}

/* Adds the scope of die when it has code (its index; -2 when it has none); its code ranges
 * through dwarf_ranges, or, when pc is not NULL, the one range pc[0] to pc[1] (an empty one:
 * none) the caller read from its low_pc and high_pc as dwarf_ranges would. -1 without memory. */
static int add_scope(struct walker *w, Dwarf_Die *die, int tag, int32_t parent, int depth,
                     const Dwarf_Addr *pc)
{
    struct symbol_tables *t = w->t;
    struct dw_unit *u = w->u;
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    int32_t idx = (int32_t)t->nscopes;
    int any = 0;
    uint32_t first_lo = 0;
    while ((off = pc ? (off ? 0 : 1) : dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (pc) {
            lo = pc[0];
            hi = pc[1];
        }
        if (lo >= hi || hi > UINT32_MAX || (lo == 0 && !t->keep_zero))
            continue; /* empty, or code of a section the linker discarded */
        if (spoor_grow((void **)&u->ranges, &w->cap_ranges, u->nranges + 1, sizeof *u->ranges))
            return -1;
        if (!any)
            first_lo = (uint32_t)lo;
        u->ranges[u->nranges] = (struct dw_range){
            (uint32_t)lo, (uint32_t)hi, (uint32_t)lo, idx, depth, w->unit, (uint32_t)u->nranges};
        u->nranges++;
        any = 1;
    }
    if (off < 0)
        die_problem(w, die, "code ranges unreadable", libdw_problem(),
                    "its code is not named by it");
    if (!any) { /* no code: its references are still checked, as binutils follows them */
        if (dwarf_hasattr(die, DW_AT_abstract_origin) || dwarf_hasattr(die, DW_AT_specification)) {
            struct scope_attrs own = {0};
            dwarf_getattrs(die, gather_attr, &own, 0);
            check_origin(w, die, &own);
        }
        return -2;
    }
    if (spoor_grow((void **)&t->scopes, &t->cap_scopes, t->nscopes + 1, sizeof *t->scopes))
        return -1;
    struct dw_scope *s = &t->scopes[t->nscopes++];
    struct scope_attrs own, names;
    scope_attrs(die, &own, &names);
    s->name = scope_name(w, die, tag, first_lo, &names);
    check_origin(w, die, &own); /* binutils follows every reference, named or not */
    s->parent = parent;
    s->call_file = NULL;
    s->call_line = 0;
    file_attr(w, die, &own, DECL_FILE); /* not shown, but checked as binutils does */
    if (tag == DW_TAG_inlined_subroutine) {
        Dwarf_Word line;
        s->call_file = file_attr(w, die, &own, CALL_FILE);
        if (own.has[CALL_LINE] && !dwarf_formudata(&own.attr[CALL_LINE], &line))
            s->call_line = (unsigned)line;
    }
    return idx;
}

/* Tags whose children can hold code: the rest (types, variables, parameters) is not walked. */
static int may_hold_code(int tag)
{
    switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type: /* walked only inside functions: see walk() */
    case DW_TAG_structure_type:
    case DW_TAG_union_type: return 1;
    default: return 0;
    }
}

/* Walks the children of die into scopes. 0: done; 1: stopped at a DIE that cannot be read
 * (warned: the rest of the unit is not walked); -1 without memory. */
static int walk(struct walker *w, Dwarf_Die *die, int32_t parent, int depth)
{
    Dwarf_Die child;
    int own = dwarf_tag(die);
    if (!may_hold_code(own))
        return 0;
    int has = dwarf_haschildren(die), r = has > 0 ? dwarf_child(die, &child) : has;
    if (r < 0) {
        die_problem(w, die, "children unreadable", libdw_problem(),
                    "the rest of the unit's functions ignored");
        return 1;
    }
    if (!has || r > 0)
        return 0;
    /* GCC defines the member functions of a class local to a function (a lambda's) inside that
     * class, inside the function's abstract instance: those are walked too; classes elsewhere
     * hold declarations only. */
    bool in_function =
        own == DW_TAG_subprogram || own == DW_TAG_lexical_block || own == DW_TAG_inlined_subroutine;
    do {
        int tag = dwarf_tag(&child);
        int32_t scope = parent;
        int d = depth;
        if (tag == DW_TAG_invalid) {
            die_problem(w, &child, "unknown abbreviation", libdw_problem(),
                        "the rest of the unit's functions ignored");
            return 1;
        }
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            int got =
                add_scope(w, &child, tag, tag == DW_TAG_subprogram ? -1 : parent, depth, NULL);
            if (got == -1)
                return -1;
            if (got == -2 &&
                (dwarf_hasattr(&child, DW_AT_declaration) || dwarf_hasattr(&child, DW_AT_low_pc) ||
                 dwarf_hasattr(&child, DW_AT_ranges)))
                continue;   /* a declaration, or code the linker discarded (see add_scope) */
            if (got >= 0) { /* else an abstract instance: only its local classes are of interest */
                scope = got;
                d = depth + 1;
            }
        } else if ((tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                    tag == DW_TAG_union_type) &&
                   !in_function) {
            continue;
        }
        int sub = walk(w, &child, scope, d);
        if (sub)
            return sub;
    } while ((r = dwarf_siblingof(&child, &child)) == 0);
    if (r < 0) {
        die_problem(w, &child, "next DIE unreadable", libdw_problem(),
                    "the rest of the unit's functions ignored");
        return 1;
    }
    return 0;
}

/* Whether form is one DWARF 2 to 5 or GNU defines. */
static bool known_form(uint64_t form)
{
    return (form >= DW_FORM_addr && form <= DW_FORM_addrx4 && form != 0x02) ||
           form == DW_FORM_GNU_addr_index || form == DW_FORM_GNU_str_index ||
           form == DW_FORM_GNU_ref_alt || form == DW_FORM_GNU_strp_alt;
}

static uint64_t abbrev_leb_long(const uint8_t **p, const uint8_t *end, bool *bad)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    *bad = true;
    return 0;
}

/* A LEB128 number of an abbreviation; *bad when it runs past end. One byte, the common case,
 * inline. */
static inline uint64_t abbrev_leb(const uint8_t **p, const uint8_t *end, bool *bad)
{
    const uint8_t *q = *p;
    if (q < end && *q < 0x80) {
        *p = q + 1;
        return *q;
    }
    bool b = false; /* through locals of its own: the caller's stay in registers */
    uint64_t v = abbrev_leb_long(&q, end, &b);
    *p = q;
    *bad |= b;
    return v;
}

/* String offsets a DIE of fixed size is checked at without reading it form by form. */
#define MAX_FIXED_STRINGS 4

/* A unit's abbreviations, flattened for the DIE scan and the walk: abbreviation code c (1 to
 * ncodes) is codes[c - 1], its attributes attrs[first .. first + count). */
struct abbrev_code {
    uint32_t first, count;
    uint32_t tag;
    int32_t fixed;        /* the size of a DIE's values when every form has a fixed one, else -1 */
    int32_t sibling_at;   /* then where DW_AT_sibling's value is among them */
    uint8_t nstrings;     /* then how many string offsets (up to MAX_FIXED_STRINGS, else -1) */
    uint8_t line_strings; /* which of them are line_strp (bit i) */
    uint16_t string_at[MAX_FIXED_STRINGS]; /* and where */
    bool defined, children;
    bool skips;      /* DW_AT_declaration, low_pc or ranges: see walk() */
    int32_t sibling; /* which of its attributes is DW_AT_sibling, -1: none */
    uint32_t plan;   /* where its skip plan starts in abbrevs.ops (NO_PLAN: none) */
    /* the size of its DW_AT_sibling's value when that is a reference of a fixed size (ref1 to
     * ref8, read at sibling_at when the DIE has a fixed size), else 0 */
    uint8_t sibling_size;
    bool scope; /* its tag is DW_TAG_subprogram or DW_TAG_inlined_subroutine */
};

/* A skip plan: how skip_attrs moves past the values of a DIE that has no fixed size, one op per
 * run of fixed-size values (skipped with one add), per string offset (checked) and per other
 * value (DW_AT_sibling, a form of no fixed size). An op is its kind (the low 3 bits) and a
 * number: the run's bytes, which string section, or the attribute's index in abbrevs.attrs. */
enum { OP_SKIP, OP_STR, OP_SIBLING, OP_VALUE, OP_END, OP_CSTR, OP_LEB, OP_EXPRLOC };
#define NO_PLAN UINT32_MAX

struct abbrev_attr { /* 16 bytes */
    uint16_t name;   /* names past 16 bits saturate (DWARF's end at 0x3fff): only known ones are
                      * looked at */
    uint16_t form;   /* a known form (abbrev_problem checks; the highest is 0x1f21) */
    uint8_t kind;    /* enum scope_attr, or one of the code attributes (ATTR_LOW_PC ...) */
    int8_t size;     /* the value's size when fixed, else -1 (die_reader_init sets it) */
    uint8_t str;     /* 1: a strp value, 2: a line_strp one, else 0 */
    int64_t value;   /* DW_FORM_implicit_const's */
};
_Static_assert(sizeof(struct abbrev_attr) == 16, "an attribute in 16 bytes");

/* abbrev_attr.kind past the scope attributes */
enum { ATTR_LOW_PC = SCOPE_ATTRS, ATTR_HIGH_PC, ATTR_RANGES, ATTR_OTHER };

struct abbrevs {
    struct abbrev_code *codes;
    struct abbrev_attr *attrs;
    size_t ncodes, cap_codes, nattrs, cap_attrs;
    uint32_t *ops; /* the skip plans of the codes (die_reader_init) */
    size_t nops, cap_ops;
    bool unindexed;              /* a code past MAX_ABBREV_CODE: the DIEs are not scanned */
    bool twice;                  /* a code defined twice (libdw may not read the unit DIE) */
    unsigned version, addr_size; /* what the attributes' sizes were found for */
};

static void abbrevs_free(struct abbrevs *a)
{
    free(a->codes);
    free(a->attrs);
    free(a->ops);
}

/* The size of an attribute value of the form given when it is fixed (32-bit DWARF), else -1. */
static inline __attribute__((always_inline)) int form_size(uint64_t form, unsigned version,
                                                           unsigned addr_size)
{
    switch (form) {
    case DW_FORM_flag_present:
    case DW_FORM_implicit_const: return 0;
    case DW_FORM_addr: return (int)addr_size;
    case DW_FORM_ref_addr: return version == 2 ? (int)addr_size : 4;
    case DW_FORM_data1:
    case DW_FORM_ref1:
    case DW_FORM_flag:
    case DW_FORM_strx1:
    case DW_FORM_addrx1: return 1;
    case DW_FORM_data2:
    case DW_FORM_ref2:
    case DW_FORM_strx2:
    case DW_FORM_addrx2: return 2;
    case DW_FORM_strx3:
    case DW_FORM_addrx3: return 3;
    case DW_FORM_strp:
    case DW_FORM_line_strp:
    case DW_FORM_data4:
    case DW_FORM_ref4:
    case DW_FORM_sec_offset:
    case DW_FORM_strx4:
    case DW_FORM_addrx4:
    case DW_FORM_ref_sup4:
    case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt:
    case DW_FORM_GNU_strp_alt: return 4;
    case DW_FORM_data8:
    case DW_FORM_ref8:
    case DW_FORM_ref_sig8:
    case DW_FORM_ref_sup8: return 8;
    case DW_FORM_data16: return 16;
    default: return -1;
    }
}

/* Codes above this are not indexed (GCC, clang and IAR number them from 1 up): such a unit's
 * DIEs are not scanned. */
#define MAX_ABBREV_CODE 65536

/* How a unit's DIEs of one abbreviation are laid out, made attribute by attribute (the sizes of
 * the values made for the unit): struct abbrev_code's fixed, sibling_at, nstrings, line_strings
 * and string_at. Once a value of no fixed size comes, nothing more is taken. */
struct code_layout {
    int32_t fixed, sibling_at;
    uint8_t nstrings, line_strings;
    uint16_t string_at[MAX_FIXED_STRINGS];
};

static inline __attribute__((always_inline)) void layout_add(struct code_layout *l, bool sibling,
                                                             int size, unsigned str)
{
    if (l->fixed < 0)
        return;
    if (sibling)
        l->sibling_at = l->fixed;
    if (str) {
        if (l->nstrings < MAX_FIXED_STRINGS && l->fixed <= UINT16_MAX) {
            l->line_strings |= (uint8_t)((str == 2) << l->nstrings);
            l->string_at[l->nstrings] = (uint16_t)l->fixed;
        }
        if (l->nstrings < UINT8_MAX) /* past MAX_FIXED_STRINGS: read form by form */
            l->nstrings++;
    }
    l->fixed = size < 0 ? -1 : l->fixed + size;
}

static void layout_set(struct abbrev_code *c, const struct code_layout *l)
{
    c->fixed = l->fixed;
    c->sibling_at = l->sibling_at;
    c->nstrings = l->nstrings;
    c->line_strings = l->line_strings;
    memcpy(c->string_at, l->string_at, sizeof c->string_at);
}

/* Attribute names below 0x80 (one LEB128 byte): their kind in the low 4 bits, xor ATTR_OTHER (0:
 * ATTR_OTHER; NAME_KIND reads it), and whether walk() skips a subprogram without code that has
 * it, whether it is DW_AT_sibling. */
#define NAME_SKIPS 0x10
#define NAME_SIBLING 0x20
#define KIND_BITS(k) ((k) ^ ATTR_OTHER)
#define NAME_KIND(bits) (uint8_t)(((bits)&15) ^ ATTR_OTHER)
_Static_assert(ATTR_OTHER < 16, "a kind fits the low 4 bits");
static const uint8_t name_bits[0x80] = {
    [DW_AT_sibling] = NAME_SIBLING,
    [DW_AT_name] = KIND_BITS(NAME),
    [DW_AT_abstract_origin] = KIND_BITS(ORIGIN),
    [DW_AT_specification] = KIND_BITS(SPECIFICATION),
    [DW_AT_decl_file] = KIND_BITS(DECL_FILE),
    [DW_AT_call_file] = KIND_BITS(CALL_FILE),
    [DW_AT_call_line] = KIND_BITS(CALL_LINE),
    [DW_AT_linkage_name] = KIND_BITS(LINKAGE_NAME),
    [DW_AT_low_pc] = KIND_BITS(ATTR_LOW_PC) | NAME_SKIPS,
    [DW_AT_high_pc] = KIND_BITS(ATTR_HIGH_PC),
    [DW_AT_ranges] = KIND_BITS(ATTR_RANGES) | NAME_SKIPS,
    [DW_AT_declaration] = NAME_SKIPS,
};

/* The kind of attribute name. */
static uint8_t attr_kind(uint64_t name)
{
    if (name < 0x80)
        return NAME_KIND(name_bits[name]);
    int k = scope_attr_kind(name);
    return k >= 0                  ? (uint8_t)k
           : name == DW_AT_low_pc  ? ATTR_LOW_PC
           : name == DW_AT_high_pc ? ATTR_HIGH_PC
           : name == DW_AT_ranges  ? ATTR_RANGES
                                   : ATTR_OTHER;
}

_Static_assert(STANDARD_FORMS == DW_FORM_addrx4 + 1, "the standard forms end at DW_FORM_addrx4");

/* t's table of the standard forms (struct form_entry) for units of the version and address size
 * given, made when they differ from the last unit's. */
static const struct form_entry *unit_forms(const spoor_elf *e, struct symbol_tables *t,
                                           unsigned version, unsigned addr_size)
{
    uint32_t key = (version & 0xffffff) << 8 | (addr_size & 0xff);
    if (t->forms_key == key && key)
        return t->forms;
    bool line_str = spoor_elf_known_section(e, SEC_DEBUG_LINE_STR) != NULL;
    for (unsigned f = 0; f < 0x100; f++) {
        t->forms[f].size = f < STANDARD_FORMS ? (int8_t)form_size(f, version, addr_size) : -1;
        t->forms[f].str = f == DW_FORM_strp ? 1 : f == DW_FORM_line_strp ? 2 : 0;
        t->forms[f].plain = f >= DW_FORM_addr && f < STANDARD_FORMS && f != 0x02 &&
                            f != DW_FORM_implicit_const && (f != DW_FORM_line_strp || line_str);
    }
    t->forms_key = key;
    return t->forms;
}

/* Abbreviation entries read before (in any unit of the ELF), by their bytes after the code: the
 * tag, the children flag and the name/form pairs up to the list's end, each of one byte (and
 * DW_FORM_implicit_const's values) (units of one producer repeat most entries). An entry equal to
 * one of them is what it was read into then: abbrev_problem copies it instead of reading it again.
 * Made for one table of forms (key: symbol_tables.forms_key), cleared when that changes. */
struct memo_entry {
    const uint8_t *bytes; /* in .debug_abbrev */
    uint64_t hash;        /* of the bytes, abbrev_problem's */
    uint32_t len;
    uint32_t attrs;          /* its attributes, at abbrev_memo.attrs[attrs] */
    struct abbrev_code code; /* as read (first: unset) */
};

struct abbrev_memo {
    uint32_t key;
    uint32_t *slots; /* 1 + an index into entries, 0: empty; mask + 1 of them */
    size_t mask;
    struct memo_entry *entries;
    size_t n, cap;
    struct abbrev_attr *attrs;
    size_t nattrs, cap_attrs;
};

static void abbrev_memo_free(struct abbrev_memo *m)
{
    if (!m)
        return;
    free(m->slots);
    free(m->entries);
    free(m->attrs);
    free(m);
}

/* The entry of bytes [at, at + len) hashed h in m, NULL when there is none. */
static const struct memo_entry *memo_find(const struct abbrev_memo *m, const uint8_t *at,
                                          size_t len, uint64_t h)
{
    if (!m->slots)
        return NULL;
    for (size_t i = (size_t)(h >> 40) & m->mask;; i = (i + 1) & m->mask) {
        uint32_t k = m->slots[i];
        if (!k)
            return NULL;
        const struct memo_entry *x = &m->entries[k - 1];
        if (x->hash == h && x->len == len && !memcmp(x->bytes, at, len))
            return x;
    }
}

/* Keeps the entry of bytes [at, at + len) hashed h, read into c and its attributes attrs; quietly
 * nothing without memory (the entry is read again next time). */
static void memo_add(struct abbrev_memo *m, const uint8_t *at, size_t len, uint64_t h,
                     const struct abbrev_code *c, const struct abbrev_attr *attrs)
{
    if ((m->n + 1) * 2 > m->mask + 1 || !m->slots) { /* at most half full */
        size_t size = m->slots ? (m->mask + 1) * 2 : 1024;
        uint32_t *slots = calloc(size, sizeof *slots);
        if (!slots)
            return;
        for (size_t k = 0; k < m->n; k++) {
            size_t i = (size_t)(m->entries[k].hash >> 40) & (size - 1);
            while (slots[i])
                i = (i + 1) & (size - 1);
            slots[i] = (uint32_t)k + 1;
        }
        free(m->slots);
        m->slots = slots;
        m->mask = size - 1;
    }
    if (m->n >= UINT32_MAX - 1 || m->nattrs + c->count >= UINT32_MAX ||
        spoor_grow((void **)&m->entries, &m->cap, m->n + 1, sizeof *m->entries) ||
        spoor_grow((void **)&m->attrs, &m->cap_attrs, m->nattrs + c->count, sizeof *m->attrs))
        return;
    if (c->count)
        memcpy(m->attrs + m->nattrs, attrs, c->count * sizeof *attrs);
    m->entries[m->n] = (struct memo_entry){at, h, (uint32_t)len, (uint32_t)m->nattrs, *c};
    m->nattrs += c->count;
    size_t i = (size_t)(h >> 40) & m->mask;
    while (m->slots[i])
        i = (i + 1) & m->mask;
    m->slots[i] = (uint32_t)++m->n;
}

/* t's memo of abbreviation entries for the forms t->forms_key names (NULL without memory). */
static struct abbrev_memo *unit_memo(struct symbol_tables *t)
{
    struct abbrev_memo *m = t->abbrev_memo;
    if (m && m->key != t->forms_key) { /* made for other forms: emptied */
        free(m->slots);
        m->slots = NULL;
        m->mask = 0;
        m->n = m->nattrs = 0;
    }
    if (!m && !(m = t->abbrev_memo = calloc(1, sizeof *m)))
        return NULL;
    m->key = t->forms_key;
    return m;
}

/* The unit's abbreviations at off checked (as binutils reads every DIE, while the walk reads only
 * the DIEs that can hold code) and read into *a (a->ncodes 0 when they cannot be indexed), with
 * each code's layout (struct code_layout) for the unit header's version and address size: a form
 * nobody defines, or one whose section is missing, makes the DIEs that use it unreadable. NULL
 * when all is well, else what is wrong; -1 in *oom without memory. */
static const char *abbrev_problem(const spoor_elf *e, Dwarf_Off off, struct abbrevs *a,
                                  const struct form_entry *forms, struct abbrev_memo *memo,
                                  char *buf, size_t len, int *oom)
{
    unsigned version = a->version, addr_size = a->addr_size; /* the unit header's, as told */
    const struct elf_section *sec = spoor_elf_known_section(e, SEC_DEBUG_ABBREV);
    if (!sec) /* absent (libdw finds no DIE then) or compressed: libdw checks */
        return NULL;
    if (off >= sec->size)
        return "abbreviations past the end of .debug_abbrev";
    /* the attribute array exists from the start: the reads below index it from a->attrs */
    if (spoor_grow((void **)&a->attrs, &a->cap_attrs, 1, sizeof *a->attrs)) {
        *oom = -1;
        return NULL;
    }
    const uint8_t *p = sec->data + off, *end = sec->data + sec->size;
    bool bad = false, line_str = spoor_elf_known_section(e, SEC_DEBUG_LINE_STR) != NULL;
    /* room for attributes from the start: the reads below compute a->attrs + n */
    if (!a->attrs && spoor_grow((void **)&a->attrs, &a->cap_attrs, 16, sizeof *a->attrs)) {
        *oom = -1;
        return NULL;
    }
    for (;;) {
        uint64_t code = abbrev_leb(&p, end, &bad);
        if (bad || !code)
            break;
        const uint8_t *entry = p; /* its bytes after the code (see struct abbrev_memo) */
        uint64_t tag = abbrev_leb(&p, end, &bad);
        bool children = p < end && *p;
        if (p++ >= end) /* children */
            bad = true;
        bool indexed = code <= MAX_ABBREV_CODE;
        a->unindexed |= !indexed;
        if (indexed && code > a->ncodes) {
            if (spoor_grow((void **)&a->codes, &a->cap_codes, code, sizeof *a->codes)) {
                *oom = -1;
                return NULL;
            }
            if (code == a->ncodes + 1) /* the next code: the common case */
                a->codes[a->ncodes].defined = false;
            else
                memset(&a->codes[a->ncodes], 0, (code - a->ncodes) * sizeof *a->codes);
            a->ncodes = code;
        }
        size_t first = a->nattrs;
        /* an entry read before: copied (memo_len 0: not such an entry) */
        size_t memo_len = 0;
        uint64_t h = 0;
        if (memo && indexed && !bad && p - entry == 2) { /* a tag of one byte */
            const uint8_t *q = p;
            for (const uint8_t *b = entry; b < p; b++)
                h = (h ^ *b) * 0x100000001b3u;
            while (end - q >= 2 && (q[0] | q[1]) && !((q[0] | q[1]) & 0x80)) {
                h = (h ^ spoor_le16(q)) * 0x100000001b3u;
                q += 2;
                if (q[-1] != DW_FORM_implicit_const)
                    continue;
                while (q < end) { /* its value, a LEB128 number */
                    uint8_t v = *q++;
                    h = (h ^ v) * 0x100000001b3u;
                    if (!(v & 0x80))
                        break;
                }
            }
            if (end - q >= 2 && !q[0] && !q[1] && entry[0] < 0x80) {
                h *= 0x100000001b3u; /* the list's end */
                memo_len = (size_t)(q + 2 - entry);
                const struct memo_entry *x = memo_find(memo, entry, memo_len, h);
                if (x && a->codes[code - 1].defined) { /* defined twice: as below */
                    a->twice = true;
                    p = q + 2;
                    continue;
                }
                if (x) {
                    if (spoor_grow((void **)&a->attrs, &a->cap_attrs, first + x->code.count,
                                   sizeof *a->attrs)) {
                        *oom = -1;
                        return NULL;
                    }
                    for (uint32_t k = 0; k < x->code.count; k++) /* a few: no call */
                        a->attrs[first + k] = memo->attrs[x->attrs + k];
                    a->nattrs = first + x->code.count;
                    a->codes[code - 1] = x->code;
                    a->codes[code - 1].first = (uint32_t)first;
                    p = q + 2;
                    continue;
                }
            }
        }
        unsigned bits = 0; /* NAME_SKIPS of any attribute */
        int32_t sibling = -1;
        struct code_layout layout = {0, -1, 0, 0, {0}};
        for (;;) {
            uint64_t name, form;
            if (indexed) { /* the common case, in locals: both of one byte, a plain form */
                struct abbrev_attr *at = a->attrs + a->nattrs;
                const struct abbrev_attr *const full = a->attrs + a->cap_attrs;
                while (at < full && end - p >= 2 && p[0] < 0x80 && forms[p[1]].plain) {
                    unsigned nb = name_bits[p[0]], f = p[1];
                    bool is_sibling = (nb & NAME_SIBLING) && sibling < 0;
                    if (is_sibling)
                        sibling = (int32_t)(at - (a->attrs + first));
                    bits |= nb;
                    *at++ = (struct abbrev_attr){.name = p[0],
                                                 .form = (uint16_t)f,
                                                 .kind = NAME_KIND(nb),
                                                 .size = forms[f].size,
                                                 .str = forms[f].str};
                    layout_add(&layout, is_sibling, forms[f].size, forms[f].str);
                    p += 2;
                }
                a->nattrs = (size_t)(at - a->attrs);
                if (end - p >= 2 && !p[0] && !p[1]) { /* the end of the attributes */
                    p += 2;
                    break;
                }
            }
            name = abbrev_leb(&p, end, &bad);
            form = abbrev_leb(&p, end, &bad);
            if (bad || (!name && !form))
                break;
            bool standard = form < STANDARD_FORMS && form >= DW_FORM_addr && form != 0x02;
            if ((!standard && !known_form(form)) || (form == DW_FORM_line_strp && !line_str)) {
                snprintf(buf, len, "abbreviation %llu: %s form 0x%llx", (unsigned long long)code,
                         known_form(form) ? "no section for" : "unknown", (unsigned long long)form);
                return buf;
            }
            int64_t value = 0;
            if (form == DW_FORM_implicit_const) { /* a signed LEB128 */
                const uint8_t *v = p;
                value = (int64_t)abbrev_leb(&p, end, &bad);
                size_t bits7 = 7 * (size_t)(p - v);
                if (!bad && bits7 < 64 && (p[-1] & 0x40))
                    value = (int64_t)((uint64_t)value | ~(uint64_t)0 << bits7);
            }
            if (indexed) {
                if (spoor_grow((void **)&a->attrs, &a->cap_attrs, a->nattrs + 1,
                               sizeof *a->attrs)) {
                    *oom = -1;
                    return NULL;
                }
                bits |= name == DW_AT_declaration || name == DW_AT_low_pc || name == DW_AT_ranges
                            ? NAME_SKIPS
                            : 0;
                bool is_sibling = name == DW_AT_sibling && sibling < 0;
                if (is_sibling)
                    sibling = (int32_t)(a->nattrs - first);
                int size = standard ? forms[form].size : form_size(form, version, addr_size);
                unsigned str = form == DW_FORM_strp ? 1 : form == DW_FORM_line_strp ? 2 : 0;
                a->attrs[a->nattrs++] =
                    (struct abbrev_attr){.name = name > UINT16_MAX ? UINT16_MAX : (uint16_t)name,
                                         .form = (uint16_t)form,
                                         .kind = attr_kind(name),
                                         .size = (int8_t)size,
                                         .str = (uint8_t)str,
                                         .value = value};
                layout_add(&layout, is_sibling, size, str);
            }
        }
        if (bad)
            break;
        if (indexed) {
            if (a->codes[code - 1].defined) { /* a code defined twice: libdw takes the first */
                a->nattrs = first;
                a->twice = true;
            } else {
                struct abbrev_code *c = &a->codes[code - 1];
                *c = (struct abbrev_code){(uint32_t)first,
                                          (uint32_t)(a->nattrs - first),
                                          tag > UINT32_MAX ? 0 : (uint32_t)tag,
                                          -1,
                                          -1,
                                          0,
                                          0,
                                          {0},
                                          true,
                                          children,
                                          (bits & NAME_SKIPS) != 0,
                                          sibling,
                                          NO_PLAN,
                                          0,
                                          tag == DW_TAG_subprogram ||
                                              tag == DW_TAG_inlined_subroutine};
                layout_set(c, &layout);
                uint32_t form = sibling >= 0 ? a->attrs[first + (size_t)sibling].form : 0;
                c->sibling_size = form == DW_FORM_ref1   ? 1
                                  : form == DW_FORM_ref2 ? 2
                                  : form == DW_FORM_ref4 ? 4
                                  : form == DW_FORM_ref8 ? 8
                                                         : 0;
                if (memo_len && (size_t)(p - entry) == memo_len)
                    memo_add(memo, entry, memo_len, h, c, a->attrs + first);
            }
        }
    }
    return bad ? "abbreviations run past the end of .debug_abbrev" : NULL;
}

/* Moves *p past an attribute value of the form given (32-bit DWARF); false when it runs past
 * end. A string offset (strp, line_strp) at or past the end of its section (str_size[0] of
 * .debug_str, [1] of .debug_line_str; UINT64_MAX when absent) is a problem. */
static bool skip_form(const uint64_t str_size[2], const uint8_t **p, const uint8_t *end,
                      uint64_t form, unsigned version, unsigned addr_size, const char **problem)
{
    uint64_t n = 0;
    for (int indirect = 0; indirect < 8; indirect++) {
        int size = form_size(form, version, addr_size);
        if (size >= 0) {
            if ((size_t)(end - *p) < (size_t)size)
                return false;
            if ((form == DW_FORM_strp || form == DW_FORM_line_strp) &&
                spoor_le32(*p) >= str_size[form == DW_FORM_line_strp] && !*problem)
                *problem = form == DW_FORM_strp ? "a .debug_str offset past the section"
                                                : "a .debug_line_str offset past the section";
            *p += size;
            return true;
        }
        switch (form) {
        case DW_FORM_string: {
            const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
            if (!z)
                return false;
            *p = z + 1;
            return true;
        }
        case DW_FORM_block1:
        case DW_FORM_block2:
        case DW_FORM_block4: {
            unsigned bytes = form == DW_FORM_block1 ? 1 : form == DW_FORM_block2 ? 2 : 4;
            if ((size_t)(end - *p) < bytes)
                return false;
            n = spoor_le_bytes(*p, bytes);
            *p += bytes;
            break;
        }
        case DW_FORM_block:
        case DW_FORM_exprloc:
            if (!spoor_uleb128(p, end, &n))
                return false;
            break;
        case DW_FORM_indirect:
            if (!spoor_uleb128(p, end, &form))
                return false;
            continue;
        default: /* the LEB128 forms (sdata, udata, ref_udata, strx, addrx, ...) */
            return spoor_uleb128(p, end, &n);
        }
        if (n > (uint64_t)(end - *p))
            return false;
        *p += n;
        return true;
    }
    return false;
}

/* Reading a unit's DIEs with its abbreviations (struct abbrevs), as the scan and the fast walk
 * below do. */
struct die_reader {
    const uint8_t *base, *hdr, *end; /* .debug_info, the unit's header, the unit's end */
    unsigned version, addr_size;
    uint64_t str_size[2];  /* see skip_form */
    const uint8_t *str[2]; /* .debug_str's and .debug_line_str's bytes, NULL when absent */
    /* starts[o] == stamp: a DIE (not an end-of-siblings marker) at unit offset o (NULL: not
     * known; the bytes are symbol_tables.starts, see unit_starts) */
    uint8_t *starts, stamp;
    struct later_refs *later; /* not NULL while the scan walks: see raw_ref */
};

/* The DIE starts map for a unit of size bytes (symbol_tables.starts, made and cleared once for
 * all units: each unit's marks are a new stamp, into *stamp); NULL without memory. */
static uint8_t *unit_starts(struct symbol_tables *t, size_t size, uint8_t *stamp)
{
    size_t old = t->cap_starts;
    if (spoor_grow((void **)&t->starts, &t->cap_starts, size, 1))
        return NULL;
    memset(t->starts + old, 0, t->cap_starts - old);
    if (!++t->starts_stamp) { /* every stamp used: the marks cleared */
        memset(t->starts, 0, t->cap_starts);
        t->starts_stamp = 1;
    }
    *stamp = t->starts_stamp;
    return t->starts;
}

/* References raw_ref took to DIEs the scan had not reached: each must be a DIE once it has. */
struct later_refs {
    uint64_t *off;
    size_t n, cap;
};

/* Appends op to a's plans; false without memory. */
static bool plan_op(struct abbrevs *a, uint32_t kind, uint64_t n)
{
    if (n > UINT32_MAX >> 3 ||
        spoor_grow((void **)&a->ops, &a->cap_ops, a->nops + 1, sizeof *a->ops))
        return false;
    a->ops[a->nops++] = kind | (uint32_t)n << 3;
    return true;
}

/* Whether a value of the form is a LEB128 number (skip_form reads it so). */
static bool leb_form(uint32_t form)
{
    switch (form) {
    case DW_FORM_sdata:
    case DW_FORM_udata:
    case DW_FORM_ref_udata:
    case DW_FORM_strx:
    case DW_FORM_addrx:
    case DW_FORM_loclistx:
    case DW_FORM_rnglistx: return true;
    default: return false;
    }
}

/* The skip plans of the codes whose DIEs have no fixed size, or more string offsets than the
 * fixed size path checks (the attributes' sizes made for the unit). Without memory, codes keep
 * NO_PLAN (their values are skipped one by one). */
static void make_plans(struct abbrevs *a)
{
    a->nops = 0;
    for (size_t i = 0; i < a->ncodes; i++) {
        struct abbrev_code *c = &a->codes[i];
        c->plan = NO_PLAN;
        if (!c->defined || (c->fixed >= 0 && c->nstrings <= MAX_FIXED_STRINGS))
            continue;
        size_t start = a->nops;
        uint64_t run = 0;
        bool ok = true;
        for (uint32_t k = 0; k < c->count && ok; k++) {
            const struct abbrev_attr *at = &a->attrs[c->first + k];
            if (at->size >= 0 && !at->str && (int32_t)k != c->sibling) {
                run += (uint64_t)at->size;
                continue;
            }
            ok = (!run || plan_op(a, OP_SKIP, run)) &&
                 (at->str                       ? plan_op(a, OP_STR, at->str - 1u)
                  : (int32_t)k == c->sibling    ? plan_op(a, OP_SIBLING, c->first + k)
                  : at->form == DW_FORM_string  ? plan_op(a, OP_CSTR, 0)
                  : at->form == DW_FORM_exprloc ? plan_op(a, OP_EXPRLOC, 0)
                  : leb_form(at->form)          ? plan_op(a, OP_LEB, 0)
                                                : plan_op(a, OP_VALUE, c->first + k));
            run = 0;
        }
        ok = ok && (!run || plan_op(a, OP_SKIP, run)) && plan_op(a, OP_END, 0);
        if (!ok) {
            a->nops = start;
            return;
        }
        c->plan = (uint32_t)start;
    }
}

/* False when the unit cannot be read so (libdw checks what is wrong then). */
static bool die_reader_init(const spoor_elf *e, const struct dw_unit *u, struct abbrevs *a,
                            struct die_reader *r)
{
    const struct elf_section *sec = spoor_elf_known_section(e, SEC_DEBUG_INFO);
    struct unit_header h;
    if (!sec || !a->ncodes || a->unindexed || !spoor_unit_header(sec, u->header, &h) ||
        !h.whole) /* libdw checks */
        return false;
    r->base = sec->data;
    r->hdr = r->base + u->header;
    r->end = h.end;
    r->version = h.version;
    r->addr_size = h.addr_size;
    const struct elf_section *str = spoor_elf_known_section(e, SEC_DEBUG_STR),
                             *line_str = spoor_elf_known_section(e, SEC_DEBUG_LINE_STR);
    r->str_size[0] = str ? str->size : UINT64_MAX;
    r->str_size[1] = line_str ? line_str->size : UINT64_MAX;
    r->str[0] = str ? str->data : NULL;
    r->str[1] = line_str ? line_str->data : NULL;
    r->starts = NULL;
    r->later = NULL;
    if (a->version != r->version || a->addr_size != r->addr_size) {
        /* each value's size and each code's layout, as abbrev_problem was told the unit
         * header's wrong */
        for (size_t k = 0; k < a->nattrs; k++) {
            struct abbrev_attr *at = &a->attrs[k];
            at->size = (int8_t)form_size(at->form, r->version, r->addr_size);
            at->str = at->form == DW_FORM_strp ? 1 : at->form == DW_FORM_line_strp ? 2 : 0;
        }
        for (size_t i = 0; i < a->ncodes; i++) {
            struct abbrev_code *c = &a->codes[i];
            struct code_layout layout = {0, -1, 0, 0, {0}};
            for (uint32_t k = 0; k < c->count; k++) {
                const struct abbrev_attr *at = &a->attrs[c->first + k];
                layout_add(&layout, (int32_t)k == c->sibling, at->size, at->str);
            }
            layout_set(c, &layout);
        }
    }
    make_plans(a);
    return true;
}

/* skip_form for the value of attribute at, a fixed-size one without a call. */
static inline bool skip_value(const struct die_reader *r, const struct abbrev_attr *at,
                              const uint8_t **p, const char **problem)
{
    if (at->size < 0)
        return skip_form(r->str_size, p, r->end, at->form, r->version, r->addr_size, problem);
    if ((size_t)(r->end - *p) < (size_t)at->size)
        return false;
    if (at->str && spoor_le32(*p) >= r->str_size[at->str - 1] && !*problem)
        *problem = at->str == 1 ? "a .debug_str offset past the section"
                                : "a .debug_line_str offset past the section";
    *p += at->size;
    return true;
}

/* The value of a unit-relative reference at p (ref1 to ref8, ref_udata); false for other forms
 * or when it runs past end. */
static inline bool unit_ref(const uint8_t *p, const uint8_t *end, uint32_t form, uint64_t *v)
{
    unsigned size = form == DW_FORM_ref1   ? 1
                    : form == DW_FORM_ref2 ? 2
                    : form == DW_FORM_ref4 ? 4
                    : form == DW_FORM_ref8 ? 8
                                           : 0;
    if (form == DW_FORM_ref_udata)
        return spoor_uleb128(&p, end, v);
    if (!size || (size_t)(end - p) < size)
        return false;
    *v = spoor_le_bytes(p, size);
    return true;
}

/* skip_attrs for a DIE without a fixed size (or with many string offsets): by its skip plan, else
 * value by value. */
__attribute__((noinline)) static bool
skip_attrs_slow(const struct die_reader *r, const struct abbrevs *a, const struct abbrev_code *c,
                const uint8_t **p, uint64_t *sibling, const char **problem)
{
    uint64_t ref;
    const char *unchecked = NULL;
    if (!problem)
        problem = &unchecked;
    for (const uint32_t *op = c->plan != NO_PLAN ? a->ops + c->plan : NULL; op; op++) {
        uint32_t n = *op >> 3;
        switch (*op & 7) {
        case OP_SKIP:
            if ((size_t)(r->end - *p) < n)
                return false;
            *p += n;
            break;
        case OP_STR:
            if (r->end - *p < 4)
                return false;
            if (spoor_le32(*p) >= r->str_size[n] && !*problem)
                *problem = n ? "a .debug_line_str offset past the section"
                             : "a .debug_str offset past the section";
            *p += 4;
            break;
        case OP_SIBLING:
            if (sibling && unit_ref(*p, r->end, a->attrs[n].form, &ref))
                *sibling = (uint64_t)(r->hdr - r->base) + ref;
            if (!skip_value(r, &a->attrs[n], p, problem))
                return false;
            break;
        case OP_VALUE:
            if (!skip_value(r, &a->attrs[n], p, problem))
                return false;
            break;
        case OP_CSTR: {
            const uint8_t *z = *p;
            while (z < r->end && *z)
                z++;
            if (z == r->end)
                return false;
            *p = z + 1;
            break;
        }
        case OP_LEB: {
            const uint8_t *q = *p;
            while (q < r->end && *q & 0x80)
                q++;
            if (q == r->end)
                return false;
            *p = q + 1;
            break;
        }
        case OP_EXPRLOC: {
            uint64_t len;
            if (!spoor_uleb128(p, r->end, &len) || len > (uint64_t)(r->end - *p))
                return false;
            *p += len;
            break;
        }
        default: return true;
        }
    }
    for (uint32_t i = 0; i < c->count; i++) {
        const struct abbrev_attr *at = &a->attrs[c->first + i];
        if (sibling && (int32_t)i == c->sibling && unit_ref(*p, r->end, at->form, &ref))
            *sibling = (uint64_t)(r->hdr - r->base) + ref;
        if (!skip_value(r, at, p, problem))
            return false;
    }
    return true;
}

/* Moves *p past the attribute values of a DIE of abbreviation c; *sibling (when not NULL) gets
 * the offset in .debug_info its DW_AT_sibling names, UINT64_MAX when it has none or one that is
 * no unit-relative reference. False when the values run past the unit's end. */
static inline __attribute__((always_inline)) bool
skip_attrs(const struct die_reader *r, const struct abbrevs *a, const struct abbrev_code *c,
           const uint8_t **p, uint64_t *sibling, const char **problem)
{
    if (sibling)
        *sibling = UINT64_MAX;
    if (c->fixed >= 0 && (!problem || c->nstrings <= MAX_FIXED_STRINGS)) {
        if (r->end - *p < c->fixed)
            return false;
        if (problem && c->nstrings) {
            const uint8_t *v = *p;
            for (unsigned i = 0, n = c->nstrings, lines = c->line_strings; i < n; i++) {
                unsigned line = lines >> i & 1;
                if (spoor_le32(v + c->string_at[i]) >= r->str_size[line]) { /* the first */
                    if (!*problem)
                        *problem = line ? "a .debug_line_str offset past the section"
                                        : "a .debug_str offset past the section";
                    break;
                }
            }
        }
        if (sibling && c->sibling_size) /* unit_ref's reading, its bytes within the DIE's */
            *sibling = (uint64_t)(r->hdr - r->base) +
                       (c->sibling_size == 4 ? spoor_le32(*p + c->sibling_at)
                                             : spoor_le_bytes(*p + c->sibling_at, c->sibling_size));
        *p += c->fixed;
        return true;
    }
    /* through locals of its own: the caller's stay in registers */
    const uint8_t *q = *p;
    uint64_t sib = UINT64_MAX;
    const char *why = problem ? *problem : NULL;
    bool ok = skip_attrs_slow(r, a, c, &q, sibling ? &sib : NULL, problem ? &why : NULL);
    *p = q;
    if (sibling)
        *sibling = sib;
    if (problem)
        *problem = why;
    return ok;
}

/* A DW_FORM_udata value at v (its end at or before end) of at most 4 bytes into *x, as libdw's
 * dwarf_formudata reads it; false for a longer one (libdw decides then). */
static bool short_udata(const uint8_t *v, const uint8_t *end, uint64_t *x)
{
    const uint8_t *q = v;
    return spoor_uleb128(&q, end, x) && q - v <= 4;
}

/* A scope attribute of a DIE as the fast walk reads it: where its value is (NULL: absent). */
struct raw_attr {
    const uint8_t *at;
    uint32_t form;
    int64_t value; /* DW_FORM_implicit_const's */
};

/* The scope attributes of a DIE of abbreviation c whose values start at p into own[], the first
 * of each kind as gather_attr takes it, and when pc is not NULL its code range as dwarf_ranges
 * reads a low_pc (DW_FORM_addr) and high_pc (an address, or a constant: the size): *known 1 with
 * it in pc, 1 with the empty range when the DIE has none of low_pc, high_pc and ranges (no code),
 * 0 when dwarf_ranges must read it (DW_AT_ranges without low_pc and high_pc, other forms). False
 * when the values run past the unit's end. */
static bool raw_die(const struct die_reader *r, const struct abbrevs *a,
                    const struct abbrev_code *c, const uint8_t *p, struct raw_attr own[SCOPE_ATTRS],
                    Dwarf_Addr pc[2], int *known, struct raw_attr *ranges_only)
{
    const char *unchecked = NULL;
    const uint8_t *low = NULL, *high = NULL;
    struct raw_attr ranges_at = {0};
    uint32_t high_form = 0;
    bool ranges = false, odd_low = false;
    memset(own, 0, SCOPE_ATTRS * sizeof *own);
    for (uint32_t i = 0; i < c->count; i++) {
        const struct abbrev_attr *at = &a->attrs[c->first + i];
        unsigned k = at->kind;
        if (k < SCOPE_ATTRS) {
            if (!own[k].at)
                own[k] = (struct raw_attr){p, at->form, at->value};
        } else if (k == ATTR_LOW_PC && !low && !odd_low) {
            odd_low = at->form != DW_FORM_addr || r->addr_size != 4;
            low = p;
        } else if (k == ATTR_HIGH_PC && !high) {
            high = p;
            high_form = at->form;
        } else if (k == ATTR_RANGES) {
            if (!ranges)
                ranges_at = (struct raw_attr){p, at->form, 0};
            ranges = true;
        }
        if (!skip_value(r, at, &p, &unchecked))
            return false;
    }
    if (!pc)
        return true;
    *known = 0;
    if (ranges_only)
        *ranges_only = !low && !high && !odd_low ? ranges_at : (struct raw_attr){0};
    if (odd_low)
        return true;
    if (low && high) {
        int size = form_size(high_form, r->version, r->addr_size);
        bool constant = high_form == DW_FORM_data1 || high_form == DW_FORM_data2 ||
                        high_form == DW_FORM_data4 || high_form == DW_FORM_data8;
        uint64_t udata = 0;
        if (high_form == DW_FORM_udata && !short_udata(high, r->end, &udata))
            return true;
        if (high_form != DW_FORM_addr && !constant && high_form != DW_FORM_udata)
            return true;
        pc[0] = spoor_le32(low);
        pc[1] = high_form == DW_FORM_addr    ? spoor_le32(high)
                : high_form == DW_FORM_udata ? pc[0] + udata
                                             : pc[0] + spoor_le_bytes(high, (unsigned)size);
        *known = 1;
    } else if (!ranges && !low && !high) {
        pc[0] = pc[1] = 0; /* no code: as dwarf_ranges finds none */
        *known = 1;
    }
    return true;
}

/* The DIE a unit-relative reference names, as dwarf_formref_die finds it: its abbreviation in *c
 * and its values at *p. False when it is no such reference to a DIE the scan found (libdw
 * decides then). */
static bool raw_ref(const struct die_reader *r, const struct abbrevs *a, const struct raw_attr *ref,
                    const struct abbrev_code **c, const uint8_t **p)
{
    uint64_t off, code;
    if (!r->starts || !unit_ref(ref->at, r->end, ref->form, &off) ||
        off >= (uint64_t)(r->end - r->hdr))
        return false;
    if (r->starts[off] != r->stamp) { /* not (yet) found a DIE by the scan */
        struct later_refs *l = r->later;
        if (!l || spoor_grow((void **)&l->off, &l->cap, l->n + 1, sizeof *l->off))
            return false;
        l->off[l->n++] = off;
    }
    *p = r->hdr + off;
    if (!spoor_uleb128(p, r->end, &code) || !code || code > a->ncodes ||
        !a->codes[code - 1].defined)
        return false;
    *c = &a->codes[code - 1];
    return true;
}

/* The string of a name attribute, as dwarf_formstring reads it; false when it is not read so. */
static bool raw_string(const struct die_reader *r, const struct raw_attr *at, const char **s)
{
    if (at->form == DW_FORM_string) { /* skip_form found its end */
        *s = (const char *)at->at;
        return true;
    }
    if (at->form != DW_FORM_strp && at->form != DW_FORM_line_strp)
        return false;
    unsigned line = at->form == DW_FORM_line_strp;
    uint64_t off = spoor_le32(at->at);
    if (!r->str[line] || off >= r->str_size[line] ||
        !memchr(r->str[line] + off, 0, (size_t)(r->str_size[line] - off)))
        return false;
    *s = (const char *)r->str[line] + off;
    return true;
}

/* The value of a file or line attribute, as dwarf_formudata reads it; false when not read so. */
static bool raw_udata(const struct die_reader *r, const struct raw_attr *at, uint64_t *v)
{
    const uint8_t *p = at->at;
    switch (at->form) {
    case DW_FORM_data1: *v = p[0]; return true;
    case DW_FORM_data2: *v = spoor_le16(p); return true;
    case DW_FORM_implicit_const: *v = (uint64_t)at->value; return true;
    case DW_FORM_udata: return spoor_uleb128(&p, r->end, v);
    default: return false;
    }
}

/* The first value of an attribute read_cu_die reads as a 4-byte number into *value (*has set);
 * false when the first one's form is not read so. */
static bool first_u32(bool *has, uint64_t *value, bool form_ok, const uint8_t *v)
{
    if (*has)
        return true;
    *has = true;
    if (form_ok) /* a 4-byte value */
        *value = spoor_le32(v);
    return form_ok;
}

/* The unit DIE's attributes into *d (struct cu_die), read as libdw reads them (the first of each
 * name); false when the DIE is not read so: no compile or partial unit, a form of those
 * attributes libdw reads otherwise or that is not read here, an attribute that makes libdw look
 * elsewhere (an abstract origin or specification, a split unit's or a base attribute), a string
 * or line program offset past its section. libdw reads the unit DIE then. */
static bool read_cu_die(const spoor_elf *e, const struct die_reader *r, const struct abbrevs *a,
                        const struct dw_unit *u, struct cu_die *d)
{
    const uint8_t *p = r->base + u->die;
    uint64_t code, entry = 0;
    bool has_entry = false, has_language = false, high_constant = false;
    const char *unchecked = NULL;
    memset(d, 0, sizeof *d);
    d->language = -1;
    if (r->addr_size != 4 || !spoor_uleb128(&p, r->end, &code) || !code || code > a->ncodes ||
        !a->codes[code - 1].defined)
        return false;
    const struct abbrev_code *c = &a->codes[code - 1];
    if (c->tag != DW_TAG_compile_unit && c->tag != DW_TAG_partial_unit)
        return false;
    const struct elf_section *line = spoor_elf_known_section(e, SEC_DEBUG_LINE);
    for (uint32_t i = 0; i < c->count; i++) {
        const struct abbrev_attr *at = &a->attrs[c->first + i];
        const uint8_t *v = p;
        if (!skip_value(r, at, &p, &unchecked))
            return false;
        bool offset =
            at->form == DW_FORM_sec_offset || (at->form == DW_FORM_data4 && r->version < 4);
        switch (at->name) {
        case DW_AT_low_pc:
            if (!first_u32(&d->has_low, &d->low, at->form == DW_FORM_addr, v))
                return false;
            break;
        case DW_AT_high_pc:
            if (d->has_high)
                break;
            if (at->form == DW_FORM_addr) {
                d->high = spoor_le32(v);
            } else if (at->form == DW_FORM_data1 || at->form == DW_FORM_data2 ||
                       at->form == DW_FORM_data4 || at->form == DW_FORM_data8) {
                d->high = spoor_le_bytes(v, (unsigned)at->size);
                high_constant = true;
            } else if (at->form == DW_FORM_udata && short_udata(v, p, &d->high)) { /* GNU as */
                high_constant = true;
            } else {
                return false;
            }
            d->has_high = true;
            break;
        case DW_AT_entry_pc:
            if (!first_u32(&has_entry, &entry, at->form == DW_FORM_addr, v))
                return false;
            break;
        case DW_AT_ranges:
            if (!first_u32(&d->has_ranges, &d->ranges, offset, v))
                return false;
            break;
        case DW_AT_stmt_list:
            if (!first_u32(&d->has_stmt_list, &d->stmt_list,
                           offset && line && spoor_le32(v) <= line->size, v))
                return false;
            break;
        case DW_AT_comp_dir:
            if (!d->comp_dir &&
                !raw_string(r, &(struct raw_attr){v, at->form, at->value}, &d->comp_dir))
                return false;
            break;
        case DW_AT_language:
            if (!has_language && at->form != DW_FORM_data1 && at->form != DW_FORM_data2)
                return false;
            if (!has_language)
                d->language = (int)spoor_le_bytes(v, (unsigned)at->size);
            has_language = true;
            break;
        case DW_AT_abstract_origin:
        case DW_AT_specification:
        case DW_AT_str_offsets_base:
        case DW_AT_addr_base:
        case DW_AT_rnglists_base:
        case DW_AT_dwo_name:
        case DW_AT_GNU_dwo_name:
        case DW_AT_GNU_dwo_id:
        case DW_AT_GNU_ranges_base:
        case DW_AT_GNU_addr_base: return false;
        default: break;
        }
    }
    if (high_constant && d->has_low)
        d->high += d->low;
    else if (high_constant)
        d->has_high = false; /* dwarf_highpc cannot add it to a low_pc */
    d->base = d->has_low ? d->low : has_entry ? entry : 0;
    return true;
}

/* The code ranges of unit u where .debug_aranges gives none, as spoor_dwarf_units reads them
 * through libdw (die_claims, line_claims), from the unit DIE read as spoor_dwarf_unit_build
 * reads it (read_cu_die, cu_claims) and its line program read by spoor's reader. 2 when they are
 * not read so (libdw must: u's claims are as before), else what spoor_dwarf_units takes from
 * libdw: 0 read, -1 without memory, LINE_UNREADABLE (warned). */
static int own_unit_claims(const spoor_elf *e, struct symbol_tables *t, struct dw_unit *u)
{
    const struct elf_section *info = spoor_elf_known_section(e, SEC_DEBUG_INFO);
    struct unit_header h;
    if (!info || !spoor_unit_header(info, u->header, &h))
        return 2;
    char buf[96];
    int oom = 0, got = 2;
    struct abbrevs ab = {0};
    struct die_reader r = {0};
    struct cu_die d;
    ab.version = h.version; /* as spoor_dwarf_unit_build reads it */
    ab.addr_size = h.addr_size;
    const struct form_entry *forms = unit_forms(e, t, ab.version, ab.addr_size);
    if (!abbrev_problem(e, u->abbrev, &ab, forms, unit_memo(t), buf, sizeof buf, &oom) && !oom &&
        die_reader_init(e, u, &ab, &r) && !ab.twice && read_cu_die(e, &r, &ab, u, &d))
        got = cu_claims(e, r.version, &d, t->keep_zero, &u->claims);
    abbrevs_free(&ab);
    if (oom)
        return -1;
    if (got == 0 && !u->claims.known && d.has_stmt_list) { /* the line program's */
        got = line_claims(e, t, NULL, d.stmt_list, d.comp_dir, &u->claims);
        if (got == LINE_NOT_HANDLED) {
            free(u->claims.ranges);
            memset(&u->claims, 0, sizeof u->claims);
            got = 2;
        }
    }
    return got;
}

/* Ranges add_scope_raw takes at most (more: add_scope does it). */
#define RAW_RANGES 16

/* What add_scope_raw returns for a scope it does not read (not a scope's index, nor add_scope's
 * -1 and -2). */
#define NOT_RAW (-3)

/* add_scope for the fast walk, for a DIE of abbreviation c whose values start at p and whose code
 * is the n ranges pc[2 i] to pc[2 i + 1] (die_pc's, or dwarf_ranges'): the same scope read with
 * the unit's abbreviations instead of through libdw. NOT_RAW when it is not read so: a form or
 * reference it does not read, or a problem (add_scope through libdw decides then, and warns). */
static int add_scope_raw(struct walker *w, const struct die_reader *r, const struct abbrevs *a,
                         const struct raw_attr own[SCOPE_ATTRS], int tag, int32_t parent, int depth,
                         const Dwarf_Addr *pc, size_t n)
{
    struct symbol_tables *t = w->t;
    struct dw_unit *u = w->u;
    struct raw_attr level[SCOPE_ATTRS], names[NAME + 1];
    const struct abbrev_code *tc;
    const uint8_t *tp;
    for (int k = ORIGIN; k <= SPECIFICATION; k++) /* check_origin */
        if (own[k].at && !raw_ref(r, a, &own[k], &tc, &tp))
            return NOT_RAW;
    size_t any = 0; /* the ranges kept, as add_scope keeps them, moved to the front */
    Dwarf_Addr kept[2 * RAW_RANGES];
    for (size_t i = 0; i < n; i++) {
        if (pc[2 * i] >= pc[2 * i + 1] || pc[2 * i + 1] > UINT32_MAX ||
            (pc[2 * i] == 0 && !t->keep_zero))
            continue;
        kept[2 * any] = pc[2 * i];
        kept[2 * any++ + 1] = pc[2 * i + 1];
    }
    if (!any)
        return -2;
    memcpy(names, own, sizeof names); /* scope_attrs */
    memcpy(level, own, SCOPE_ATTRS * sizeof *own);
    for (int chain = 16; chain-- > 0;) {
        if (names[LINKAGE_NAME].at && names[MIPS_LINKAGE_NAME].at && names[NAME].at)
            break;
        const struct raw_attr *ref = level[ORIGIN].at          ? &level[ORIGIN]
                                     : level[SPECIFICATION].at ? &level[SPECIFICATION]
                                                               : NULL;
        if (!ref)
            break;
        if (!raw_ref(r, a, ref, &tc, &tp) || !raw_die(r, a, tc, tp, level, NULL, NULL, NULL))
            return NOT_RAW;
        for (int k = LINKAGE_NAME; k <= NAME; k++)
            if (!names[k].at && level[k].at)
                names[k] = level[k];
    }
    const char *name = NULL; /* scope_name: the first of the names there is */
    int from = NAME;
    for (int k = LINKAGE_NAME; k <= NAME && !name; k++) {
        if (names[k].at && !raw_string(r, &names[k], &name))
            return NOT_RAW;
        from = k;
    }
    uint64_t file = 0, line = 0;
    const char *call_file = NULL;
    uint32_t call_number = 0;
    if (w->defer_files) {
        for (int k = DECL_FILE; k <= CALL_FILE; k++) {
            if (!own[k].at || (k == CALL_FILE && tag != DW_TAG_inlined_subroutine))
                continue;
            if (!raw_udata(r, &own[k], &file) || file >= UINT32_MAX)
                return NOT_RAW;
            w->max_file = w->any_file && w->max_file > file ? w->max_file : file;
            w->any_file = true;
            if (k == CALL_FILE)
                call_number = (uint32_t)file + 1;
        }
        if (tag == DW_TAG_inlined_subroutine && own[CALL_LINE].at &&
            !raw_udata(r, &own[CALL_LINE], &line))
            return NOT_RAW;
    } else if (w->files && own[DECL_FILE].at &&
               (!raw_udata(r, &own[DECL_FILE], &file) || file >= w->nfiles))
        return NOT_RAW;
    if (tag == DW_TAG_inlined_subroutine && !w->defer_files) {
        if (w->files && own[CALL_FILE].at) {
            if (!raw_udata(r, &own[CALL_FILE], &file) || file >= w->nfiles)
                return NOT_RAW;
            call_file = w->files[file];
        }
        if (own[CALL_LINE].at && !raw_udata(r, &own[CALL_LINE], &line))
            return NOT_RAW;
    }
    if (from == NAME && tag == DW_TAG_subprogram) {
        const struct elf_symbol *sym = spoor_elf_symbol_at(w->e, (uint32_t)kept[0]);
        if (sym && sym->start == kept[0] && (!name || strcmp(sym->name, name)) &&
            mangling_language(w))
            name = sym->name;
    }
    if (spoor_grow((void **)&u->ranges, &w->cap_ranges, u->nranges + any, sizeof *u->ranges) ||
        spoor_grow((void **)&t->scopes, &t->cap_scopes, t->nscopes + 1, sizeof *t->scopes) ||
        (w->defer_files && spoor_grow((void **)&w->call_files, &w->cap_call_files,
                                      t->nscopes + 1 - w->first_scope, sizeof *w->call_files)))
        return -1;
    if (w->defer_files)
        w->call_files[t->nscopes - w->first_scope] = call_number;
    int32_t idx = (int32_t)t->nscopes;
    for (size_t i = 0; i < any; i++, u->nranges++) {
        uint32_t lo = (uint32_t)kept[2 * i], hi = (uint32_t)kept[2 * i + 1];
        u->ranges[u->nranges] =
            (struct dw_range){lo, hi, lo, idx, depth, w->unit, (uint32_t)u->nranges};
    }
    struct dw_scope *s = &t->scopes[t->nscopes++];
    s->name = name;
    s->parent = parent;
    s->call_file = call_file;
    s->call_line = (unsigned)line;
    return idx;
}

/* The ranges of a DIE whose code ranges are its DW_AT_ranges alone (no low_pc, no high_pc), read
 * as dwarf_ranges reads them, into pc (as walk_child collects them); 0 when they are not read so
 * (then libdw does it), or when there are RAW_RANGES or more (libdw's loop gives up there). */
static size_t own_ranges(const struct walker *w, const struct die_reader *r,
                         const struct raw_attr *ranges, Dwarf_Addr *pc)
{
    struct range_list l;
    uint64_t lo, hi;
    int got;
    size_t n = 0;
    if (!(ranges->form == DW_FORM_sec_offset ||
          (ranges->form == DW_FORM_data4 && r->version < 4)) ||
        !range_list_start(w->e, r->version, spoor_le32(ranges->at), w->cu->base, &l))
        return 0;
    while ((got = range_list_next(&l, &lo, &hi)) > 0) {
        if (n == RAW_RANGES - 1)
            return 0;
        pc[2 * n] = lo;
        pc[2 * n++ + 1] = hi;
    }
    return got < 0 ? 0 : n;
}

/* A DIE open in the fast walk: whether its children are walked, and as walk() would walk them. */
struct walk_frame {
    bool walked, in_function;
    int32_t scope;
    int depth;
};

/* How walk() takes the children of a DIE that is no function or inlined instance, of tag given,
 * under the walked DIE top (walk_child for such a DIE). */
static inline struct walk_frame plain_child(const struct walk_frame *top, int tag)
{
    bool type =
        tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
    return (struct walk_frame){may_hold_code(tag) && !(type && !top->in_function),
                               tag == DW_TAG_lexical_block, top->scope, top->depth};
}

/* One DIE of abbreviation c at die_at (its values at p) under the open DIE top, as walk() takes
 * it: its scope added when it is a function or inlined instance, and into *child how its own
 * children are walked. With libdw false, a DIE add_scope_raw does not read is not read through
 * libdw either. 0: done; -1 without memory; 1: a problem (w->bailed, nothing warned); 3: not
 * read (libdw false). */
static int walk_child(struct walker *w, const struct die_reader *r, const struct abbrevs *a,
                      const struct abbrev_code *c, const uint8_t *die_at, const uint8_t *p,
                      const struct walk_frame *top, struct walk_frame *child, bool libdw)
{
    int tag = (int)c->tag;
    *child = (struct walk_frame){false, false, top->scope, top->depth};
    if (!top->walked)
        return 0;
    bool descend = may_hold_code(tag);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
        Dwarf *dwarf = spoor_elf_libdw(w->e);
        Dwarf_Die die;
        Dwarf_Addr pc[2 * RAW_RANGES];
        int32_t parent = tag == DW_TAG_subprogram ? -1 : top->scope;
        struct raw_attr own[SCOPE_ATTRS], ranges = {0};
        int known = 0, got = NOT_RAW;
        bool readable = raw_die(r, a, c, p, own, pc, &known, &ranges), have_die = false;
        size_t n = (size_t)known;
        if (readable && !known && w->cu && ranges.at) /* DW_AT_ranges alone: read here */
            n = own_ranges(w, r, &ranges, pc);
        if (readable && !known && !n) { /* DW_AT_ranges: read by libdw */
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            if (!dwarf_offdie(dwarf, (Dwarf_Off)(die_at - r->base), &die))
                return libdw ? 1 : 3;
            have_die = true;
            while (n < RAW_RANGES && (off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
                pc[2 * n] = lo;
                pc[2 * n++ + 1] = hi;
            }
            if (off) /* unreadable, or more than RAW_RANGES */
                n = 0;
        }
        if (n)
            got = add_scope_raw(w, r, a, own, tag, parent, top->depth, pc, n);
        if (got == NOT_RAW && !libdw)
            return 3;
        if (got == NOT_RAW && !have_die &&
            !dwarf_offdie(dwarf, (Dwarf_Off)(die_at - r->base), &die))
            return 1;
        if (got == NOT_RAW)
            got = add_scope(w, &die, tag, parent, top->depth, known ? pc : NULL);
        if (got == -1 || w->bailed)
            return got == -1 ? -1 : 1;
        if (got == -2 && c->skips)
            descend = false; /* a declaration, or code the linker discarded */
        else if (got >= 0) {
            child->scope = got;
            child->depth = top->depth + 1;
        }
    } else if ((tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                tag == DW_TAG_union_type) &&
               !top->in_function) {
        descend = false;
    }
    child->walked = descend;
    child->in_function =
        tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine;
    return 0;
}

/* Every DIE of the unit read as binutils' addr2line reads them (the walk through libdw reads
 * only those that can hold code, and skips the rest by their sibling references): each
 * abbreviation code in the unit's table, no DIE or string offset past its section, and the tree
 * ending where the unit ends (no DIE past the end, no end-of-siblings marker missing, nothing but
 * padding left after it). NULL when all is well, else what is wrong, and *at the DIE. Also
 * *siblings_ok: every DW_AT_sibling names the DIE after the subtree of its own, as the fast walk
 * (which follows them as libdw does) needs. With w not NULL, the DIEs are walked on the way as
 * fast_walk walks them (add_scope_raw with the files deferred: w->defer_files): *walked 0 when
 * all the scopes were taken so (they count only when the tree is whole and the siblings are
 * right), else fast_walk must do it (-1 without memory). */
static inline __attribute__((always_inline)) const char *
die_tree_scan(const struct die_reader *r, const struct dw_unit *u, const struct abbrevs *a,
              uint64_t *at, bool *siblings_ok, struct walker *w, int *walked)
{
    const uint8_t *p = r->base + u->die, *end = r->end;
    /* in locals: the byte stores into starts below would have them read again per DIE */
    const struct abbrev_code *const codes = a->codes;
    const uint64_t ncodes = a->ncodes;
    uint8_t *const starts = r->starts, stamp = r->stamp;
    const uint8_t *const hdr = r->hdr;
    const char *problem = NULL;
    struct scan_frame {         /* per open DIE with children */
        uint64_t expect;        /* where its DW_AT_sibling points */
        struct walk_frame walk; /* how the walk takes it */
    } *frames = NULL;
    size_t depth = 0, cap = 0;
    *siblings_ok = true;
    *walked = w ? 0 : 1;
    do {
        uint64_t code, sibling;
        const uint8_t *die_at = p;
        *at = (uint64_t)(p - r->base);
        if (p >= end) {
            problem = "the DIE tree runs past the unit's end (an end-of-siblings marker missing)";
            break;
        }
        if (!spoor_uleb128(&p, end, &code)) {
            problem = "a DIE runs past the unit's end";
            break;
        }
        if (!code) {
            if (!depth) { /* the unit DIE itself */
                problem = "an end-of-siblings marker where the unit DIE should be";
                break;
            }
            depth--;
            if (*siblings_ok && frames[depth].expect != UINT64_MAX &&
                frames[depth].expect != (uint64_t)(p - r->base))
                *siblings_ok = false;
            continue;
        }
        if (code > ncodes || !codes[code - 1].defined) {
            problem = "abbreviation code not in the unit's table";
            break;
        }
        const struct abbrev_code *c = &codes[code - 1];
        if (starts)
            starts[die_at - hdr] = stamp;
        if (c->children && spoor_grow((void **)&frames, &cap, depth + 1, sizeof *frames)) {
            *siblings_ok = false; /* no memory: the siblings are not checked, no walk */
            *walked = *walked ? *walked : -1;
        }
        bool scope = c->scope;
        if (!*walked && (scope || c->children)) { /* (a leaf of no scope changes nothing) */
            const struct walk_frame *top = depth ? &frames[depth - 1].walk : NULL;
            if (top && top->walked && scope) {
                struct walk_frame child;
                *walked = walk_child(w, r, a, c, die_at, p, top, &child, false);
                if (c->children)
                    frames[depth].walk = child;
            } else if (top && top->walked && c->children) { /* walk_child's other DIEs */
                frames[depth].walk = plain_child(top, (int)c->tag);
            } else if (c->children) {
                frames[depth].walk =
                    top ? (struct walk_frame){false, false, top->scope, top->depth}
                        : (struct walk_frame){may_hold_code((int)c->tag), false, -1, 0};
            }
        }
        if (!skip_attrs(r, a, c, &p, depth ? &sibling : NULL, &problem)) {
            problem = "a DIE runs past the unit's end";
            break;
        }
        if (problem)
            break;
        if (!depth)
            sibling = UINT64_MAX; /* the unit DIE's is not followed */
        else if (c->sibling >= 0 && sibling == UINT64_MAX)
            *siblings_ok = false; /* not a unit-relative reference */
        if (c->children) {
            if (*siblings_ok)
                frames[depth].expect = sibling;
            depth++;
        } else if (sibling != UINT64_MAX && sibling != (uint64_t)(p - r->base)) {
            *siblings_ok = false;
        }
    } while (depth);
    free(frames);
    for (size_t i = 0; !*walked && r->later && i < r->later->n; i++) {
        uint64_t off = r->later->off[i];
        if (r->starts[off] != r->stamp)
            *walked = 3; /* a reference into the middle of a DIE */
    }
    if (problem)
        return problem;
    *at = (uint64_t)(p - r->base);
    for (; p < end; p++)
        if (*p)
            return "bytes after the end of the DIE tree (an end-of-siblings marker too early)";
    return NULL;
}

/* die_tree_scan, its results through locals. */
static const char *die_tree_problem(const struct die_reader *r, const struct dw_unit *u,
                                    const struct abbrevs *a, uint64_t *at, bool *siblings_ok,
                                    struct walker *w, int *walked)
{
    uint64_t where = 0; /* the scan's results in locals (kept in registers), then handed out */
    bool ok = true;
    int done = 0;
    const char *problem = die_tree_scan(r, u, a, &where, &ok, w, &done);
    *at = where;
    *siblings_ok = ok;
    *walked = done;
    return problem;
}

/* walk() over the unit's DIEs read with its abbreviations instead of through libdw, for a unit
 * die_tree_problem found whole (so every code is in the table and every sibling reference
 * right): the same scopes in the same order, each through add_scope on libdw's DIE. Subtrees
 * not walked are skipped by their sibling references, as libdw skips them. 0: done; -1 without
 * memory; 1: add_scope found a problem (w->bailed, nothing warned): walk() must do it. */
static int fast_walk(struct walker *w, const struct die_reader *r, const struct abbrevs *a)
{
    const uint8_t *p = r->base + w->u->die;
    uint64_t code, sibling;
    struct walk_frame *stack = NULL;
    size_t depth = 0, cap = 0;
    int result = 0;
    if (!spoor_uleb128(&p, r->end, &code) || !code || code > a->ncodes)
        return 1;
    const struct abbrev_code *c = &a->codes[code - 1];
    if (!c->children || !may_hold_code((int)c->tag) || !skip_attrs(r, a, c, &p, NULL, NULL))
        return 0;
    if (spoor_grow((void **)&stack, &cap, 1, sizeof *stack))
        return -1;
    stack[depth++] = (struct walk_frame){true, false, -1, 0};
    w->tentative = true;
    while (depth && !result) {
        const uint8_t *die_at = p;
        if (!spoor_uleb128(&p, r->end, &code)) {
            result = 1;
            break;
        }
        if (!code) {
            depth--;
            continue;
        }
        c = &a->codes[code - 1];
        struct walk_frame child;
        int got = walk_child(w, r, a, c, die_at, p, &stack[depth - 1], &child, true);
        if (got) {
            result = got;
            break;
        }
        if (!skip_attrs(r, a, c, &p, &sibling, NULL)) {
            result = 1;
            break;
        }
        if (!c->children)
            continue;
        if (!child.walked && sibling != UINT64_MAX) { /* checked by die_tree_problem */
            p = r->base + sibling;
            continue;
        }
        if (spoor_grow((void **)&stack, &cap, depth + 1, sizeof *stack)) {
            result = -1;
            break;
        }
        stack[depth++] = child;
    }
    w->tentative = false;
    free(stack);
    return result;
}

/* The unit DIE through libdw into *cu, once (*have); NULL when libdw cannot read it. */
static Dwarf_Die *libdw_cu(const spoor_elf *e, const struct dw_unit *u, Dwarf_Die *cu, bool *have)
{
    if (!*have)
        *have = dwarf_offdie(spoor_elf_libdw(e), u->die, cu) && dwarf_tag(cu) != DW_TAG_invalid;
    return *have ? cu : NULL;
}

int spoor_dwarf_unit_build(const spoor_elf *e, struct symbol_tables *t, size_t unit)
{
    struct dw_unit *u = &t->units[unit];
    if (u->built)
        return 0;
    dwarf_errno();                      /* no stale message in this unit's warnings */
    struct unit_lines lines = t->lines; /* its arrays reused, empty */
    lines.nfiles = lines.ndirs = 0;
    struct unit_claims code = {0}; /* the DIE's ranges decide which line rows are kept */
    size_t cap_rows = 0;
    size_t nscopes = t->nscopes;
    struct walker w = {
        .e = e, .t = t, .u = u, .unit = (uint32_t)unit, .mangling = -1, .first_scope = nscopes};
    char buf[96];
    struct abbrevs ab = {0};
    struct die_reader reader = {0};
    bool scannable = false, siblings_ok = false;
    int oom = 0, scanned = 1;
    struct later_refs later = {0};
    const struct elf_section *info = spoor_elf_known_section(e, SEC_DEBUG_INFO);
    struct unit_header h;
    if (info && spoor_unit_header(info, u->header, &h)) { /* as die_reader_init reads it */
        ab.version = h.version;
        ab.addr_size = h.addr_size;
    }
    const struct form_entry *forms = unit_forms(e, t, ab.version, ab.addr_size);
    const char *abbrevs =
                   abbrev_problem(e, u->abbrev, &ab, forms, unit_memo(t), buf, sizeof buf, &oom),
               *tree = NULL;
    uint64_t at = 0;
    /* the unit DIE read with the abbreviations when they are whole, else through libdw (its
     * first look at a unit DIE reads all of them again): nothing to take from the unit when
     * libdw cannot read it */
    Dwarf_Die cu;
    bool have_cu = false;
    struct cu_die own_cu;
    scannable = !abbrevs && !oom && die_reader_init(e, u, &ab, &reader);
    if (scannable && !ab.twice && read_cu_die(e, &reader, &ab, u, &own_cu)) {
        w.cu = &own_cu;
        w.mangling = language_mangles(own_cu.language);
    } else if (!libdw_cu(e, u, &cu, &have_cu)) {
        unit_die_unreadable(e, u);
        abbrevs_free(&ab);
        u->built = true;
        t->units_built++;
        return 0;
    }
    if (abbrevs) { /* the walk goes on: libdw stops at the first DIE it cannot read */
        spoor_elf_warn(e,
                       ".debug_info unit at 0x%llx: .debug_abbrev at 0x%llx: %s: DIEs using it "
                       "unreadable",
                       (unsigned long long)u->header, (unsigned long long)u->abbrev, abbrevs);
        u->damaged = true;
    } else if (scannable && (reader.starts = unit_starts(t, (size_t)(reader.end - reader.hdr) + 1,
                                                         &reader.stamp),
                             w.defer_files = true, reader.later = &later,
                             (tree = die_tree_problem(&reader, u, &ab, &at, &siblings_ok, &w,
                                                      &scanned)) != NULL)) {
        spoor_elf_warn(e,
                       ".debug_info unit at 0x%llx: DIE at 0x%llx: %s (invalid DWARF): the "
                       "unit's functions and names may be wrong",
                       (unsigned long long)u->header, (unsigned long long)at, tree);
        u->damaged = true;
    }
    bool fast = !abbrevs && !oom && scannable && !tree && siblings_ok;
    if (!fast || scanned) { /* the scan's walk does not count */
        t->nscopes = nscopes;
        u->nranges = 0;
    }
    w.defer_files = false;
    reader.later = NULL;
    dwarf_errno(); /* what libdw said in the scan's walk is no unit warning's (it said nothing
                    * before: the unit DIE was read) */
    free(later.off);
    /* the clean case (the scan's walk took the scopes) reads the unit DIE's claims and line
     * program as read_cu_die read them; else, and where they are not read so, libdw does */
    bool own = w.cu && fast && !scanned;
    int claims = own ? cu_claims(e, reader.version, w.cu, t->keep_zero, &code) : 2, rows = 0,
        walked = 0;
    if (claims == 2)
        claims = libdw_cu(e, u, &cu, &have_cu) ? die_claims(e, u->header, &cu, t->keep_zero, &code)
                                               : (unit_die_unreadable(e, u), 1);
    if (claims >= 0 && own && !w.cu->has_stmt_list)
        lines.nfiles = 0; /* a unit without a line program */
    else if (claims >= 0 && own)
        rows = spoor_line_rows_at(e, &t->names, w.cu->stmt_list, w.cu->comp_dir, NULL, &code,
                                  t->keep_zero, &lines, &u->rows, &u->nrows, &cap_rows);
    else if (claims >= 0)
        rows = LINE_NOT_HANDLED;
    if (rows == LINE_NOT_HANDLED && !libdw_cu(e, u, &cu, &have_cu))
        rows = (unit_die_unreadable(e, u), LINE_UNREADABLE);
    else if (rows == LINE_NOT_HANDLED && own) /* the program read once: libdw reads it now */
        rows = spoor_line_rows_libdw(e, w.cu->stmt_list, &cu, &code, t->keep_zero, &lines, &u->rows,
                                     &u->nrows, &cap_rows);
    else if (rows == LINE_NOT_HANDLED)
        rows = spoor_line_rows(e, &t->names, &cu, &code, t->keep_zero, &lines, &u->rows, &u->nrows,
                               &cap_rows);
    if (claims >= 0 && rows >= 0) {
        w.files = lines.nfiles ? lines.files : NULL;
        w.nfiles = lines.nfiles;
        if (fast && !scanned && w.files && w.any_file && w.max_file >= w.nfiles) {
            t->nscopes = nscopes; /* a file number past the table: fast_walk finds it */
            u->nranges = 0;
            scanned = 1;
        }
        for (size_t i = nscopes; fast && !scanned && i < t->nscopes; i++) {
            uint32_t k = w.call_files[i - nscopes];
            t->scopes[i].call_file = w.files && k ? w.files[k - 1] : NULL;
        }
        walked = !fast ? 1 : !scanned ? 0 : fast_walk(&w, &reader, &ab);
        if (walked == 1) { /* not read so, or a problem for walk() to warn about */
            t->nscopes = nscopes;
            u->nranges = 0;
            w.bailed = false;
            if (libdw_cu(e, u, &cu, &have_cu))
                walked = walk(&w, &cu, -1, 0);
            else
                unit_die_unreadable(e, u);
        }
    }
    abbrevs_free(&ab);
    free(w.call_files);
    t->lines = lines;
    if (claims < 0 || rows < 0 || walked < 0) { /* out of memory: the unit stays unbuilt */
        free(code.ranges);
        free(u->ranges);
        free(u->rows);
        u->ranges = NULL;
        u->rows = NULL;
        u->nranges = u->nrows = 0;
        t->nscopes = nscopes;
        return -1;
    }
    if (claims || rows || walked)
        u->damaged = true;
    u->code = code;
    u->built = true;
    t->units_built++;
    return 0;
}

void spoor_dwarf_units_free(struct symbol_tables *t)
{
    for (size_t i = 0; i < t->nunits; i++) {
        free(t->units[i].claims.ranges);
        free(t->units[i].code.ranges);
        free(t->units[i].ranges);
        free(t->units[i].rows);
    }
    free(t->units);
    free(t->scopes);
    free_names(t->names);
    spoor_unit_lines_free(&t->lines);
    free(t->starts);
    abbrev_memo_free(t->abbrev_memo);
}
