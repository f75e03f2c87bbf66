/* DWARF call sites read with libdw (DW_TAG_call_site and DW_TAG_GNU_call_site), and the chains
 * of tail calls between a frame and its caller that gdb rebuilds from them
 * (gdb/dwarf2/loc.c call_site_find_chain, gdb/dwarf2/frame-tailcall.c).
 *
 * A call site is the return address of a call (DW_AT_call_return_pc in DWARF 5, DW_AT_low_pc
 * of the GNU extension), the function called (DW_AT_call_origin / DW_AT_abstract_origin: a
 * DIE with code, or one whose out-of-line instance or symbol has it; unknown for an indirect
 * call, DW_AT_call_target), whether it is a tail call (DW_AT_call_tail_call /
 * DW_AT_GNU_tail_call) and the function that holds it (the enclosing DW_TAG_subprogram,
 * inlined code included). */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "base/partition_point.h"
#include "elf/dwarf_call_sites.h"
#include "elf/elf_internal.h"
#include "util/grow.h"

#define TAG_GNU_CALL_SITE 0x4109  /* DW_TAG_GNU_call_site */
#define AT_GNU_TAIL_CALL 0x2115   /* DW_AT_GNU_tail_call */
#define AT_GNU_CALL_TARGET 0x2113 /* DW_AT_GNU_call_site_target */
#define MAX_DIE_DEPTH 64
#define SEARCH_BUDGET 4096 /* call sites the chain search may enter for one question */

struct call_site {
    uint32_t return_pc;
    uint32_t function; /* entry of the function holding it */
    uint32_t target;   /* entry of the function called; 0 when not known */
    bool tail;
    /* while building: the origin DIE to resolve (0 none) and its name */
    Dwarf_Off origin;
    const char *origin_name;
};

struct entry_of { /* a DIE (a concrete subprogram, or its abstract origin/specification) */
    Dwarf_Off die;
    uint32_t entry;
};

struct tail_call {
    uint32_t function;
    size_t site; /* index into sites */
};

struct call_site_table {
    struct call_site *sites; /* sorted by return_pc */
    size_t nsites;
    struct tail_call *tails; /* the tail-call sites, sorted by the function holding them */
    size_t ntails;
    uint32_t *functions; /* every function of the units read, sorted, unique */
    size_t nfunctions;
    uint32_t *targets; /* every known target, sorted */
    size_t ntargets;
    size_t units_read;
    /* building */
    struct entry_of *entries;
    size_t nentries, cap_entries, cap_sites;
};

static void release(struct call_site_table *t)
{
    if (!t)
        return;
    free(t->sites);
    free(t->tails);
    free(t->functions);
    free(t->targets);
    free(t->entries);
    free(t);
}

/* ---------------------------------------------------------------- .debug_abbrev */

struct abbrev_tables { /* offsets of the abbreviation tables that declare a call-site tag */
    uint64_t *with_call_sites;
    size_t n, cap;
    bool unknown; /* no readable .debug_abbrev: every unit is walked */
};

/* Scans .debug_abbrev without libdw: each table is a list of (code, tag, children flag,
 * (attribute, form[, implicit constant])... 0 0) ended by code 0. */
static bool scan_abbrevs(const spoor_elf *e, struct abbrev_tables *a)
{
    const struct elf_section *s = spoor_elf_debug_section(e, ".debug_abbrev");
    if (!s) {
        a->unknown = true;
        return true;
    }
    const uint8_t *p = s->data, *end = s->data + s->size;
    while (p < end) {
        uint64_t table = (uint64_t)(p - s->data), code, tag, name, form, skip;
        bool has = false;
        while (spoor_uleb128(&p, end, &code) && code != 0) {
            if (!spoor_uleb128(&p, end, &tag) || p >= end) {
                a->unknown = true;
                return true;
            }
            p++; /* DW_CHILDREN_yes/no */
            has |= tag == DW_TAG_call_site || tag == TAG_GNU_CALL_SITE;
            do {
                if (!spoor_uleb128(&p, end, &name) || !spoor_uleb128(&p, end, &form) ||
                    (form == DW_FORM_implicit_const && !spoor_uleb128(&p, end, &skip))) {
                    a->unknown = true;
                    return true;
                }
            } while (name != 0 || form != 0);
        }
        if (has) {
            if (spoor_grow((void **)&a->with_call_sites, &a->cap, a->n + 1,
                           sizeof *a->with_call_sites))
                return false;
            a->with_call_sites[a->n++] = table;
        }
    }
    return true;
}

