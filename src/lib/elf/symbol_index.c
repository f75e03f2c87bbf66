/* The symbolizer's lookup tables and lookups. DWARF scopes (functions and inlined instances)
 * are flattened into a sorted partition of the address space, line rows into one sorted array,
 * the two merged into spans; a lookup is one search for the span (a page index, then a binary
 * search within the page, which holds about one span). Symbol table fallback where DWARF says
 * nothing.
 *
 * Tables are made per compile unit when an address first falls into the unit, so that one
 * lookup decodes one unit. The units claim code ranges (.debug_aranges, else the unit DIE's
 * DW_AT_ranges or low_pc/high_pc; DWARF says they cover the unit's code); from the start of a
 * claimed range up to the next claimed range (the unit's region) the claiming unit answers, as
 * in addr2line, which finds the unit first. Many lookups, or a few units decoded (a bulk run
 * touches every unit soon: their own tables would be built only to be thrown away), make one
 * merged table over all units instead (it is the fastest to search). Both kinds of table hold the
 * same content, each unit's cut to its regions, so a unit's table answers what the merged one does;
 * where it cannot tell (the unit has no line row at the start of a claimed range, so a row of
 * another unit may be in force there) the merged table is built and answers. When the units cannot
 * be told apart by address (a unit with code but no range information, two units claiming the same
 * code), only the merged table is used, uncut. */
#include <string.h>

#include "base/merge_runs.h"
#include "elf/symbols_internal.h"

/* From `start` up to the next segment's start, the innermost scope is `scope` (-1: none)
 * whose code range began at `range_start`. */
struct dw_segment {
    uint32_t start, range_start;
    int32_t scope;
};

/* One piece of the address space over which the answer does not change: from `start` up to
 * the next span's start, the innermost scope is `scope` (-1: none) whose code range began at
 * `range_start`, and the line-table row in force says file:line (file NULL and line 0 when no
 * row covers it; file unknown_line in a unit's table where rows of other units may be in
 * force). The scope ranges and the line rows merged, so that a lookup is one search and reads
 * one span. */
struct dw_span {
    uint32_t start, range_start;
    int32_t scope;
    unsigned line;
    const char *file;
};

/* A page index over an array sorted by address: the entries of page p (addresses
 * base + (p << shift) up to the next page) are at first[p] .. first[p + 1]. */
struct page_index {
    uint32_t base;
    unsigned shift;
    size_t npages;
    uint32_t *first; /* NULL: no index, search the whole array */
};

struct dw_function { /* an out-of-line function's code range */
    uint32_t start, end;
    const char *name;
};

/* The tables of one unit or of all units merged. */
struct lookup_table {
    struct dw_span *spans; /* sorted by start */
    size_t nspans;
    struct page_index span_pages;
    struct dw_function *functions; /* sorted by start */
    size_t nfunctions;
    size_t nlines; /* line rows merged into the spans */
};

/* The file of the break rows put at the start of each range a unit claims, where the unit
 * itself has no row: the line in force there may be another unit's. */
static const char unknown_line[] = "";

/* The merged table is built once LAZY_UNITS units are, or after LAZY_LOOKUPS lookups: one
 * address (a crash's first lookup) decodes one unit, a backtrace a few, and a bulk run does not
 * build many tables of single units that the merged table replaces anyway. */
#define LAZY_UNITS 8
#define LAZY_LOOKUPS 1024

