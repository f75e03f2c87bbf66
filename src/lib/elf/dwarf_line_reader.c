/* spoor's own reader of the .debug_line program, and a unit's line rows through it or libdw.
 *
 * libdw's dwarf_getsrclines builds a line record of some 40 bytes per row, sorts them and
 * resolves each row's file; for a symbolizer that is most of the loading time. The reader below
 * decodes the line program of DWARF 2 to 5 into (address, line, file, end of sequence) rows in
 * program order (which the merge in flatten_lines puts into libdw's order: by address, a
 * sequence's end first, then program order) and names files the way libdw does: an absolute
 * name as it is, else directory "/" name, where directory 0 is DW_AT_comp_dir before DWARF 5
 * and file 0 is "???" before DWARF 5. Anything it does not handle (compressed sections,
 * DW_LNE_define_file, VLIW op_index, 64-bit addresses, malformed data) makes it give up on the
 * unit, and the unit goes through libdw. */
#include <dwarf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/partition_point.h"
#include "elf/symbols_internal.h"

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

/* Room for n bytes of composed names in the chain *names; NULL without memory. */
static char *name_space(struct name_block **names, size_t n)
{
    struct name_block *b = *names;
    if (!b || b->size - b->used < n) {
        size_t size = n > 16384 ? n : 16384;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = *names;
        b->size = size;
        b->used = 0;
        *names = b;
    }
    char *p = b->text + b->used;
    b->used += n;
    return p;
}

/* A DWARF 5 directory or file entry: its DW_LNCT_path string and DW_LNCT_directory_index.
 * 0: read; 1: a form the reader does not know (libdw may); 2: malformed (a string offset past
 * its section, data past the unit, no path). */
static line_status read_entry(struct line_reader *r, const uint64_t (*format)[2], size_t nformat,
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
                return LINE_MALFORMED;
            r->p += n;
            break;
        }
        default: return LINE_NOT_HANDLED;
        }
        if (r->bad)
            return LINE_MALFORMED;
        if (type == DW_LNCT_path) {
            if (!sv)
                return LINE_MALFORMED;
            *path = sv;
        } else if (type == DW_LNCT_directory_index) {
            *dir = v;
        }
    }
    return *path ? 0 : 2;
}

/* Says why a line program is malformed (u->problem); its file names are kept only when the
 * header was read to its end. Returns 2. */
static line_status malformed(struct unit_lines *u, bool header_read, const char *fmt, ...)
    SPOOR_PRINTF(3, 4);
static line_status malformed(struct unit_lines *u, bool header_read, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->problem, sizeof u->problem, fmt, ap);
    va_end(ap);
    if (!header_read)
        u->nfiles = 0;
    return LINE_MALFORMED;
}

#define MAX_LINE_FORMATS 16

