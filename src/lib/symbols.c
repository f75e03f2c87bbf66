/* The symbolizer: DWARF scopes (functions and inlined instances) flattened into a sorted
 * partition of the address space, line tables flattened into one sorted array, the two merged
 * into spans; a lookup is one search for the span (a page index, then a binary search within
 * the page, which holds about one span). Symbol table fallback where DWARF says nothing. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "elf_internal.h"

struct dw_range {
    uint32_t lo, hi;
    int32_t scope;
    int depth;
};

/* From `start` up to the next segment's start, the innermost scope is `scope` (-1: none)
 * whose code range began at `range_start`. */
struct dw_segment {
    uint32_t start, range_start;
    int32_t scope;
};

struct builder {
    spoor_elf *e;
    struct dw_range *ranges;
    size_t nranges, cap_ranges;
    struct dw_segment *segments;
    size_t nsegments;
    size_t cap_scopes, cap_lines;
    int keep_zero; /* a function really starts at address 0 */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static const char *call_file(Dwarf_Die *die, const char *const *files, size_t nfiles)
{
    Dwarf_Attribute attr;
    Dwarf_Word idx;
    if (!files || !dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) ||
        idx >= nfiles)
        return NULL;
    return files[idx];
}

/* ---- .debug_line, read directly ----
 * libdw's dwarf_getsrclines builds a line record of some 40 bytes per row, sorts them and
 * resolves each row's file; for a symbolizer that is most of the loading time. The reader below
 * decodes the line program of DWARF 2 to 5 into (address, line, file, end of sequence) rows in
 * program order (which the merge in flatten_lines puts into libdw's order: by address, a
 * sequence's end first, then program order) and names files the way libdw does: an absolute
 * name as it is, else directory "/" name, where directory 0 is DW_AT_comp_dir before DWARF 5
 * and file 0 is "???" before DWARF 5. Anything it does not handle (compressed sections,
 * DW_LNE_define_file, VLIW op_index, 64-bit addresses, malformed data) makes it give up on the
 * unit, and the unit goes through libdw as before. */