static int cmp_range(const void *a, const void *b)
{
    const struct dw_range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool range_before(const void *a, const void *b)
{
    return cmp_range(a, b) < 0;
}

static bool u32_before(const void *a, const void *b)
{
    return *(const uint32_t *)a < *(const uint32_t *)b;
}

/* Sweeps the sorted ranges into segments whose scope is the innermost covering range. */
static int build_segments(const struct dw_range *ranges, size_t n, struct dw_segment **out,
                          size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!n)
        return 0;
    uint32_t *bounds = malloc(2 * n * sizeof *bounds);
    size_t *stack = malloc(n * sizeof *stack);
    struct dw_segment *segments = malloc((2 * n + 1) * sizeof *segments);
    if (!bounds || !stack || !segments) {
        free(bounds);
        free(stack);
        free(segments);
        return -1;
    }
    /* every lo and hi in order: the los are (the ranges are sorted by lo), the his are sorted
     * behind them, and the two runs merged */
    uint32_t *his = bounds + n;
    for (size_t i = 0; i < n; i++)
        his[i] = ranges[i].hi;
    if (spoor_merge_runs(his, n, sizeof *his, u32_before, NULL)) {
        free(bounds);
        free(stack);
        free(segments);
        return -1;
    }
    for (size_t i = 0, j = 0, k = 0; k < 2 * n; k++) /* k = i + j: never past a hi unread */
        bounds[k] = i < n && (j >= n || ranges[i].lo <= his[j]) ? ranges[i++].lo : his[j++];
    size_t sp = 0, ri = 0, ns = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        uint32_t p = bounds[i];
        if (i && bounds[i - 1] == p)
            continue;
        while (ri < n && ranges[ri].lo == p)
            stack[sp++] = ri++;
        while (sp && ranges[stack[sp - 1]].hi <= p)
            sp--;
        struct dw_segment seg = {p, p, -1};
        if (sp) {
            seg.scope = ranges[stack[sp - 1]].scope;
            seg.range_start = ranges[stack[sp - 1]].start;
        }
        struct dw_segment *last = ns ? &segments[ns - 1] : NULL;
        if (last && last->scope == seg.scope && last->range_start == seg.range_start)
            continue;
        segments[ns++] = seg;
    }
    free(bounds);
    free(stack);
    *out = segments;
    *nout = ns;
    return 0;
}

static int build_functions(const struct symbol_tables *t, const struct dw_range *ranges, size_t n,
                           struct lookup_table *tab)
{
    tab->functions = malloc((n ? n : 1) * sizeof *tab->functions);
    if (!tab->functions)
        return -1;
    for (size_t i = 0; i < n; i++) { /* ranges are sorted by now */
        const struct dw_range *r = &ranges[i];
        if (t->scopes[r->scope].parent < 0)
            tab->functions[tab->nfunctions++] =
                (struct dw_function){r->start, r->hi, t->scopes[r->scope].name};
    }
    return 0;
}

/* Rows by address; at one address a sequence ends before the next starts. Rows that compare
 * equal keep their order (the merge below is stable). */
static int cmp_line(const struct dw_line *x, const struct dw_line *y)
{
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->end_sequence != y->end_sequence)
        return x->end_sequence ? -1 : 1;
    return 0;
}

static bool line_before(const void *a, const void *b)
{
    return cmp_line(a, b) < 0;
}

/* Merges the segments and the sorted line rows into spans: at every address where either
 * starts, the segment and the line row in force there. */
static int build_spans(const struct dw_segment *segments, size_t ns, const struct dw_line *lines,
                       size_t nl, struct lookup_table *tab)
{
    if (!ns && !nl)
        return 0;
    tab->spans = malloc((ns + nl) * sizeof *tab->spans);
    if (!tab->spans)
        return -1;
    /* the next segment's and row's addresses (none: past every address), and what is in force */
    const uint64_t none = (uint64_t)1 << 32;
    uint64_t next_segment = ns ? segments[0].start : none, next_row = nl ? lines[0].addr : none;
    size_t i = 0, j = 0;
    int32_t scope = -1;
    uint32_t range_start = 0;
    unsigned line = 0;
    const char *file = NULL;
    struct dw_span *out = tab->spans;
    for (;;) {
        uint64_t p = next_segment < next_row ? next_segment : next_row;
        if (p == none)
            break;
        if (next_segment == p) {
            do {
                scope = segments[i].scope;
                range_start = segments[i].range_start;
            } while (++i < ns && segments[i].start <= p);
            next_segment = i < ns ? segments[i].start : none;
        }
        if (next_row == p) {
            while (++j < nl && lines[j].addr <= p)
                ;
            const struct dw_line *row = &lines[j - 1];
            line = row->end_sequence ? 0 : row->line;
            file = row->end_sequence ? NULL : row->file;
            next_row = j < nl ? lines[j].addr : none;
        }
        *out++ = (struct dw_span){(uint32_t)p, range_start, scope, line, file};
    }
    tab->nspans = (size_t)(out - tab->spans);
    return 0;
}