static bool add_name(const char ***v, size_t *n, size_t *cap, const char *name)
{
    if (spoor_grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = name;
    return true;
}

/* The name libdw gives a file: absolute as it is, else directory "/" name (the name alone when
 * the directory is unknown). NULL without memory. */
static const char *file_name(struct name_block **names, const struct unit_lines *u,
                             const char *name, uint64_t dir)
{
    if (name[0] == '/')
        return name;
    const char *d = u->dirs[dir];
    if (!d)
        return name;
    size_t dl = strlen(d), nl = strlen(name);
    char *s = name_space(names, dl + nl + 2);
    if (!s)
        return NULL;
    memcpy(s, d, dl);
    s[dl] = '/';
    memcpy(s + dl + 1, name, nl + 1);
    return s;
}

/* What the header of a unit's line program says (the fields the opcodes need). */
struct line_header {
    const struct elf_section *sec; /* .debug_line */
    unsigned version, offset_size;
    unsigned min_inst, line_range, opcode_base;
    int line_base;
    uint64_t header_length;
    const uint8_t *op_lengths; /* operand counts of the standard opcodes 1 .. opcode_base - 1 */
    const uint8_t *program;    /* the first opcode */
};

/* The unit's header up to its directory and file tables (r left at them, r->end at the unit's
 * end). 0: read; 1: not handled here; 2: malformed (u->problem says why). */
static line_status read_line_header(const struct elf_section *sec, uint64_t off,
                                    struct line_reader *r, struct line_header *h,
                                    struct unit_lines *u)
{
    h->sec = sec;
    if (off >= sec->size || sec->size - off < 4)
        return malformed(u, false, "DW_AT_stmt_list 0x%llx past the end of .debug_line",
                         (unsigned long long)off);
    *r = (struct line_reader){sec->data + off, sec->data + sec->size, 0};
    h->offset_size = 4;
    uint64_t length = rd_fixed(r, 4);
    if (length == 0xffffffffu) {
        h->offset_size = 8;
        length = rd_fixed(r, 8);
    } else if (length >= 0xfffffff0u) {
        return malformed(u, false, "reserved unit length 0x%llx", (unsigned long long)length);
    }
    if (r->bad || length > (uint64_t)(r->end - r->p))
        return malformed(u, false, "unit length 0x%llx past the end of the section",
                         (unsigned long long)length);
    r->end = r->p + length;
    h->version = (unsigned)rd_fixed(r, 2);
    if (r->bad || h->version < 2 || h->version > 5)
        return malformed(u, false, "version %u", h->version);
    if (h->version >= 5) {
        unsigned address_size = (unsigned)rd_fixed(r, 1);
        unsigned seg_size = (unsigned)rd_fixed(r, 1);
        if (r->bad || (address_size != 4 && address_size != 8))
            return malformed(u, false, "address size %u", address_size);
        if (address_size != 4 || seg_size != 0)
            return LINE_NOT_HANDLED;
    }
    h->header_length = rd_fixed(r, h->offset_size);
    if (r->bad || h->header_length > (uint64_t)(r->end - r->p))
        return malformed(u, false, "header_length 0x%llx past the unit",
                         (unsigned long long)h->header_length);
    h->program = r->p + h->header_length;
    h->min_inst = (unsigned)rd_fixed(r, 1);
    unsigned max_ops = h->version >= 4 ? (unsigned)rd_fixed(r, 1) : 1;
    rd_fixed(r, 1); /* default_is_stmt: every row counts */
    h->line_base = (int8_t)rd_fixed(r, 1);
    h->line_range = (unsigned)rd_fixed(r, 1);
    h->opcode_base = (unsigned)rd_fixed(r, 1);
    if (r->bad || (size_t)(h->program - r->p) < (h->opcode_base ? h->opcode_base - 1 : 0))
        return malformed(u, false, "header ends early");
    if (h->line_range == 0 || h->opcode_base == 0 || max_ops == 0)
        return malformed(u, false, "%s 0",
                         h->line_range == 0    ? "line_range"
                         : h->opcode_base == 0 ? "opcode_base"
                                               : "maximum_operations_per_instruction");
    if (max_ops != 1)
        return LINE_NOT_HANDLED; /* VLIW */
    h->op_lengths = r->p;
    r->p += h->opcode_base - 1;
    return LINE_DONE;
}

/* The directory and file tables of DWARF 5 (entry formats, then entries) into u. 0: read;
 * 1: a form or more formats than the reader handles; 2: malformed; -1: out of memory. */
static line_status read_v5_names(const spoor_elf *e, struct name_block **names,
                                 struct line_reader *r, const struct line_header *h,
                                 struct unit_lines *u)
{
    const struct elf_section *str = spoor_elf_known_section(e, SEC_DEBUG_STR);
    const struct elf_section *line_str = spoor_elf_known_section(e, SEC_DEBUG_LINE_STR);
    for (int pass = 0; pass < 2; pass++) { /* directories, then files */
        const char *what = pass ? "file" : "directory";
        uint64_t format[MAX_LINE_FORMATS][2];
        size_t nformat = (size_t)rd_fixed(r, 1);
        if (nformat > MAX_LINE_FORMATS)
            return LINE_NOT_HANDLED;
        for (size_t k = 0; k < nformat; k++) {
            format[k][0] = rd_uleb(r);
            format[k][1] = rd_uleb(r);
        }
        uint64_t count = rd_uleb(r);
        if (r->bad || count > (uint64_t)(r->end - r->p))
            return malformed(u, false, "%s count %llu past the unit", what,
                             (unsigned long long)count);
        for (uint64_t k = 0; k < count; k++) {
            const char *path;
            uint64_t dir;
            line_status got = read_entry(r, (const uint64_t(*)[2])format, nformat, h->offset_size,
                                         str, line_str, &path, &dir);
            if (got == LINE_NOT_HANDLED)
                return LINE_NOT_HANDLED;
            if (got != LINE_DONE)
                return malformed(u, false, "%s entry %llu unreadable", what, (unsigned long long)k);
            if (pass == 0) {
                if (!add_name(&u->dirs, &u->ndirs, &u->cap_dirs, path))
                    return LINE_NOMEM;
                continue;
            }
            if (dir >= u->ndirs)
                return malformed(u, false, "file %llu: directory %llu of %zu",
                                 (unsigned long long)k, (unsigned long long)dir, u->ndirs);
            const char *name = file_name(names, u, path, dir);
            if (!name || !add_name(&u->files, &u->nfiles, &u->cap_files, name))
                return LINE_NOMEM;
        }
    }
    return LINE_DONE;
}

/* The include directories and file names of DWARF 2 to 4 into u, after directory 0
 * (comp_dir) and file 0 ("???"). 0: read; 2: malformed; -1: out of memory. */
static line_status read_v2_names(struct name_block **names, struct line_reader *r,
                                 const char *comp_dir, struct unit_lines *u)
{
    if (!add_name(&u->dirs, &u->ndirs, &u->cap_dirs, comp_dir) ||
        !add_name(&u->files, &u->nfiles, &u->cap_files, "???"))
        return LINE_NOMEM;
    for (;;) {
        const char *d = rd_cstr(r);
        if (r->bad)
            return malformed(u, false, "header ends inside the directories");
        if (!*d)
            break;
        if (!add_name(&u->dirs, &u->ndirs, &u->cap_dirs, d))
            return LINE_NOMEM;
    }
    for (;;) {
        const char *f = rd_cstr(r);
        if (r->bad)
            return malformed(u, false, "header ends inside the file names");
        if (!*f)
            return LINE_DONE;
        uint64_t dir = rd_uleb(r);
        rd_uleb(r); /* modification time */
        rd_uleb(r); /* length */
        if (r->bad)
            return malformed(u, false, "header ends inside the file names");
        if (dir >= u->ndirs)
            return malformed(u, false, "file %zu: directory %llu of %zu", u->nfiles,
                             (unsigned long long)dir, u->ndirs);
        const char *name = file_name(names, u, f, dir);
        if (!name || !add_name(&u->files, &u->nfiles, &u->cap_files, name))
            return LINE_NOMEM;
    }
}

/* Whether a line row is code this unit really has: its address (for a row that ends a
 * sequence, the byte before it) lies in one of the unit's code ranges. Code the linker
 * discarded keeps line rows at address 0 and up; the unit's ranges leave it out (see
 * add_scope in dwarf_scopes.c). libdw hands the rows out sorted by address, with the rows of
 * different sequences interleaved, so this is decided row by row. */
struct claim_key {
    const struct unit_claims *c;
    uint32_t addr;
};

static bool claim_before(const void *ctx, size_t i) /* the claim ends at or below addr */
{
    const struct claim_key *k = ctx;
    return k->c->ranges[i][1] <= k->addr;
}

/* The claim addr lies in, into *hint; false when there is none. */
static bool find_claim(const struct unit_claims *c, uint32_t addr, size_t *hint)
{
    const struct claim_key key = {c, addr};
    size_t lo = spoor_partition_point(0, c->n, claim_before, &key);
    if (lo < c->n && addr >= c->ranges[lo][0]) {
        *hint = lo;
        return true;
    }
    return false;
}

/* *hint: the claim that held the last row kept (rows mostly follow each other in a claim),
 * tried before the search. */
static inline bool keep_row(const struct unit_claims *c, bool keep_zero, uint32_t addr, bool end,
                            size_t *hint)
{
    if (!c->known)
        return addr != 0 || keep_zero;
    if (end && addr)
        addr--;
    if (*hint < c->n && addr >= c->ranges[*hint][0] && addr < c->ranges[*hint][1])
        return true; /* the claims are sorted and disjoint: the search would find this one */
    return find_claim(c, addr, hint);
}

/* Where the reader puts its rows: the caller's array of rows, the kept ones appended in program
 * order as struct dw_line (see keep_row), and what it knows of the row last in libdw's order
 * (see end_last_row). */
struct line_out {
    struct dw_line *rows;
    size_t n, cap;
    const struct unit_claims *claims;
    bool keep_zero;
    size_t hint;              /* keep_row's */
    const char *const *files; /* the unit's files (u->files) */
    /* the row last in libdw's order so far: its registers, whether it was kept and how many
     * rows were kept before it (its place in rows) */
    bool any, last_end, last_kept;
    uint32_t last_addr;
    uint64_t last_file;
    int64_t last_line;
    size_t last_pos;
};

/* The state machine's registers (DWARF 5, 6.2.2), as far as the reader keeps them. */
struct line_state {
    uint64_t addr, file;
    int64_t line;
    bool emit, end;    /* the opcode just run appends a row; it ends a sequence */
    bool dropped_high; /* a row above 32 bits was left out */
};

/* Runs the extended opcode at op_at (r past its 0 byte). 0: done; 1: not handled here;
 * 2: malformed. */
static line_status extended_opcode(struct line_reader *r, const struct line_header *h,
                                   const uint8_t *op_at, struct line_state *s, struct unit_lines *u)
{
    unsigned long long at = (unsigned long long)(op_at - h->sec->data);
    uint64_t len = rd_uleb(r);
    if (r->bad || len == 0 || len > (uint64_t)(r->end - r->p))
        return malformed(u, true, "extended opcode at 0x%llx: length past the unit", at);
    const uint8_t *next = r->p + len;
    unsigned sub = *r->p++;
    switch (sub) {
    case DW_LNE_end_sequence: s->emit = s->end = true; break;
    case DW_LNE_set_address:
        if (len != 5) /* 1 + the address size, 4 (the header says so in DWARF 5) */
            return malformed(u, true, "DW_LNE_set_address at 0x%llx of length %llu", at,
                             (unsigned long long)len);
        s->addr = rd_fixed(r, 4);
        break;
    case DW_LNE_set_discriminator: break;
    case DW_LNE_define_file: return LINE_NOT_HANDLED;
    case 0x80: break; /* DW_LNE_HP_source_file_correlation */
    default:
        /* DWARF defines 1 to 4; of the producers' 0x80 to 0xff, no ARM compiler emits one, and
         * binutils knows only HP's: another one is a damaged program */
        return malformed(u, true, "unknown extended opcode 0x%x at 0x%llx", sub, at);
    }
    r->p = next;
    return LINE_DONE;
}

/* Runs the standard opcode op at op_at (r past it). 0: done; 2: malformed. */
static line_status standard_opcode(struct line_reader *r, const struct line_header *h, unsigned op,
                                   const uint8_t *op_at, struct line_state *s, struct unit_lines *u)
{
    switch (op) {
    case DW_LNS_copy: s->emit = true; break;
    case DW_LNS_advance_pc: s->addr += rd_uleb(r) * h->min_inst; break;
    case DW_LNS_advance_line: s->line += rd_sleb(r); break;
    case DW_LNS_set_file:
        s->file = rd_uleb(r);
        if (!r->bad && s->file >= u->nfiles) /* as binutils: a file the header lacks */
            return malformed(u, true, "DW_LNS_set_file %llu of %zu at 0x%llx",
                             (unsigned long long)s->file, u->nfiles,
                             (unsigned long long)(op_at - h->sec->data));
        break;
    case DW_LNS_const_add_pc:
        s->addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
        break;
    case DW_LNS_fixed_advance_pc: s->addr += rd_fixed(r, 2); break;
    default: /* other standard opcodes: skip their operands */
        for (unsigned k = 0; k < h->op_lengths[op - 1]; k++)
            rd_uleb(r);
        break;
    }
    return LINE_DONE;
}

/* A row as the callers get it. */
static inline struct dw_line out_row(const struct line_out *o, uint32_t addr, int64_t line,
                                     bool end, uint64_t file)
{
    struct dw_line row; /* made whole in registers, then stored at once */
    row.addr = addr;
    row.line = line > 0 ? (unsigned)line : 0;
    row.end_sequence = end;
    row.file = o->files[file];
    return row;
}

/* Appends the row the state says (rows above 32 bits are left out), and starts a new sequence
 * after one that ends. 0: done; 1: a line past 32 bits; 2: malformed; -1: out of memory. */
static line_status emit_row(struct line_state *s, struct unit_lines *u, struct line_out *o)
{
    if (s->emit && s->addr <= UINT32_MAX) {
        if (s->file >= u->nfiles)
            return malformed(u, true, "row at 0x%llx: file %llu of %zu",
                             (unsigned long long)s->addr, (unsigned long long)s->file, u->nfiles);
        if (s->line < INT32_MIN || s->line > INT32_MAX)
            return LINE_NOT_HANDLED;
        if (spoor_grow((void **)&o->rows, &o->cap, o->n + 1, sizeof *o->rows))
            return LINE_NOMEM;
        uint32_t addr = (uint32_t)s->addr;
        bool keep = keep_row(o->claims, o->keep_zero, addr, s->end, &o->hint);
        if (!o->any || addr > o->last_addr ||
            (addr == o->last_addr && (!s->end || o->last_end))) { /* later in libdw's order */
            o->any = true;
            o->last_addr = addr;
            o->last_end = s->end;
            o->last_file = s->file;
            o->last_line = s->line;
            o->last_kept = keep;
            o->last_pos = o->n;
        }
        if (keep)
            o->rows[o->n++] = out_row(o, addr, s->line, s->end, s->file);
    } else if (s->emit) {
        s->dropped_high = true;
    }
    if (s->end) {
        s->addr = 0;
        s->file = 1;
        s->line = 1;
    }
    return LINE_DONE;
}

/* The row last in libdw's order a row run_line_program kept itself: one that does not end a
 * sequence, at last_pos in o's rows (its file and line are there). */
static void sync_last(struct line_out *o, uint32_t last_addr, size_t last_pos)
{
    o->any = true;
    o->last_addr = last_addr;
    o->last_end = false;
    o->last_kept = true;
    o->last_pos = last_pos;
}

/* What run_line_program does with an opcode below the opcode base. */
enum {
    OP_COPY,       /* a row */
    OP_ADVANCE_PC, /* its common forms in place */
    OP_ADVANCE_LINE,
    OP_SET_FILE,
    OP_CONST_ADD_PC,
    OP_SKIP,     /* another standard opcode without operands */
    OP_SKIP_ONE, /* another standard opcode with one operand */
    OP_GENERAL,  /* by the functions above */
};

/* The classes of the opcodes below h's opcode base, made once for each shape of header (units of
 * one producer share it). */
static const uint8_t *op_classes(struct unit_lines *u, const struct line_header *h)
{
    unsigned base = h->opcode_base;
    if (u->op_key[0] == base && !memcmp(u->op_key + 1, h->op_lengths, base ? base - 1 : 0))
        return u->op_class;
    for (unsigned op = 0; op < base; op++) {
        unsigned n = op ? h->op_lengths[op - 1] : 0;
        switch (op) {
        case DW_LNS_copy: u->op_class[op] = OP_COPY; break;
        case DW_LNS_advance_pc: u->op_class[op] = OP_ADVANCE_PC; break;
        case DW_LNS_advance_line: u->op_class[op] = OP_ADVANCE_LINE; break;
        case DW_LNS_set_file: u->op_class[op] = OP_SET_FILE; break;
        case DW_LNS_const_add_pc: u->op_class[op] = OP_CONST_ADD_PC; break;
        case 0:
        case DW_LNS_fixed_advance_pc: u->op_class[op] = OP_GENERAL; break;
        default: u->op_class[op] = n == 0 ? OP_SKIP : n == 1 ? OP_SKIP_ONE : OP_GENERAL; break;
        }
    }
    u->op_key[0] = (uint8_t)base;
    if (base)
        memcpy(u->op_key + 1, h->op_lengths, base - 1);
    return u->op_class;
}

/* u's tables of the special opcodes' address and line advances for h's opcode base, line base,
 * line range and minimum instruction length, made once for each such header (units of one
 * producer share it). */
static void special_steps(struct unit_lines *u, const struct line_header *h)
{
    uint64_t key = 1ull << 40 | (uint64_t)(h->min_inst & 0xff) << 32 |
                   (uint64_t)(uint8_t)h->line_base << 24 | (uint64_t)(h->line_range & 0xff) << 16 |
                   (h->opcode_base & 0xff);
    if (u->special_key == key)
        return;
    for (unsigned op = h->opcode_base; op < 256; op++) {
        unsigned adj = op - h->opcode_base;
        u->special_addr[op] = (uint16_t)(adj / h->line_range * h->min_inst);
        u->special_line[op] = (int16_t)(h->line_base + (int)(adj % h->line_range));
    }
    u->special_key = key;
}

/* Runs the line program from r->p to the unit's end into o's rows; *dropped_high when a row
 * above 32 bits was left out. 0: done; 1: not handled here; 2: malformed; -1: out of memory.
 * The common opcodes (special ones, DW_LNS_copy, the standard ones with operands of one byte)
 * and their rows are run here, with the registers and the rows in locals; every other case,
 * and any row that is not plain (one that ends a sequence, above 32 bits, a file the header
 * lacks, a line past 32 bits, no room left, outside the claim kept last), by the functions
 * above, which say what is wrong. */
static line_status run_line_program(struct line_reader *r, const struct line_header *h,
                                    struct unit_lines *u, struct line_out *o, bool *dropped_high)
{
    const uint8_t *const op_class = op_classes(u, h);
    special_steps(u, h);
    const uint16_t *const special_addr = u->special_addr;
    const int16_t *const special_line = u->special_line;
    struct line_state s = {.addr = 0, .file = 1, .line = 1};
    const uint8_t *p = r->p, *const end = r->end;
    const unsigned base = h->opcode_base, range = h->line_range;
    const uint64_t min_inst = h->min_inst;
    const uint64_t const_add = (uint64_t)((255 - base) / range) * min_inst;
    const size_t nfiles = u->nfiles;
    const char *const *const files = o->files;
    uint64_t addr = 0, file = 1;
    int64_t line = 1;
    const char *name = file < nfiles ? files[file] : NULL; /* NULL: a file the header lacks */
    if (spoor_grow((void **)&o->rows, &o->cap, o->n + 1, sizeof *o->rows))
        return LINE_NOMEM; /* room for a row: out below is never NULL */
    struct dw_line *out = o->rows + o->n, *out_end = o->rows + o->cap;
    /* the addresses keep_lo to keep_lo + keep_len keep_row keeps without a search: the claim it
     * found last, or every address but 0 (and 0 too when kept) without claims */
    const struct unit_claims *const claims = o->claims;
    uint64_t keep_lo = 0, keep_len = 0;
    if (!claims->known) {
        keep_lo = o->keep_zero ? 0 : 1;
        keep_len = (uint64_t)UINT32_MAX + 1 - keep_lo;
    } else if (claims->n) {
        keep_lo = claims->ranges[0][0];
        keep_len = claims->ranges[0][1] - keep_lo;
    }
    /* o's row last in libdw's order, in locals while it is a row kept here (fast_last); 0 before
     * the first row, which comes later than none */
    bool fast_last = false;
    uint32_t last_addr = o->any ? o->last_addr : 0;
    struct dw_line *last_at = NULL;
    while (p < end) {
        const uint8_t *op_at = p;
        unsigned op = *p++;
        if (op >= base) {
            addr += special_addr[op];
            line += special_line[op];
            goto emit;
        }
        switch (op_class[op]) {
        case OP_COPY: goto emit;
        case OP_ADVANCE_PC:
            if (p < end && *p < 0x80) {
                addr += *p++ * min_inst;
                continue;
            }
            break;
        case OP_ADVANCE_LINE:
            if (p < end && *p < 0x80) { /* a signed LEB128 of one byte: bit 6 its sign */
                line += (int64_t)(*p & 0x3f) - (int64_t)(*p & 0x40);
                p++;
                continue;
            }
            break;
        case OP_SET_FILE:
            if (p < end && *p < 0x80 && *p < nfiles) {
                file = *p++;
                name = files[file];
                continue;
            }
            break;
        case OP_CONST_ADD_PC: addr += const_add; continue;
        case OP_SKIP: continue; /* other standard opcodes: skip their operands */
        case OP_SKIP_ONE:
            if (p < end && *p < 0x80) { /* of one byte here */
                p++;
                continue;
            }
            break;
        default: break;
        }
        { /* the general case, by the functions above */
            line_status got;
            r->p = op_at + 1;
            s.addr = addr;
            s.file = file;
            s.line = line;
            s.emit = s.end = false;
            o->n = (size_t)(out - o->rows);
            if (fast_last)
                sync_last(o, last_addr, (size_t)(last_at - o->rows));
            fast_last = false;
            if (op == 0)
                got = extended_opcode(r, h, op_at, &s, u);
            else
                got = standard_opcode(r, h, op, op_at, &s, u);
            if (got != LINE_DONE)
                return got;
            if (r->bad)
                return malformed(u, true, "the program ends inside an opcode");
            if ((got = emit_row(&s, u, o)) != LINE_DONE)
                return got;
            goto synced;
        }
    emit: /* a row that does not end a sequence */
        if (addr - keep_lo < keep_len && name && (uint64_t)(line - INT32_MIN) <= UINT32_MAX &&
            out < out_end) {         /* kept, in the claim of the last row kept */
            if (addr >= last_addr) { /* later than the last so far in libdw's order */
                fast_last = true;
                last_addr = (uint32_t)addr;
                last_at = out;
            }
            struct dw_line row; /* made whole in registers, then stored at once */
            row.addr = (uint32_t)addr;
            row.line = line > 0 ? (unsigned)line : 0;
            row.end_sequence = 0;
            row.file = name;
            *out++ = row;
            continue;
        }
        {
            line_status got;
            r->p = p;
            s.addr = addr;
            s.file = file;
            s.line = line;
            s.emit = true;
            s.end = false;
            o->n = (size_t)(out - o->rows);
            if (fast_last)
                sync_last(o, last_addr, (size_t)(last_at - o->rows));
            fast_last = false;
            if ((got = emit_row(&s, u, o)) != LINE_DONE)
                return got;
        }
    synced: /* the registers back from s and o */
        p = r->p;
        addr = s.addr;
        file = s.file;
        line = s.line;
        name = file < nfiles ? files[file] : NULL;
        out = o->rows + o->n;
        out_end = o->rows + o->cap;
        last_addr = o->any ? o->last_addr : 0;
        if (claims->known && o->hint < claims->n) {
            keep_lo = claims->ranges[o->hint][0];
            keep_len = claims->ranges[o->hint][1] - keep_lo;
        }
    }
    o->n = (size_t)(out - o->rows);
    if (fast_last)
        sync_last(o, last_addr, (size_t)(last_at - o->rows));
    *dropped_high = s.dropped_high;
    return LINE_DONE;
}

/* libdw marks the last row in its order (highest address; there, the last row that does not
 * end a sequence, else the last that does) as ending a sequence: so does the reader, with the
 * row emit_row found, which may then be kept where it was not or not kept where it was (for a
 * row that ends a sequence, the byte before it counts). -1 without memory. */
static int end_last_row(struct line_out *o)
{
    if (!o->any || o->last_end)
        return 0;
    bool keep = keep_row(o->claims, o->keep_zero, o->last_addr, true, &o->hint);
    struct dw_line *at = o->rows + o->last_pos;
    if (keep && o->last_kept) {
        at->end_sequence = 1;
    } else if (o->last_kept) {
        memmove(at, at + 1, (o->n - o->last_pos - 1) * sizeof *at);
        o->n--;
    } else if (keep) {
        if (spoor_grow((void **)&o->rows, &o->cap, o->n + 1, sizeof *o->rows))
            return -1;
        at = o->rows + o->last_pos;
        memmove(at + 1, at, (o->n - o->last_pos) * sizeof *at);
        *at = out_row(o, o->last_addr, o->last_line, true, o->last_file);
        o->n++;
    }
    return 0;
}

line_status spoor_line_program_read(const spoor_elf *e, struct name_block **names, uint64_t off,
                                    const char *comp_dir, const struct unit_claims *claims,
                                    bool keep_zero, struct unit_lines *u, struct dw_line **rows,
                                    size_t *nrows, size_t *cap_rows)
{
    const struct elf_section *sec = spoor_elf_known_section(e, SEC_DEBUG_LINE);
    u->nfiles = u->ndirs = 0;
    u->problem[0] = 0;
    if (!sec)
        return LINE_NOT_HANDLED; /* absent or compressed: libdw decides */
    struct line_reader r = {0};
    struct line_header h = {0};
    line_status got = read_line_header(sec, off, &r, &h, u);
    if (got == LINE_DONE)
        got = h.version >= 5 ? read_v5_names(e, names, &r, &h, u)
                             : read_v2_names(names, &r, comp_dir, u);
    if (got != LINE_DONE)
        return got;
    if (r.bad || r.p > h.program)
        return malformed(u, false, "header longer than its header_length 0x%llx",
                         (unsigned long long)h.header_length);
    r.p = h.program;
    bool dropped_high = false;
    struct line_out o = {.rows = *rows,
                         .n = *nrows,
                         .cap = *cap_rows,
                         .claims = claims,
                         .keep_zero = keep_zero,
                         .files = u->files};
    got = run_line_program(&r, &h, u, &o, &dropped_high);
    if (got == LINE_DONE && !dropped_high && end_last_row(&o))
        got = LINE_NOMEM;
    *rows = o.rows; /* perhaps grown, its rows counted only when read */
    *cap_rows = o.cap;
    if (got == LINE_DONE)
        *nrows = o.n;
    return got;
}

static line_status add_row(struct dw_line **rows, size_t *nrows, size_t *cap, uint32_t addr,
                           int line, bool end, const char *file)
{
    if (spoor_grow((void **)rows, cap, *nrows + 1, sizeof **rows))
        return LINE_NOMEM;
    struct dw_line *r = &(*rows)[(*nrows)++];
    r->addr = addr;
    r->line = line > 0 ? (unsigned)line : 0;
    r->end_sequence = end;
    r->file = file;
    return LINE_DONE;
}

line_status spoor_line_rows_libdw(const spoor_elf *e, uint64_t off, Dwarf_Die *cu,
                                  const struct unit_claims *claims, bool keep_zero,
                                  struct unit_lines *u, struct dw_line **rows, size_t *nrows,
                                  size_t *cap)
{
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    u->nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) == 0)
        for (size_t i = 0; i < nfiles; i++)
            if (!add_name(&u->files, &u->nfiles, &u->cap_files,
                          dwarf_filesrc(files, i, NULL, NULL)))
                return LINE_NOMEM;
    Dwarf_Lines *lines;
    size_t n;
    if (dwarf_getsrclines(cu, &lines, &n) != 0) {
        spoor_elf_warn(e, ".debug_line unit at 0x%llx: %s (libdw): line rows of this unit ignored",
                       (unsigned long long)off, dwarf_errmsg(-1));
        return LINE_UNREADABLE;
    }
    size_t hint = 0;
    for (size_t i = 0; i < n; i++) {
        Dwarf_Line *l = dwarf_onesrcline(lines, i);
        Dwarf_Addr addr;
        int line = 0;
        bool end = false;
        if (!l || dwarf_lineaddr(l, &addr) || addr > UINT32_MAX)
            continue;
        dwarf_lineno(l, &line);
        dwarf_lineendsequence(l, &end);
        if (keep_row(claims, keep_zero, (uint32_t)addr, end, &hint) &&
            add_row(rows, nrows, cap, (uint32_t)addr, line, end, dwarf_linesrc(l, NULL, NULL)))
            return LINE_NOMEM;
    }
    return LINE_DONE;
}