static bool abbrevs_have_call_sites(const struct abbrev_tables *a, Dwarf_Off offset)
{
    if (a->unknown)
        return true;
    for (size_t i = 0; i < a->n; i++)
        if (a->with_call_sites[i] == offset)
            return true;
    return false;
}

/* ---------------------------------------------------------------- reading the DIEs */

/* Where a subprogram's code starts: DW_AT_entry_pc, DW_AT_low_pc, or its first range; 0 for a
 * declaration, an abstract instance or code the linker discarded (no function symbol starts
 * there). */
static uint32_t code_entry(const spoor_elf *e, Dwarf_Die *die)
{
    Dwarf_Addr pc = 0;
    if (dwarf_entrypc(die, &pc) != 0) {
        Dwarf_Addr base, lo, hi;
        if (dwarf_ranges(die, 0, &base, &lo, &hi) <= 0)
            return 0;
        pc = lo;
    }
    if (pc == 0 || pc > UINT32_MAX)
        return 0;
    const struct elf_symbol *sym = spoor_elf_symbol_at(e, (uint32_t)pc);
    if (e->nsymbols && (!sym || sym->start != (uint32_t)pc))
        return 0;
    return (uint32_t)pc;
}

static bool add_entry(struct call_site_table *t, Dwarf_Off die, uint32_t entry)
{
    if (spoor_grow((void **)&t->entries, &t->cap_entries, t->nentries + 1, sizeof *t->entries))
        return false;
    t->entries[t->nentries++] = (struct entry_of){die, entry};
    return true;
}

/* A subprogram with code: its DIE and the DIEs it completes (abstract origin, specification)
 * map to its entry. */
static bool add_function(struct call_site_table *t, Dwarf_Die *die, uint32_t entry)
{
    if (!add_entry(t, dwarf_dieoffset(die), entry))
        return false;
    static const int links[] = {DW_AT_abstract_origin, DW_AT_specification};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        Dwarf_Attribute attr;
        Dwarf_Die other;
        if (dwarf_attr(die, links[i], &attr) && dwarf_formref_die(&attr, &other) &&
            !add_entry(t, dwarf_dieoffset(&other), entry))
            return false;
    }
    return true;
}

static bool add_call_site(const spoor_elf *e, struct call_site_table *t, Dwarf_Die *die,
                          uint32_t function)
{
    Dwarf_Attribute attr;
    Dwarf_Addr pc;
    if ((!dwarf_attr(die, DW_AT_call_return_pc, &attr) || dwarf_formaddr(&attr, &pc) != 0) &&
        (!dwarf_attr(die, DW_AT_low_pc, &attr) || dwarf_formaddr(&attr, &pc) != 0))
        return true; /* no return address: nothing to find it by */
    if (pc == 0 || pc > UINT32_MAX)
        return true;
    struct call_site site = {.return_pc = (uint32_t)pc, .function = function};
    bool flag = false;
    site.tail =
        (dwarf_attr(die, DW_AT_call_tail_call, &attr) && !dwarf_formflag(&attr, &flag) && flag) ||
        (dwarf_attr(die, AT_GNU_TAIL_CALL, &attr) && !dwarf_formflag(&attr, &flag) && flag);
    Dwarf_Die origin;
    if (!dwarf_hasattr(die, DW_AT_call_target) && !dwarf_hasattr(die, AT_GNU_CALL_TARGET) &&
        ((dwarf_attr(die, DW_AT_call_origin, &attr) && dwarf_formref_die(&attr, &origin)) ||
         (dwarf_attr(die, DW_AT_abstract_origin, &attr) && dwarf_formref_die(&attr, &origin)))) {
        site.target = code_entry(e, &origin);
        if (!site.target) { /* a declaration or an abstract instance: resolved at the end */
            site.origin = dwarf_dieoffset(&origin);
            site.origin_name =
                dwarf_formstring(dwarf_attr_integrate(&origin, DW_AT_linkage_name, &attr));
            if (!site.origin_name)
                site.origin_name = dwarf_diename(&origin);
        }
    }
    if (spoor_grow((void **)&t->sites, &t->cap_sites, t->nsites + 1, sizeof *t->sites))
        return false;
    t->sites[t->nsites++] = site;
    return true;
}