/* Builds a page index over n entries whose addresses (at stride bytes from addr0) ascend. Pages
 * are as small as possible (down to one Thumb halfword) while there are no more pages than
 * entries (or 256), so that a lookup finds about one entry in its page when code is dense, and
 * the index costs no more memory than the table. Without memory there is no index and lookups
 * search the whole array. */
static void index_pages(struct page_index *ix, const void *addr0, size_t stride, size_t n)
{
#define ADDR(i) (*(const uint32_t *)((const char *)addr0 + (i)*stride))
    memset(ix, 0, sizeof *ix);
    if (!n)
        return;
    uint32_t base = ADDR(0), span = ADDR(n - 1) - base;
    size_t max_pages = n < 256 ? 256 : n;
    unsigned shift = 1;
    while (shift < 31 && (span >> shift) >= max_pages)
        shift++;
    size_t npages = ((size_t)span >> shift) + 1;
    uint32_t *first = malloc((npages + 1) * sizeof *first);
    if (!first)
        return;
    size_t i = 0;
    for (size_t p = 0; p <= npages; p++) {
        uint64_t start = (uint64_t)base + ((uint64_t)p << shift);
        while (i < n && ADDR(i) < start)
            i++;
        first[p] = (uint32_t)i;
    }
#undef ADDR
    ix->base = base;
    ix->shift = shift;
    ix->npages = npages;
    ix->first = first;
}

/* The index of the last entry at or below addr, plus one (0: none), searching only addr's
 * page when there is an index: entries before the page are below addr, after it above. */