line_status spoor_line_rows(const spoor_elf *e, struct name_block **names, Dwarf_Die *cu,
                            const struct unit_claims *claims, bool keep_zero, struct unit_lines *u,
                            struct dw_line **rows, size_t *nrows, size_t *cap_rows)
{
    Dwarf_Attribute attr, dir_attr;
    Dwarf_Word stmt_list;
    u->nfiles = 0;
    if (!dwarf_attr(cu, DW_AT_stmt_list, &attr))
        return LINE_DONE; /* a unit without a line program */
    if (dwarf_formudata(&attr, &stmt_list)) {
        spoor_elf_warn(e, ".debug_info unit at 0x%llx: DW_AT_stmt_list unreadable (%s): no lines",
                       (unsigned long long)(dwarf_dieoffset(cu) - dwarf_cuoffset(cu)),
                       dwarf_errmsg(-1));
        return LINE_UNREADABLE;
    }
    const char *comp_dir = NULL;
    if (dwarf_attr(cu, DW_AT_comp_dir, &dir_attr) && !(comp_dir = dwarf_formstring(&dir_attr))) {
        spoor_elf_warn(e, ".debug_info unit at 0x%llx: DW_AT_comp_dir unreadable (%s): no lines",
                       (unsigned long long)(dwarf_dieoffset(cu) - dwarf_cuoffset(cu)),
                       dwarf_errmsg(-1));
        return LINE_UNREADABLE;
    }
    return spoor_line_rows_at(e, names, stmt_list, comp_dir, cu, claims, keep_zero, u, rows, nrows,
                              cap_rows);
}

line_status spoor_line_rows_at(const spoor_elf *e, struct name_block **names, uint64_t stmt_list,
                               const char *comp_dir, Dwarf_Die *cu,
                               const struct unit_claims *claims, bool keep_zero,
                               struct unit_lines *u, struct dw_line **rows, size_t *nrows,
                               size_t *cap_rows)
{
    line_status own = spoor_line_program_read(e, names, stmt_list, comp_dir, claims, keep_zero, u,
                                              rows, nrows, cap_rows);
    if (own == LINE_NOT_HANDLED)
        return cu ? spoor_line_rows_libdw(e, stmt_list, cu, claims, keep_zero, u, rows, nrows,
                                          cap_rows)
                  : LINE_NOT_HANDLED;
    if (own == LINE_MALFORMED) {
        spoor_elf_warn(e, ".debug_line unit at 0x%llx: %s: line rows of this unit ignored",
                       (unsigned long long)stmt_list, u->problem);
        return LINE_UNREADABLE;
    }
    return own;
}

void spoor_unit_lines_free(struct unit_lines *u)
{
    free(u->files);
    free(u->dirs);
    memset(u, 0, sizeof *u);
}