/* Walks a DIE's children; function is the entry of the enclosing concrete subprogram. */
static bool walk(const spoor_elf *e, struct call_site_table *t, Dwarf_Die *die, uint32_t function,
                 int depth)
{
    Dwarf_Die child;
    if (depth > MAX_DIE_DEPTH || dwarf_haschildren(die) <= 0 || dwarf_child(die, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child);
        uint32_t inner = function;
        switch (tag) {
        case DW_TAG_call_site:
        case TAG_GNU_CALL_SITE:
            if (function && !add_call_site(e, t, &child, function))
                return false;
            continue; /* its children are parameters */
        case DW_TAG_subprogram:
            inner = code_entry(e, &child);
            if (inner && !add_function(t, &child, inner))
                return false;
            break;
        case DW_TAG_inlined_subroutine:
        case DW_TAG_lexical_block:
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type: break;
        default: continue; /* types, variables, parameters: no code */
        }
        if (!walk(e, t, &child, inner, depth + 1))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry_of *x = a, *y = b;
    return x->die < y->die ? -1 : x->die > y->die;
}

static int cmp_site(const void *a, const void *b)
{
    const struct call_site *x = a, *y = b;
    return x->return_pc < y->return_pc ? -1 : x->return_pc > y->return_pc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The target of a call whose origin DIE has no code of its own: the one out-of-line instance
 * that completes it, else the function symbol of its name; 0 when neither is unique. */
static uint32_t resolve_target(const spoor_elf *e, const struct call_site_table *t,
                               const struct call_site *s)
{
    struct entry_of key = {s->origin, 0};
    const struct entry_of *hit =
        t->nentries ? bsearch(&key, t->entries, t->nentries, sizeof *t->entries, cmp_entry) : NULL;
    if (hit) {
        while (hit > t->entries && hit[-1].die == s->origin)
            hit--;
        uint32_t entry = hit->entry;
        for (; hit < t->entries + t->nentries && hit->die == s->origin; hit++)
            if (hit->entry != entry)
                return 0; /* clones of one function: which one is not known */
        return entry;
    }
    uint32_t addr, size;
    if (s->origin_name && spoor_elf_symbol(e, s->origin_name, &addr, &size))
        return addr & ~1u;
    return 0;
}

static int cmp_tail(const void *a, const void *b)
{
    const struct tail_call *x = a, *y = b;
    return x->function < y->function ? -1 : x->function > y->function;
}

/* Sorts and removes repeats; returns the new count. */
static size_t sort_unique(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* The tail calls by function, the functions with call sites and the set of targets. */
static bool index_sites(struct call_site_table *t)
{
    size_t n = t->nsites > t->nentries ? t->nsites : t->nentries;
    n = n ? n : 1;
    if (t->nsites)
        qsort(t->sites, t->nsites, sizeof *t->sites, cmp_site);
    t->tails = malloc(n * sizeof *t->tails);
    t->targets = malloc(n * sizeof *t->targets);
    t->functions = malloc(n * sizeof *t->functions);
    if (!t->tails || !t->targets || !t->functions)
        return false;
    for (size_t i = 0; i < t->nsites; i++) {
        if (t->sites[i].tail)
            t->tails[t->ntails++] = (struct tail_call){t->sites[i].function, i};
        if (t->sites[i].target)
            t->targets[t->ntargets++] = t->sites[i].target;
    }
    for (size_t i = 0; i < t->nentries && t->nfunctions < n; i++)
        t->functions[t->nfunctions++] = t->entries[i].entry;
    qsort(t->tails, t->ntails, sizeof *t->tails, cmp_tail);
    t->ntargets = sort_unique(t->targets, t->ntargets);
    t->nfunctions = sort_unique(t->functions, t->nfunctions);
    return true;
}

static struct call_site_table *build(const spoor_elf *e)
{
    struct call_site_table *t = calloc(1, sizeof *t);
    struct abbrev_tables abbrevs = {0};
    Dwarf *dwarf = spoor_elf_libdw(e);
    if (!t || !scan_abbrevs(e, &abbrevs))
        goto fail;
    if (dwarf && (abbrevs.unknown || abbrevs.n > 0)) {
        Dwarf_Off off = 0, next;
        size_t header;
        Dwarf_Off abbrev_offset;
        while (dwarf_next_unit(dwarf, off, &next, &header, NULL, &abbrev_offset, NULL, NULL, NULL,
                               NULL) == 0) {
            Dwarf_Die cu;
            if (abbrevs_have_call_sites(&abbrevs, abbrev_offset) &&
                dwarf_offdie(dwarf, off + header, &cu)) {
                t->units_read++;
                if (!walk(e, t, &cu, 0, 0))
                    goto fail;
            }
            off = next;
        }
    }
    if (t->nentries)
        qsort(t->entries, t->nentries, sizeof *t->entries, cmp_entry);
    for (size_t i = 0; i < t->nsites; i++)
        if (!t->sites[i].target && t->sites[i].origin)
            t->sites[i].target = resolve_target(e, t, &t->sites[i]);
    if (!index_sites(t))
        goto fail;
    free(t->entries);
    t->entries = NULL;
    free(abbrevs.with_call_sites);
    return t;
fail:
    free(abbrevs.with_call_sites);
    release(t);
    return NULL;
}

/* The table, built on first use (through a const ELF, like the symbolizer's tables). NULL
 * only without memory. */
static const struct call_site_table *table(const spoor_elf *ce)
{
    spoor_elf *e = (spoor_elf *)ce;
    if (!e->call_sites) {
        e->call_sites = build(e);
        e->release_call_sites = release;
    }
    return e->call_sites;
}

/* ---------------------------------------------------------------- questions */

static const struct call_site *site_at(const struct call_site_table *t, uint32_t return_pc)
{
    struct call_site key = {.return_pc = return_pc};
    return bsearch(&key, t->sites, t->nsites, sizeof *t->sites, cmp_site);
}

/* The tail-call sites of the function at entry: [*first, *first + *n) of t->tails. */
struct tails_key {
    const struct call_site_table *t;
    uint32_t entry;
};

static bool tail_before(const void *ctx, size_t i)
{
    const struct tails_key *k = ctx;
    return k->t->tails[i].function < k->entry;
}

static void tails_of(const struct call_site_table *t, uint32_t entry, size_t *first, size_t *n)
{
    const struct tails_key key = {t, entry};
    size_t lo = spoor_partition_point(0, t->ntails, tail_before, &key), hi = lo;
    *first = lo;
    while (hi < t->ntails && t->tails[hi].function == entry)
        hi++;
    *n = hi - lo;
}

/* True when the function at entry is in a unit that was read (one with call-site
 * information), so an empty list of tail calls means it makes none. */
static bool function_known(const struct call_site_table *t, uint32_t entry)
{
    return bsearch(&entry, t->functions, t->nfunctions, sizeof *t->functions, cmp_u32) != NULL;
}

struct search {
    const struct call_site_table *t;
    uint32_t callee;
    size_t path[CALL_SITE_CHAIN_MAX]; /* indexes into t->sites, outermost first */
    size_t depth;
    size_t budget;
    bool unsure; /* a way on could not be followed */
    /* the chains found, folded as gdb folds them: the common head (callers) and tail (callees)
     * of all of them */
    size_t nchains;
    size_t first[CALL_SITE_CHAIN_MAX], length, callers, callees;
};

static void found(struct search *s)
{
    if (s->nchains++ == 0) {
        memcpy(s->first, s->path, s->depth * sizeof *s->path);
        s->length = s->callers = s->callees = s->depth;
        return;
    }
    size_t n = s->callers < s->depth ? s->callers : s->depth;
    s->callers = n;
    for (size_t i = 0; i < n; i++)
        if (s->first[i] != s->path[i]) {
            s->callers = i;
            break;
        }
    n = s->callees < s->depth ? s->callees : s->depth;
    s->callees = n;
    for (size_t i = 0; i < n; i++)
        if (s->first[s->length - 1 - i] != s->path[s->depth - 1 - i]) {
            s->callees = i;
            break;
        }
}

static bool on_path(const struct search *s, size_t site)
{
    for (size_t i = 0; i < s->depth; i++)
        if (s->path[i] == site)
            return true;
    return false;
}

/* Every chain of tail calls from the function at entry to the callee. */
static void search_from(struct search *s, uint32_t entry)
{
    if (entry == 0) { /* an indirect tail call */
        s->unsure = true;
        return;
    }
    if (entry == s->callee) {
        found(s);
        return;
    }
    size_t first, n;
    tails_of(s->t, entry, &first, &n);
    if (n == 0 && !function_known(s->t, entry)) {
        s->unsure = true; /* no call-site information for that function */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t site = s->t->tails[first + i].site;
        if (on_path(s, site))
            continue; /* a cycle of tail calls */
        if (s->depth == CALL_SITE_CHAIN_MAX || s->budget == 0) {
            s->unsure = true;
            return;
        }
        s->budget--;
        s->path[s->depth++] = site;
        search_from(s, s->t->sites[site].target);
        s->depth--;
    }
}

void spoor_call_site_chain(const spoor_elf *elf, uint32_t return_address, uint32_t callee_entry,
                           call_site_chain *out)
{
    memset(out, 0, sizeof *out);
    const struct call_site_table *t = table(elf);
    if (!t || t->nsites == 0)
        return;
    const struct call_site *at = site_at(t, return_address & ~1u);
    if (!at || at->target == 0 || at->target == callee_entry)
        return;
    struct search s = {.t = t, .callee = callee_entry, .budget = SEARCH_BUDGET};
    search_from(&s, at->target);
    if (s.nchains == 0 || s.unsure) {
        /* gdb gives up too (no frames); here the gap is said */
        out->possible = true;
        return;
    }
    /* Innermost first: the callees' part from the end of the chain, then the callers' part. */
    size_t callees = s.callees, callers = s.callers;
    if (s.nchains == 1)
        callers = 0; /* one chain: all of it, once */
    else if (callers + callees > s.length)
        callers = s.length - callees;
    for (size_t i = 0; i < callees; i++)
        out->pc[out->count++] = t->sites[s.first[s.length - 1 - i]].return_pc;
    out->gap = out->count;
    for (size_t i = 0; i < callers; i++)
        out->pc[out->count++] = t->sites[s.first[callers - 1 - i]].return_pc;
    out->possible = s.nchains > 1;
}

bool spoor_call_site_targets(const spoor_elf *elf, uint32_t function_entry)
{
    const struct call_site_table *t = table(elf);
    return t && bsearch(&function_entry, t->targets, t->ntargets, sizeof *t->targets, cmp_u32);
}

size_t spoor_call_site_count(const spoor_elf *elf)
{
    const struct call_site_table *t = table(elf);
    return t ? t->nsites : 0;
}

size_t spoor_call_site_units_read(const spoor_elf *elf)
{
    const struct call_site_table *t = table(elf);
    return t ? t->units_read : 0;
}