static inline size_t upper_bound(const struct page_index *ix, const void *addr0, size_t stride,
                                 size_t n, uint32_t addr)
{
    size_t lo = 0, hi = n;
    if (ix->first && addr >= ix->base) {
        size_t p = (addr - ix->base) >> ix->shift;
        if (p < ix->npages) {
            lo = ix->first[p];
            hi = ix->first[p + 1];
        } else {
            lo = n;
        }
    } else if (ix->first) {
        hi = 0;
    }
#define ADDR(i) (*(const uint32_t *)((const char *)addr0 + (i)*stride))
    while (hi - lo > 4) {
        size_t mid = lo + (hi - lo) / 2;
        if (ADDR(mid) <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo < hi && ADDR(lo) <= addr) /* a page holds about one entry */
        lo++;
#undef ADDR
    return lo;
}

static void free_table(struct lookup_table *tab)
{
    if (!tab)
        return;
    free(tab->spans);
    free(tab->span_pages.first);
    free(tab->functions);
    free(tab);
}

/* A lookup table over the ranges and rows given, taking over both arrays (ranges are sorted in
 * place); NULL without memory. */
static struct lookup_table *build_table(const struct symbol_tables *t, struct dw_range *ranges,
                                        size_t nranges, struct dw_line *rows, size_t nrows)
{
    struct lookup_table *tab = calloc(1, sizeof *tab);
    struct dw_segment *segments = NULL;
    struct dw_line *lines = NULL;
    size_t nsegments = 0;
    if (!tab)
        goto fail;
    if (spoor_merge_runs(ranges, nranges, sizeof *ranges, range_before, NULL) ||
        build_segments(ranges, nranges, &segments, &nsegments) ||
        build_functions(t, ranges, nranges, tab))
        goto fail;
    free(ranges);
    ranges = NULL;
    if (nrows) { /* libdw hands out each unit's rows in address order: a few runs */
        if (spoor_merge_runs(rows, nrows, sizeof *rows, line_before, (void **)&lines))
            goto fail;
    } else { /* room for rows, none kept (all outside the unit's regions) */
        free(rows);
    }
    rows = NULL;
    tab->nlines = nrows;
    if (build_spans(segments, nsegments, lines, nrows, tab))
        goto fail;
    if (tab->nspans)
        index_pages(&tab->span_pages, &tab->spans[0].start, sizeof *tab->spans, tab->nspans);
    free(segments);
    free(lines);
    return tab;
fail:
    free(ranges);
    free(rows);
    free(segments);
    free(lines);
    free_table(tab);
    return NULL;
}

/* The claimed range closest below or at addr, plus one (0: none). From its start up to the
 * next claimed range, its unit's table answers (the unit's region). */
static size_t anchor(const struct symbol_tables *t, uint32_t addr)
{
    static const struct page_index no_index;
    return upper_bound(&no_index, t->claims ? &t->claims[0].lo : NULL, sizeof *t->claims,
                       t->nclaims, addr);
}

/* Whether addr lies in a region of unit u; *k (a claim index, kept between calls) is tried
 * first, as neighbouring rows mostly fall into one region. */
static bool in_region(const struct symbol_tables *t, size_t u, uint32_t addr, size_t *k)
{
    if (!(*k < t->nclaims && t->claims[*k].lo <= addr &&
          (*k + 1 == t->nclaims || addr < t->claims[*k + 1].lo))) {
        size_t a = anchor(t, addr);
        if (!a)
            return false;
        *k = a - 1;
    }
    return t->claims[*k].unit == u;
}

/* Whether every row of unit `unit` lies in its regions: its rows were kept by its DIE's code
 * ranges (dw_unit.code; for a row that ends a sequence, the byte before it), each of which lies
 * in one region of the unit. */
static bool rows_in_regions(const struct symbol_tables *t, size_t unit)
{
    const struct unit_claims *code = &t->units[unit].code;
    if (!code->known)
        return false;
    for (size_t i = 0; i < code->n; i++) {
        size_t a = anchor(t, code->ranges[i][0]);
        if (!a || t->claims[a - 1].unit != unit ||
            (a < t->nclaims && code->ranges[i][1] > t->claims[a].lo))
            return false;
    }
    return true;
}

/* Growing arrays of ranges and rows. */
struct content {
    struct dw_range *ranges;
    size_t nranges, cap_ranges;
    struct dw_line *rows;
    size_t nrows, cap_rows;
};

static int add_range(struct content *c, const struct dw_range *r, uint32_t lo, uint32_t hi)
{
    if (spoor_grow((void **)&c->ranges, &c->cap_ranges, c->nranges + 1, sizeof *c->ranges))
        return -1;
    c->ranges[c->nranges] = *r;
    c->ranges[c->nranges].lo = lo;
    c->ranges[c->nranges].hi = hi;
    c->nranges++;
    return 0;
}

static int add_row(struct content *c, const struct dw_line *row)
{
    if (spoor_grow((void **)&c->rows, &c->cap_rows, c->nrows + 1, sizeof *c->rows))
        return -1;
    c->rows[c->nrows++] = *row;
    return 0;
}

/* Appends what unit `unit` has to c: its scopes' ranges and its line rows, the ranges cut to the
 * unit's regions and the rows outside them (for a row that ends a sequence, the byte before it
 * counts) left out; all as they are when units are not found by address. DWARF says a unit's
 * code lies in what it claims; what reaches out (assembly functions whose DWARF ranges carry the
 * Thumb bit end one byte into the next unit's code) is not the unit's to answer for, as in
 * addr2line, which looks up the unit first. With `breaks`, first a break row at the start of each
 * range the unit claims. -1 without memory. */
static int unit_content(const struct symbol_tables *t, size_t unit, bool breaks, struct content *c)
{
    const struct dw_unit *u = &t->units[unit];
    bool cut = !t->merged_only;
    for (size_t i = 0; i < u->nranges; i++) {
        const struct dw_range *r = &u->ranges[i];
        if (!cut) {
            if (add_range(c, r, r->lo, r->hi))
                return -1;
            continue;
        }
        size_t k = anchor(t, r->lo);
        for (k = k ? k - 1 : 0; k < t->nclaims && t->claims[k].lo < r->hi; k++) {
            uint64_t end = k + 1 < t->nclaims ? t->claims[k + 1].lo : (uint64_t)UINT32_MAX + 1;
            uint32_t lo = r->lo > t->claims[k].lo ? r->lo : t->claims[k].lo;
            uint32_t hi = r->hi < end ? r->hi : (uint32_t)end;
            if (t->claims[k].unit == unit && lo < hi && add_range(c, r, lo, hi))
                return -1;
        }
    }
    for (size_t i = 0; breaks && i < u->claims.n; i++)
        if (add_row(c, &(struct dw_line){u->claims.ranges[i][0], 0, 0, unknown_line}))
            return -1;
    if (!u->nrows) /* no rows (c->rows may be NULL yet) */
        return 0;
    if (spoor_grow((void **)&c->rows, &c->cap_rows, c->nrows + u->nrows, sizeof *c->rows))
        return -1;
    struct dw_line *out = c->rows + c->nrows; /* room made above */
    if (!cut || rows_in_regions(t, unit)) {
        memcpy(out, u->rows, u->nrows * sizeof *out);
        c->nrows += u->nrows;
        return 0;
    }
    /* in_region's answer is that of the claim with the highest start at or below the address:
     * the same for every address from that start to the next claim's, [lo, hi) */
    uint64_t lo = 1, hi = 0; /* none yet */
    bool mine = false;
    size_t k = 0;
    for (const struct dw_line *row = u->rows, *end = row + u->nrows; row < end; row++) {
        uint32_t addr = row->addr - (row->end_sequence && row->addr);
        if (addr < lo || addr >= hi) {
            mine = in_region(t, unit, addr, &k);
            if (k < t->nclaims && t->claims[k].lo <= addr) { /* the claim in force */
                lo = t->claims[k].lo;
                hi = k + 1 < t->nclaims ? t->claims[k + 1].lo : (uint64_t)UINT32_MAX + 1;
            } else { /* below every claim */
                lo = 0;
                hi = t->nclaims ? t->claims[0].lo : (uint64_t)UINT32_MAX + 1;
            }
        }
        if (mine)
            *out++ = *row;
    }
    c->nrows = (size_t)(out - c->rows);
    return 0;
}

/* The table of one unit: what it has in its regions, its rows after a break row at the start of
 * each range it claims (rows sort stably, so a row of its own at that address comes after the
 * break and is the one in force). */
static struct lookup_table *unit_table(const struct symbol_tables *t, size_t unit)
{
    struct content c = {0};
    if (unit_content(t, unit, true, &c)) {
        free(c.ranges);
        free(c.rows);
        return NULL;
    }
    return build_table(t, c.ranges, c.nranges, c.rows, c.nrows);
}

static void release(struct symbol_tables *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nunits; i++)
        free_table(t->units[i].table);
    free_table(t->merged);
    free(t->claims);
    spoor_dwarf_units_free(t);
    free(t);
}