struct line_reader {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t rd_fixed(struct line_reader *r, unsigned n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

/* LEB128: the value's bits, with *shift the number of bits read and *last the final byte
 * (for the sign of a signed number); marks the reader bad when the input ends first. */
static uint64_t rd_leb(struct line_reader *r, unsigned *shift, uint8_t *last)
{
    uint64_t v = 0;
    *shift = 0;
    while (r->p < r->end) {
        uint8_t b = *r->p++;
        if (*shift < 64)
            v |= (uint64_t)(b & 0x7f) << *shift;
        *shift += 7;
        if (!(b & 0x80)) {
            *last = b;
            return v;
        }
    }
    r->bad = 1;
    *last = 0;
    return 0;
}

static uint64_t rd_uleb(struct line_reader *r)
{
    unsigned shift;
    uint8_t last;
    return rd_leb(r, &shift, &last);
}

static int64_t rd_sleb(struct line_reader *r)
{
    unsigned shift;
    uint8_t last;
    uint64_t v = rd_leb(r, &shift, &last);
    if (shift < 64 && (last & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

static const char *rd_cstr(struct line_reader *r)
{
    const uint8_t *s = r->p, *nul = memchr(s, 0, (size_t)(r->end - s));
    if (!nul) {
        r->bad = 1;
        r->p = r->end;
        return NULL;
    }
    r->p = nul + 1;
    return (const char *)s;
}

/* A NUL-terminated string at off in a section, or NULL. */
static const char *section_string(const struct elf_section *sec, uint64_t off)
{
    if (!sec || off >= sec->size || !memchr(sec->data + off, 0, sec->size - off))
        return NULL;
    return (const char *)sec->data + off;
}

static const struct elf_section *debug_section(const spoor_elf *e, const char *name)
{
    for (size_t i = 0; i < e->nsections; i++) {
        const struct elf_section *sec = &e->sections[i];
        if (!strcmp(sec->name, name))
            return sec->data && !(sec->flags & SHF_COMPRESSED) ? sec : NULL;
    }
    return NULL;
}

/* Room for n bytes of composed names, owned by the spoor_elf; NULL without memory. */
static char *name_space(spoor_elf *e, size_t n)
{
    struct name_block *b = e->names;
    if (!b || b->size - b->used < n) {
        size_t size = n > 16384 ? n : 16384;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = e->names;
        b->size = size;
        b->used = 0;
        e->names = b;
    }
    char *p = b->text + b->used;
    b->used += n;
    return p;
}

/* A DWARF 5 directory or file entry: its DW_LNCT_path string and DW_LNCT_directory_index;
 * false when a form is not one the reader knows. */
static bool read_entry(struct line_reader *r, const uint64_t (*format)[2], size_t nformat,
                       unsigned offset_size, const struct elf_section *str,
                       const struct elf_section *line_str, const char **path, uint64_t *dir)
{
    *path = NULL;
    *dir = 0;
    for (size_t k = 0; k < nformat; k++) {
        uint64_t type = format[k][0], form = format[k][1], v = 0;
        const char *sv = NULL;
        switch (form) {
        case DW_FORM_string: sv = rd_cstr(r); break;
        case DW_FORM_line_strp: sv = section_string(line_str, rd_fixed(r, offset_size)); break;
        case DW_FORM_strp: sv = section_string(str, rd_fixed(r, offset_size)); break;
        case DW_FORM_udata: v = rd_uleb(r); break;
        case DW_FORM_data1: v = rd_fixed(r, 1); break;
        case DW_FORM_data2: v = rd_fixed(r, 2); break;
        case DW_FORM_data4: v = rd_fixed(r, 4); break;
        case DW_FORM_data8: v = rd_fixed(r, 8); break;
        case DW_FORM_data16:
            rd_fixed(r, 8);
            rd_fixed(r, 8);
            break;
        case DW_FORM_block: {
            uint64_t n = rd_uleb(r);
            if (n > (uint64_t)(r->end - r->p))
                return false;
            r->p += n;
            break;
        }
        default: return false;
        }
        if (r->bad)
            return false;
        if (type == DW_LNCT_path) {
            if (!sv)
                return false;
            *path = sv;
        } else if (type == DW_LNCT_directory_index) {
            *dir = v;
        }
    }
    return *path != NULL;
}

#define MAX_LINE_FORMATS 16

struct raw_line { /* a row as the line program has it */
    uint32_t addr;
    uint32_t file; /* index into the unit's files */
    int line;
    bool end; /* ends a sequence */
};

/* A unit's line table: its file names and rows in program order. */
struct unit_lines {
    const char **files;
    size_t nfiles, cap_files;
    const char **dirs;
    size_t ndirs, cap_dirs;
    struct raw_line *rows;
    size_t nrows, cap_rows;
};

static bool add_name(const char ***v, size_t *n, size_t *cap, const char *name)
{
    if (grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = name;
    return true;
}

/* The name libdw gives a file: absolute as it is, else directory "/" name (the name alone when
 * the directory is unknown). NULL without memory. */
static const char *file_name(spoor_elf *e, const struct unit_lines *u, const char *name,
                             uint64_t dir)
{
    if (name[0] == '/')
        return name;
    const char *d = u->dirs[dir];
    if (!d)
        return name;
    size_t dl = strlen(d), nl = strlen(name);
    char *s = name_space(e, dl + nl + 2);
    if (!s)
        return NULL;
    memcpy(s, d, dl);
    s[dl] = '/';
    memcpy(s + dl + 1, name, nl + 1);
    return s;
}

/* Reads the line table at off into u. 0: done; 1: not handled here (use libdw); -1: out of
 * memory. */
static int read_unit_lines(spoor_elf *e, const struct elf_section *sec, uint64_t off,
                           const char *comp_dir, struct unit_lines *u)
{
    u->nfiles = u->ndirs = u->nrows = 0;
    if (!sec || off >= sec->size || sec->size - off < 4)
        return 1;
    struct line_reader r = {sec->data + off, sec->data + sec->size, 0};
    unsigned offset_size = 4;
    uint64_t length = rd_fixed(&r, 4);
    if (length == 0xffffffffu) {
        offset_size = 8;
        length = rd_fixed(&r, 8);
    } else if (length >= 0xfffffff0u) {
        return 1;
    }
    if (r.bad || length > (uint64_t)(r.end - r.p))
        return 1;
    r.end = r.p + length;
    unsigned version = (unsigned)rd_fixed(&r, 2);
    if (version < 2 || version > 5)
        return 1;
    if (version >= 5) {
        unsigned address_size = (unsigned)rd_fixed(&r, 1);
        unsigned seg_size = (unsigned)rd_fixed(&r, 1);
        if (address_size != 4 || seg_size != 0)
            return 1;
    }
    uint64_t header_length = rd_fixed(&r, offset_size);
    if (r.bad || header_length > (uint64_t)(r.end - r.p))
        return 1;
    const uint8_t *program = r.p + header_length;
    unsigned min_inst = (unsigned)rd_fixed(&r, 1);
    unsigned max_ops = version >= 4 ? (unsigned)rd_fixed(&r, 1) : 1;
    rd_fixed(&r, 1); /* default_is_stmt: every row counts */
    int line_base = (int8_t)rd_fixed(&r, 1);
    unsigned line_range = (unsigned)rd_fixed(&r, 1);
    unsigned opcode_base = (unsigned)rd_fixed(&r, 1);
    if (r.bad || max_ops != 1 || line_range == 0 || opcode_base == 0 ||
        (size_t)(r.end - r.p) < opcode_base - 1)
        return 1;
    const uint8_t *op_lengths = r.p; /* of opcodes 1 .. opcode_base - 1 */
    r.p += opcode_base - 1;

    const struct elf_section *str = NULL, *line_str = NULL;
    if (version >= 5) {
        str = debug_section(e, ".debug_str");
        line_str = debug_section(e, ".debug_line_str");
        for (int pass = 0; pass < 2; pass++) { /* directories, then files */
            uint64_t format[MAX_LINE_FORMATS][2];
            size_t nformat = (size_t)rd_fixed(&r, 1);
            if (nformat > MAX_LINE_FORMATS)
                return 1;
            for (size_t k = 0; k < nformat; k++) {
                format[k][0] = rd_uleb(&r);
                format[k][1] = rd_uleb(&r);
            }
            uint64_t count = rd_uleb(&r);
            if (r.bad || count > (uint64_t)(r.end - r.p))
                return 1;
            for (uint64_t k = 0; k < count; k++) {
                const char *path;
                uint64_t dir;
                if (!read_entry(&r, (const uint64_t(*)[2])format, nformat, offset_size, str,
                                line_str, &path, &dir))
                    return 1;
                if (pass == 0) {
                    if (!add_name(&u->dirs, &u->ndirs, &u->cap_dirs, path))
                        return -1;
                } else {
                    if (dir >= u->ndirs)
                        return 1;
                    const char *name = file_name(e, u, path, dir);
                    if (!name || !add_name(&u->files, &u->nfiles, &u->cap_files, name))
                        return -1;
                }
            }
        }
    } else {
        if (!add_name(&u->dirs, &u->ndirs, &u->cap_dirs, comp_dir) ||
            !add_name(&u->files, &u->nfiles, &u->cap_files, "???"))
            return -1;
        for (;;) {
            const char *d = rd_cstr(&r);
            if (r.bad)
                return 1;
            if (!*d)
                break;
            if (!add_name(&u->dirs, &u->ndirs, &u->cap_dirs, d))
                return -1;
        }
        for (;;) {
            const char *f = rd_cstr(&r);
            if (r.bad)
                return 1;
            if (!*f)
                break;
            uint64_t dir = rd_uleb(&r);
            rd_uleb(&r); /* modification time */
            rd_uleb(&r); /* length */
            if (r.bad || dir >= u->ndirs)
                return 1;
            const char *name = file_name(e, u, f, dir);
            if (!name || !add_name(&u->files, &u->nfiles, &u->cap_files, name))
                return -1;
        }
    }
    if (r.bad || r.p > program)
        return 1;
    r.p = program;

    uint64_t addr = 0, file = 1;
    int64_t line = 1;
    bool dropped_high = false; /* a row above 32 bits was left out */
    while (r.p < r.end) {
        unsigned op = *r.p++;
        bool emit = false, end = false;
        if (op >= opcode_base) {
            unsigned adj = op - opcode_base;
            addr += (uint64_t)(adj / line_range) * min_inst;
            line += line_base + (int)(adj % line_range);
            emit = true;
        } else if (op == 0) {
            uint64_t len = rd_uleb(&r);
            if (r.bad || len == 0 || len > (uint64_t)(r.end - r.p))
                return 1;
            const uint8_t *next = r.p + len;
            unsigned sub = *r.p++;
            switch (sub) {
            case DW_LNE_end_sequence: emit = end = true; break;
            case DW_LNE_set_address:
                if (len != 5)
                    return 1;
                addr = rd_fixed(&r, 4);
                break;
            case DW_LNE_set_discriminator: break;
            case DW_LNE_define_file: return 1;
            default: break;
            }
            r.p = next;
        } else {
            switch (op) {
            case DW_LNS_copy: emit = true; break;
            case DW_LNS_advance_pc: addr += rd_uleb(&r) * min_inst; break;
            case DW_LNS_advance_line: line += rd_sleb(&r); break;
            case DW_LNS_set_file: file = rd_uleb(&r); break;
            case DW_LNS_const_add_pc:
                addr += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
                break;
            case DW_LNS_fixed_advance_pc: addr += rd_fixed(&r, 2); break;
            default: /* other standard opcodes: skip their operands */
                for (unsigned k = 0; k < op_lengths[op - 1]; k++)
                    rd_uleb(&r);
                break;
            }
        }
        if (r.bad)
            return 1;
        if (emit && addr <= UINT32_MAX) {
            if (file >= u->nfiles || line < INT32_MIN || line > INT32_MAX)
                return 1;
            if (grow((void **)&u->rows, &u->cap_rows, u->nrows + 1, sizeof *u->rows))
                return -1;
            u->rows[u->nrows++] = (struct raw_line){(uint32_t)addr, (uint32_t)file, (int)line, end};
        } else if (emit) {
            dropped_high = true;
        }
        if (end) {
            addr = 0;
            file = 1;
            line = 1;
        }
    }
    /* libdw marks the last row in its order (highest address; there, the last row that does
     * not end a sequence, else the last that does) as ending a sequence */
    if (u->nrows && !dropped_high) {
        size_t last = 0;
        for (size_t k = 1; k < u->nrows; k++) {
            const struct raw_line *x = &u->rows[k], *m = &u->rows[last];
            if (x->addr > m->addr || (x->addr == m->addr && (!x->end || m->end)))
                last = k;
        }
        u->rows[last].end = true;
    }
    return 0;
}

/* Whether a unit's language names its functions by mangled symbols (C++, Rust, ...): binutils'
 * list of languages without mangling (dwarf2.c, mangle_style), the rest has it. */
static bool mangling_language(Dwarf_Die *die)
{
    Dwarf_Die cu;
    if (!dwarf_diecu(die, &cu, NULL, NULL))
        return true;
    switch (dwarf_srclang(&cu)) {
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

/* A function's name as addr2line gives it without -C: its linkage name (the DIE's, or that of
 * its abstract origin or specification) when it has one, else its DW_AT_name. An out-of-line
 * function of a mangling language without a linkage name in DWARF (a C++ function in an
 * anonymous namespace, main) is named by the function symbol that starts where its code
 * (range lo) does, as binutils and llvm-symbolizer name it. Shown demangled unless the ELF was
 * told otherwise (see shown_name). */
static const char *scope_name(spoor_elf *e, Dwarf_Die *die, int tag, uint32_t lo)
{
    Dwarf_Attribute attr;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    if (!name)
        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    if (name)
        return name;
    name = dwarf_diename(die);
    if (tag == DW_TAG_subprogram) {
        const struct elf_symbol *sym = spoor_elf_symbol_at(e, lo);
        if (sym && sym->start == lo && (!name || strcmp(sym->name, name)) && mangling_language(die))
            return sym->name;
    }
    return name;
}

static int add_scope(struct builder *b, Dwarf_Die *die, int tag, int32_t parent, int depth,
                     const char *const *files, size_t nfiles)
{
    spoor_elf *e = b->e;
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    int32_t idx = (int32_t)e->nscopes;
    int any = 0;
    uint32_t first_lo = 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (lo >= hi || hi > UINT32_MAX || (lo == 0 && !b->keep_zero))
            continue; /* empty, or code of a section the linker discarded */
        if (grow((void **)&b->ranges, &b->cap_ranges, b->nranges + 1, sizeof *b->ranges))
            return -1;
        if (!any)
            first_lo = (uint32_t)lo;
        b->ranges[b->nranges++] = (struct dw_range){(uint32_t)lo, (uint32_t)hi, idx, depth};
        any = 1;
    }
    if (!any)
        return -2;
    if (grow((void **)&e->scopes, &b->cap_scopes, e->nscopes + 1, sizeof *e->scopes))
        return -1;
    struct dw_scope *s = &e->scopes[e->nscopes++];
    s->name = scope_name(e, die, tag, first_lo);
    s->parent = parent;
    s->call_file = NULL;
    s->call_line = 0;
    if (tag == DW_TAG_inlined_subroutine) {
        Dwarf_Attribute attr;
        Dwarf_Word line;
        s->call_file = call_file(die, files, nfiles);
        if (dwarf_attr(die, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &line))
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

static int walk(struct builder *b, Dwarf_Die *die, int32_t parent, int depth,
                const char *const *files, size_t nfiles)
{
    Dwarf_Die child;
    int own = dwarf_tag(die);
    if (!may_hold_code(own) || dwarf_haschildren(die) <= 0 || dwarf_child(die, &child) != 0)
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
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            int r = add_scope(b, &child, tag, tag == DW_TAG_subprogram ? -1 : parent, depth, files,
                              nfiles);
            if (r == -1)
                return -1;
            if (r == -2 &&
                (dwarf_hasattr(&child, DW_AT_declaration) || dwarf_hasattr(&child, DW_AT_low_pc) ||
                 dwarf_hasattr(&child, DW_AT_ranges)))
                continue; /* a declaration, or code the linker discarded (see add_scope) */
            if (r >= 0) { /* else an abstract instance: only its local classes are of interest */
                scope = r;
                d = depth + 1;
            }
        } else if ((tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                    tag == DW_TAG_union_type) &&
                   !in_function) {
            continue;
        }
        if (walk(b, &child, scope, d, files, nfiles))
            return -1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const struct dw_range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    return x->scope < y->scope ? -1 : x->scope > y->scope;
}

/* DWARF mostly lists code in address order already: check before sorting. */
static void sort_if_needed(void *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *))
{
    const char *p = base;
    for (size_t i = 1; i < n; i++)
        if (cmp(p + (i - 1) * size, p + i * size) > 0) {
            qsort(base, n, size, cmp);
            return;
        }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sweeps the sorted ranges into segments whose scope is the innermost covering range. */
static int build_segments(struct builder *b)
{
    size_t n = b->nranges;
    if (!n)
        return 0;
    sort_if_needed(b->ranges, n, sizeof *b->ranges, cmp_range);
    uint32_t *bounds = malloc(2 * n * sizeof *bounds);
    size_t *stack = malloc(n * sizeof *stack);
    b->segments = malloc((2 * n + 1) * sizeof *b->segments);
    if (!bounds || !stack || !b->segments) {
        free(bounds);
        free(stack);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        bounds[2 * i] = b->ranges[i].lo;
        bounds[2 * i + 1] = b->ranges[i].hi;
    }
    qsort(bounds, 2 * n, sizeof *bounds, cmp_u32);
    size_t sp = 0, ri = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        uint32_t p = bounds[i];
        if (i && bounds[i - 1] == p)
            continue;
        while (ri < n && b->ranges[ri].lo == p)
            stack[sp++] = ri++;
        while (sp && b->ranges[stack[sp - 1]].hi <= p)
            sp--;
        struct dw_segment seg = {p, p, -1};
        if (sp) {
            seg.scope = b->ranges[stack[sp - 1]].scope;
            seg.range_start = b->ranges[stack[sp - 1]].lo;
        }
        struct dw_segment *last = b->nsegments ? &b->segments[b->nsegments - 1] : NULL;
        if (last && last->scope == seg.scope && last->range_start == seg.range_start)
            continue;
        b->segments[b->nsegments++] = seg;
    }
    free(bounds);
    free(stack);
    return 0;
}

static int build_functions(struct builder *b)
{
    spoor_elf *e = b->e;
    e->functions = malloc((b->nranges ? b->nranges : 1) * sizeof *e->functions);
    if (!e->functions)
        return -1;
    for (size_t i = 0; i < b->nranges; i++) { /* ranges are sorted by now */
        const struct dw_range *r = &b->ranges[i];
        if (e->scopes[r->scope].parent < 0)
            e->functions[e->nfunctions++] =
                (struct dw_function){r->lo, r->hi, e->scopes[r->scope].name};
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

#define MAX_CU_RANGES 4096

/* Whether a line row is code this unit really has: its address (for a row that ends a
 * sequence, the byte before it) lies in one of the unit's code ranges. Code the linker
 * discarded keeps line rows at address 0 and up; the unit's ranges leave it out (see
 * add_scope). libdw hands the rows out sorted by address, with the rows of different
 * sequences interleaved, so this is decided row by row. */
static int in_unit(const uint32_t (*ranges)[2], size_t n, uint32_t addr, bool end)
{
    if (end && addr)
        addr--;
    for (size_t i = 0; i < n; i++)
        if (addr >= ranges[i][0] && addr < ranges[i][1])
            return 1;
    return 0;
}

static uint32_t unit_code[MAX_CU_RANGES][2];

/* The unit's code ranges into unit_code; false when rows are to be judged without them. */
static bool unit_ranges(struct builder *b, Dwarf_Die *cu, size_t *nranges)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    *nranges = 0;
    while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0 && *nranges < MAX_CU_RANGES)
        if (lo < hi && hi <= UINT32_MAX && (lo != 0 || b->keep_zero)) {
            unit_code[*nranges][0] = (uint32_t)lo;
            unit_code[*nranges][1] = (uint32_t)hi;
            (*nranges)++;
        }
    /* without range attributes (or with more ranges than kept) fall back to dropping rows
     * at address 0 only */
    return off == 0 && (dwarf_hasattr(cu, DW_AT_ranges) || dwarf_hasattr(cu, DW_AT_low_pc));
}

/* The rows of a unit read by read_unit_lines, filtered like add_lines filters libdw's. */
static int add_unit_rows(struct builder *b, Dwarf_Die *cu, const struct unit_lines *u,
                         struct dw_line **rows, size_t *nrows)
{
    if (!u->nrows)
        return 0;
    size_t nranges;
    bool has_ranges = unit_ranges(b, cu, &nranges);
    for (size_t i = 0; i < u->nrows; i++) {
        const struct raw_line *l = &u->rows[i];
        if (has_ranges ? !in_unit((const uint32_t(*)[2])unit_code, nranges, l->addr, l->end)
                       : (l->addr == 0 && !b->keep_zero))
            continue;
        if (grow((void **)rows, &b->cap_lines, *nrows + 1, sizeof **rows))
            return -1;
        struct dw_line *r = &(*rows)[(*nrows)++];
        r->addr = l->addr;
        r->line = l->line > 0 ? (unsigned)l->line : 0;
        r->end_sequence = l->end;
        r->file = u->files[l->file];
    }
    return 0;
}

static int add_lines(struct builder *b, Dwarf_Die *cu, struct dw_line **rows, size_t *nrows)
{
    Dwarf_Lines *lines;
    size_t n;
    if (dwarf_getsrclines(cu, &lines, &n) != 0)
        return 0; /* a unit without a line program */
    size_t nranges;
    bool has_ranges = unit_ranges(b, cu, &nranges);
    const uint32_t(*ranges)[2] = (const uint32_t(*)[2])unit_code;
    for (size_t i = 0; i < n; i++) {
        Dwarf_Line *l = dwarf_onesrcline(lines, i);
        Dwarf_Addr addr;
        int line = 0;
        bool end = false;
        if (!l || dwarf_lineaddr(l, &addr) || addr > UINT32_MAX)
            continue;
        dwarf_lineno(l, &line);
        dwarf_lineendsequence(l, &end);
        if (has_ranges ? !in_unit(ranges, nranges, (uint32_t)addr, end)
                       : (addr == 0 && !b->keep_zero))
            continue;
        if (grow((void **)rows, &b->cap_lines, *nrows + 1, sizeof **rows))
            return -1;
        struct dw_line *r = &(*rows)[(*nrows)++];
        r->addr = (uint32_t)addr;
        r->line = line > 0 ? (unsigned)line : 0;
        r->end_sequence = end;
        r->file = dwarf_linesrc(l, NULL, NULL);
    }
    return 0;
}

/* Orders the rows by address into e->lines, which takes over rows (or frees it). libdw hands
 * out each unit's rows in address order, so the rows are a few ordered runs: merge neighbouring
 * runs pairwise until one is left (O(n log runs), and no worse on hostile input). */
static int flatten_lines(spoor_elf *e, struct dw_line *rows, size_t nrows)
{
    size_t nb = 2, nruns = 0;
    size_t *bounds = malloc(nb * sizeof *bounds); /* run k is [bounds[k], bounds[k+1]) */
    struct dw_line *tmp = NULL;
    if (!bounds)
        goto oom;
    bounds[0] = 0;
    for (size_t i = 1; i <= nrows; i++)
        if (i == nrows || cmp_line(&rows[i - 1], &rows[i]) > 0) {
            if (grow((void **)&bounds, &nb, nruns + 2, sizeof *bounds))
                goto oom;
            bounds[++nruns] = i;
        }
    if (nruns > 1 && !(tmp = malloc(nrows * sizeof *tmp)))
        goto oom;
    struct dw_line *src = rows, *dst = tmp;
    while (nruns > 1) {
        size_t out = 0;
        for (size_t k = 0; k < nruns; k += 2) {
            size_t i = bounds[k], mid = bounds[k + 1], end = k + 2 <= nruns ? bounds[k + 2] : mid;
            size_t j = mid, o = i;
            while (i < mid && j < end)
                dst[o++] = cmp_line(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < end)
                dst[o++] = src[j++];
            bounds[out++] = bounds[k];
        }
        bounds[out] = nrows;
        nruns = out;
        struct dw_line *t = src;
        src = dst;
        dst = t;
    }
    e->lines = src;
    e->nlines = nrows;
    free(dst);
    free(bounds);
    return 0;
oom:
    free(bounds);
    free(tmp);
    free(rows);
    return -1;
}

/* Merges the segments and the line rows into spans: at every address where either starts,
 * the segment and the line row in force there. */
static int build_spans(struct builder *b)
{
    spoor_elf *e = b->e;
    size_t ns = b->nsegments, nl = e->nlines;
    if (!ns && !nl)
        return 0;
    e->spans = malloc((ns + nl) * sizeof *e->spans);
    if (!e->spans)
        return -1;
    size_t i = 0, j = 0, n = 0;
    while (i < ns || j < nl) {
        uint32_t p = i < ns && (j == nl || b->segments[i].start <= e->lines[j].addr)
                         ? b->segments[i].start
                         : e->lines[j].addr;
        while (i < ns && b->segments[i].start <= p)
            i++;
        while (j < nl && e->lines[j].addr <= p)
            j++;
        struct dw_span *sp = &e->spans[n++];
        sp->start = p;
        sp->scope = i ? b->segments[i - 1].scope : -1;
        sp->range_start = i ? b->segments[i - 1].range_start : 0;
        const struct dw_line *row = j && !e->lines[j - 1].end_sequence ? &e->lines[j - 1] : NULL;
        sp->line = row ? row->line : 0;
        sp->file = row ? row->file : NULL;
    }
    e->nspans = n;
    free(e->lines); /* the spans hold all that lookups need */
    e->lines = NULL;
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
static size_t upper_bound(const struct page_index *ix, const void *addr0, size_t stride, size_t n,
                          uint32_t addr)
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

/* The units' DIEs one after the other: *off is where to look next. */
static bool next_unit(Dwarf *dwarf, Dwarf_Off *off, Dwarf_Die *cu)
{
    Dwarf_Off next;
    size_t hsize;
    while (dwarf_nextcu(dwarf, *off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Off here = *off;
        *off = next;
        if (dwarf_offdie(dwarf, here + hsize, cu))
            return true;
    }
    return false;
}

static int build(struct builder *b)
{
    spoor_elf *e = b->e;
    Dwarf_Die cu;
    Dwarf_Off off = 0;
    struct dw_line *rows = NULL;
    size_t nrows = 0;
    struct unit_lines u = {0};
    const struct elf_section *line_section = debug_section(e, ".debug_line");
    int failed = 0;
    while (!failed && next_unit(e->dwarf, &off, &cu)) {
        Dwarf_Attribute attr, dir_attr;
        Dwarf_Word stmt_list;
        int own = 1; /* 0: read here; 1: through libdw */
        if (line_section && dwarf_attr(&cu, DW_AT_stmt_list, &attr) &&
            !dwarf_formudata(&attr, &stmt_list))
            own = read_unit_lines(e, line_section, stmt_list,
                                  dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &dir_attr)), &u);
        if (own < 0) {
            failed = 1;
        } else if (own == 0) {
            failed =
                walk(b, &cu, -1, 0, u.files, u.nfiles) || add_unit_rows(b, &cu, &u, &rows, &nrows);
        } else {
            Dwarf_Files *files = NULL;
            size_t nfiles = 0;
            u.nfiles = 0;
            if (dwarf_getsrcfiles(&cu, &files, &nfiles) == 0)
                for (size_t i = 0; i < nfiles && !failed; i++)
                    failed = !add_name(&u.files, &u.nfiles, &u.cap_files,
                                       dwarf_filesrc(files, i, NULL, NULL));
            failed = failed || walk(b, &cu, -1, 0, u.nfiles ? u.files : NULL, u.nfiles) ||
                     add_lines(b, &cu, &rows, &nrows);
        }
    }
    free(u.files);
    free(u.dirs);
    free(u.rows);
    if (failed) {
        free(rows);
        return -1;
    }
    if (build_segments(b) || build_functions(b)) {
        free(rows);
        return -1;
    }
    if (!nrows)
        free(rows);
    else if (flatten_lines(e, rows, nrows)) /* takes over rows */
        return -1;
    if (build_spans(b))
        return -1;
    if (e->nspans)
        index_pages(&e->span_pages, &e->spans[0].start, sizeof *e->spans, e->nspans);
    return 0;
}

void spoor_elf_prepare_dwarf(spoor_elf *e)
{
    if (e->tables_ready)
        return;
    e->tables_ready = 1;
    if (!e->dwarf)
        return;
    struct builder b = {.e = e};
    b.keep_zero = e->nsymbols && e->symbols[0].start == 0;
    if (build(&b)) { /* out of memory: fall back to the symbol table alone */
        free(e->scopes);
        free(e->lines);
        free(e->spans);
        free(e->functions);
        e->scopes = NULL;
        e->lines = NULL;
        e->spans = NULL;
        e->functions = NULL;
        free(e->span_pages.first);
        memset(&e->span_pages, 0, sizeof e->span_pages);
        e->nscopes = e->nlines = e->nspans = e->nfunctions = 0;
    }
    free(b.ranges);
    free(b.segments);
}

/* A function name as lookups hand it out: demangled, unless spoor_elf_set_demangle() said not. */
static const char *shown_name(spoor_elf *e, const char *name)
{
    return e->raw_names || !spoor_may_be_mangled(name) ? name
                                                       : spoor_demangle_cached(&e->demangled, name);
}

static const struct dw_span *span_at(const spoor_elf *e, uint32_t addr)
{
    size_t i = upper_bound(&e->span_pages, e->spans ? &e->spans[0].start : NULL, sizeof *e->spans,
                           e->nspans, addr);
    return i ? &e->spans[i - 1] : NULL;
}

size_t spoor_elf_symbolize(const spoor_elf *ce, uint32_t addr, spoor_location *frames, size_t max)
{
    spoor_elf *e = (spoor_elf *)ce; /* tables are built on first use */
    if (!max)
        return 0;
    if (!e->tables_ready)
        spoor_elf_prepare_dwarf(e);
    addr &= ~1u;
    spoor_location *f = &frames[0];
    f->function = NULL;
    f->offset = 0;
    f->has_offset = false;
    f->file = NULL;
    f->line = 0;
    const struct dw_span *span = span_at(e, addr);
    int32_t scope = span ? span->scope : -1;
    if (scope >= 0 && e->scopes[scope].name) {
        f->function = shown_name(e, e->scopes[scope].name);
        f->offset = addr - span->range_start;
        f->has_offset = true;
    } else {
        const struct elf_symbol *sym = spoor_elf_symbol_at(e, addr);
        if (sym) {
            f->function = shown_name(e, sym->name);
            f->offset = addr - sym->start;
            f->has_offset = true;
        }
    }
    if (span) {
        f->file = span->file;
        f->line = span->line;
    }
    size_t n = 1;
    for (int32_t s = scope; s >= 0 && e->scopes[s].parent >= 0 && n < max;
         s = e->scopes[s].parent) {
        f = &frames[n++];
        f->function = shown_name(e, e->scopes[e->scopes[s].parent].name);
        f->offset = 0;
        f->has_offset = false;
        f->file = e->scopes[s].call_file;
        f->line = e->scopes[s].call_line;
    }
    return n;
}

bool spoor_elf_function(const spoor_elf *ce, uint32_t addr, const char **name, uint32_t *start,
                        uint32_t *size)
{
    spoor_elf *e = (spoor_elf *)ce;
    spoor_elf_prepare_dwarf(e);
    addr &= ~1u;
    size_t lo = 0, hi = e->nfunctions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->functions[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) { /* ranges of one function may nest a later start */
        const struct dw_function *f = &e->functions[i];
        if (addr < f->end) {
            if (name)
                *name = shown_name(e, f->name);
            if (start)
                *start = f->start;
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