static int cmp_unit_claim(const void *a, const void *b)
{
    const struct unit_claim *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every unit's claimed ranges in one sorted array; units that cannot be found by address make
 * t->merged_only. -1 without memory. */
static int index_claims(const spoor_elf *e, struct symbol_tables *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nunits; i++) {
        struct dw_unit *u = &t->units[i];
        if (!u->claims.known) { /* harmless only without code */
            if (spoor_dwarf_unit_build(e, t, i))
                return -1;
            if (u->nranges || u->nrows)
                t->merged_only = true;
        }
        n += u->claims.n;
    }
    if (t->merged_only)
        return 0;
    t->claims = malloc((n ? n : 1) * sizeof *t->claims);
    if (!t->claims)
        return -1;
    for (size_t i = 0; i < t->nunits; i++)
        for (size_t k = 0; k < t->units[i].claims.n; k++)
            t->claims[t->nclaims++] = (struct unit_claim){
                t->units[i].claims.ranges[k][0], t->units[i].claims.ranges[k][1], (uint32_t)i};
    qsort(t->claims, t->nclaims, sizeof *t->claims, cmp_unit_claim);
    for (size_t i = 1; i < t->nclaims; i++)
        if (t->claims[i].lo < t->claims[i - 1].hi) /* two units claim the same code */
            t->merged_only = true;
    return 0;
}

struct symbol_tables *spoor_symbol_tables(const spoor_elf *ce)
{
    spoor_elf *e = (spoor_elf *)ce; /* tables are built on first use */
    if (e->symbolizer || !spoor_elf_libdw(e))
        return e->symbolizer;
    struct symbol_tables *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->keep_zero = e->nsymbols && e->symbols[0].start == 0;
    if (spoor_dwarf_units(e, t) || index_claims(e, t)) { /* out of memory: symbol table alone */
        release(t);
        return NULL;
    }
    e->symbolizer = t;
    e->release_symbolizer = release;
    return t;
}

/* Builds every unit and the merged table over them. Without memory the DWARF is given up and
 * lookups use the symbol table alone. */
static void build_merged(const spoor_elf *e, struct symbol_tables *t)
{
    if (t->merged)
        return;
    struct content c = {0}; /* in unit order, as the units are in the file */
    size_t nranges = 0, nrows = 0;
    for (size_t i = 0; i < t->nunits; i++) { /* first every unit, to make room at once */
        if (spoor_dwarf_unit_build(e, t, i))
            goto fail;
        nranges += t->units[i].nranges;
        nrows += t->units[i].nrows;
    }
    if (spoor_grow((void **)&c.ranges, &c.cap_ranges, nranges, sizeof *c.ranges) ||
        spoor_grow((void **)&c.rows, &c.cap_rows, nrows, sizeof *c.rows)) {
        free(c.ranges);
        goto fail;
    }
    for (size_t i = 0; i < t->nunits; i++) {
        struct dw_unit *u = &t->units[i];
        if (unit_content(t, i, false, &c)) {
            free(c.ranges);
            free(c.rows);
            goto fail;
        }
        free(u->ranges); /* in c now, and only the merged table answers from here on */
        free(u->rows);
        u->ranges = NULL;
        u->rows = NULL;
        u->nranges = u->nrows = 0;
    }
    t->merged = build_table(t, c.ranges, c.nranges, c.rows, c.nrows);
    if (t->merged) {
        for (size_t i = 0; i < t->nunits; i++) { /* the merged table answers from now on */
            free_table(t->units[i].table);
            t->units[i].table = NULL;
        }
        return;
    }
fail:
    /* an empty table: the symbol table answers */
    t->merged = calloc(1, sizeof *t->merged);
    if (!t->merged) { /* not even that: no DWARF lookups at all */
        spoor_elf *me = (spoor_elf *)e;
        me->symbolizer = NULL;
        release(t);
    }
}

void spoor_symbols_build_all(const spoor_elf *e)
{
    struct symbol_tables *t = spoor_symbol_tables(e);
    if (t)
        build_merged(e, t);
}

/* The table that answers for addr: the merged one, or the table of the unit claiming addr or,
 * when none does, of the unit claiming the closest code below it; NULL when no unit has code
 * at or below addr. */
static const struct lookup_table *find_table(const spoor_elf *e, uint32_t addr,
                                             struct symbol_tables **tp)
{
    struct symbol_tables *t = spoor_symbol_tables(e);
    *tp = t;
    if (!t)
        return NULL;
    if (!t->merged && (t->merged_only || t->want_merged || t->lazy_lookups >= LAZY_LOOKUPS ||
                       t->units_built >= LAZY_UNITS))
        build_merged(e, t);
    if ((t = *tp = e->symbolizer) == NULL)
        return NULL;
    if (t->merged)
        return t->merged;
    t->lazy_lookups++;
    size_t a = anchor(t, addr);
    if (!a) /* no code at or below addr: no span, no function */
        return NULL;
    size_t unit = t->claims[a - 1].unit;
    struct dw_unit *u = &t->units[unit];
    if (!u->table) {
        if (spoor_dwarf_unit_build(e, t, unit) || !(u->table = unit_table(t, unit))) {
            t->want_merged = true; /* out of memory: the merged table decides */
            return find_table(e, addr, tp);
        }
    }
    return u->table;
}

/* The same, with the common case of many lookups (the merged table is there) inline. */
static inline const struct lookup_table *table_for(const spoor_elf *e, uint32_t addr,
                                                   struct symbol_tables **tp)
{
    struct symbol_tables *t = e->symbolizer;
    if (t && t->merged) {
        *tp = t;
        return t->merged;
    }
    return find_table(e, addr, tp);
}

static inline const struct dw_span *span_at(const struct lookup_table *tab, uint32_t addr)
{
    if (!tab)
        return NULL;
    size_t i = upper_bound(&tab->span_pages, tab->spans ? &tab->spans[0].start : NULL,
                           sizeof *tab->spans, tab->nspans, addr);
    return i ? &tab->spans[i - 1] : NULL;
}

/* A function name as lookups hand it out: demangled, unless spoor_elf_set_demangle() said not.
 * The cache of demangled names belongs to the ELF (freed at close), a cache like the tables. */
static const char *shown_name(const spoor_elf *ce, const char *name)
{
    spoor_elf *e = (spoor_elf *)ce;
    return e->raw_names || !spoor_may_be_mangled(name) ? name
                                                       : spoor_demangle_cached(&e->demangled, name);
}

size_t spoor_elf_symbolize(const spoor_elf *e, uint32_t addr, spoor_location *frames, size_t max)
{
    if (!max)
        return 0;
    addr &= ~1u;
    struct symbol_tables *t;
    const struct dw_span *span = span_at(table_for(e, addr, &t), addr);
    if (span && span->file == unknown_line) { /* a row of another unit may be in force */
        t->want_merged = true;
        span = span_at(table_for(e, addr, &t), addr);
    }
    spoor_location *f = &frames[0];
    f->function = NULL;
    f->offset = 0;
    f->has_offset = false;
    f->file = NULL;
    f->line = 0;
    int32_t scope = span ? span->scope : -1;
    if (scope >= 0 && t->scopes[scope].name) {
        f->function = shown_name(e, t->scopes[scope].name);
        /* GNU as gives an assembly function's low_pc its symbol's Thumb bit: the code starts
         * a byte below (the range itself stays as binutils reads it) */
        f->offset = addr - (span->range_start & ~1u);
        f->has_offset = true;
    } else {
        const struct elf_symbol *sym = spoor_elf_symbol_at(e, addr);
        if (sym) {
            f->function = shown_name(e, sym->name);
            f->offset = addr - sym->start;
            f->has_offset = true;
            f->file = sym->file; /* line 0, unless a line row covers addr (below) */
        }
    }
    if (span && span->file) {
        f->file = span->file;
        f->line = span->line;
    }
    size_t n = 1;
    for (int32_t s = scope; s >= 0 && t->scopes[s].parent >= 0 && n < max;
         s = t->scopes[s].parent) {
        f = &frames[n++];
        f->function = shown_name(e, t->scopes[t->scopes[s].parent].name);
        f->offset = 0;
        f->has_offset = false;
        f->file = t->scopes[s].call_file;
        f->line = t->scopes[s].call_line;
    }
    return n;
}

/* spoor_elf_answer_id's numbers: the function (1 + a scope's index, or 1 + a symbol's with bit
 * 31 set; 0 none) and the file (by its string: one string per name in a unit); *line the line. */
static inline bool pack_answer_id(const spoor_elf *e, uint64_t function, const char *file,
                                  unsigned line, uint64_t id[2], unsigned *line_out)
{
    if (function >> 32)
        return false;
    id[0] = 1 | (uint64_t)e->raw_names << 1 | function << 2;
    id[1] = (uint64_t)(uintptr_t)file;
    *line_out = line;
    return true;
}

/* spoor_elf_answer_id where the symbol table names the function (kept out of its common case). */
__attribute__((noinline)) static bool symbol_answer_id(const spoor_elf *e, uint32_t addr,
                                                       const char *file, unsigned line,
                                                       uint64_t id[2], uint32_t *base,
                                                       unsigned *line_out)
{
    const struct elf_symbol *sym = spoor_elf_symbol_at(e, addr);
    *base = sym ? sym->start : addr;
    uint64_t function = sym ? (uint64_t)(sym - e->symbols) + 1 + ((uint64_t)1 << 31) : 0;
    if (sym && !file)
        file = sym->file;
    return pack_answer_id(e, function, file, line, id, line_out);
}

/* spoor_elf_answer_id of a span found (NULL: none). */
static inline bool span_answer_id(const spoor_elf *e, const struct symbol_tables *t,
                                  const struct dw_span *span, uint32_t addr, uint64_t id[2],
                                  uint32_t *base, unsigned *line)
{
    int32_t scope = span ? span->scope : -1;
    const char *file = span ? span->file : NULL;
    unsigned row_line = file ? span->line : 0;
    if (scope < 0 || !t->scopes[scope].name)
        return symbol_answer_id(e, addr, file, row_line, id, base, line);
    *base = span->range_start & ~1u;
    return pack_answer_id(e, (uint64_t)scope + 1, file, row_line, id, line);
}

/* spoor_elf_answer_id with the span searched for as span_at does (outside the common case). */
__attribute__((noinline)) static bool searched_answer_id(const spoor_elf *e,
                                                         const struct symbol_tables *t,
                                                         uint32_t addr, uint64_t id[2],
                                                         uint32_t *base, unsigned *line)
{
    return span_answer_id(e, t, span_at(t->merged, addr), addr, id, base, line);
}

bool spoor_elf_answer_id(const spoor_elf *e, uint32_t addr, uint64_t id[2], uint32_t *base,
                         unsigned *line)
{
    const struct symbol_tables *t = e->symbolizer;
    const struct lookup_table *tab;
    if (!t || !(tab = t->merged) || e->warnings.n) /* single units' tables answer: no ids yet */
        return false;
    addr &= ~1u;
    /* what spoor_elf_symbolize answers from (the span at addr): the common case here, a page
     * of a few spans, addr past the first span */
    const struct page_index *ix = &tab->span_pages;
    size_t page = (size_t)((addr - ix->base) >> ix->shift), i, hi;
    if (!ix->first || addr < ix->base || page >= ix->npages ||
        (hi = ix->first[page + 1]) - (i = ix->first[page]) > 4)
        return searched_answer_id(e, t, addr, id, base, line);
    while (i < hi && tab->spans[i].start <= addr)
        i++;
    if (!i)
        return searched_answer_id(e, t, addr, id, base, line);
    return span_answer_id(e, t, &tab->spans[i - 1], addr, id, base, line);
}

bool spoor_elf_function(const spoor_elf *e, uint32_t addr, const char **name, uint32_t *start,
                        uint32_t *size)
{
    addr &= ~1u;
    struct symbol_tables *t;
    const struct lookup_table *tab = table_for(e, addr, &t);
    static const struct page_index no_index;
    size_t lo = tab ? upper_bound(&no_index, tab->functions ? &tab->functions[0].start : NULL,
                                  sizeof *tab->functions, tab->nfunctions, addr)
                    : 0;
    for (size_t i = lo; i-- > 0;) { /* ranges of one function may nest a later start */
        const struct dw_function *f = &tab->functions[i];
        if (addr < f->end) {
            if (name)
                *name = shown_name(e, f->name);
            if (start)
                *start = f->start & ~1u; /* an assembly function's low_pc: see above */
            if (size)
                *size = f->end - f->start;
            return true;
        }
        if (lo - i > 8)
            break;
    }
    const struct elf_symbol *sym = spoor_elf_symbol_at(e, addr);
    if (!sym)
        return false;
    if (name)
        *name = shown_name(e, sym->name);
    if (start)
        *start = sym->start;
    if (size)
        *size = sym->size;
    return true;
}

bool spoor_elf_has_symbols(const spoor_elf *e)
{
    if (e->nsymbols)
        return true;
    spoor_symbols_build_all(e);
    return e->symbolizer && e->symbolizer->merged->nfunctions > 0;
}

bool spoor_elf_has_dwarf(const spoor_elf *e)
{
    spoor_symbols_build_all(e);
    const struct lookup_table *m = e->symbolizer ? e->symbolizer->merged : NULL;
    return m && (m->nlines > 0 || m->nfunctions > 0);
}

bool spoor_elf_partial(const spoor_elf *e, uint32_t addr)
{
    if (!e->warnings.n)
        return false;
    if (e->damaged)
        return true;
    const struct symbol_tables *t = e->symbolizer;
    if (!t)
        return false;
    if (t->merged_only) { /* no unit can be told apart by address: any one may answer */
        for (size_t i = 0; i < t->nunits; i++)
            if (t->units[i].damaged)
                return true;
        return false;
    }
    size_t a = anchor(t, addr & ~1u);
    return a && t->units[t->claims[a - 1].unit].damaged;
}
