/* The symbolizer's private interface. Three files, one job each, calls going down this list
 * and into ELF access (elf.c), never up:
 *   symbol_index.c       the lookup tables and the public lookups (spoor_elf_symbolize,
 *                        spoor_elf_function, ...): per compile unit, built when an address
 *                        first falls into the unit, or merged over all units for many lookups
 *   dwarf_scopes.c       the units and the code ranges they claim; one unit's DIEs walked into
 *                        scopes (functions and inlined instances) and its line rows
 *   dwarf_line_reader.c  one unit's .debug_line program decoded (DWARF 2 to 5; libdw for what
 *                        it does not handle) into file names and line rows */
#ifndef SPOOR_SYMBOLS_INTERNAL_H
#define SPOOR_SYMBOLS_INTERNAL_H

#include <stdlib.h>

#include "elf/elf_internal.h"
#include "util/grow.h"

/* ---- dwarf_line_reader.c ---- */

struct name_block { /* a chunk of composed file names; blocks are chained for freeing */
    struct name_block *next;
    size_t size, used;
    char text[];
};

/* What the line-table reader keeps of a unit's line table: its file names (and directories). */
struct unit_lines {
    const char **files;
    size_t nfiles, cap_files;
    const char **dirs;
    size_t ndirs, cap_dirs;
    char problem[128]; /* why the program is malformed (spoor_line_program_read returned 2) */
    /* the line program reader's class of each opcode below the opcode base, made for the base
     * and operand counts op_key holds (op_key[0] the base, then the counts; 0: none yet) */
    uint8_t op_class[256], op_key[256];
    /* each special opcode's address and line advance, made for the header fields special_key
     * holds (0: none yet) */
    uint16_t special_addr[256];
    int16_t special_line[256];
    uint64_t special_key;
};

struct dw_line {
    uint32_t addr;
    unsigned line : 31;
    unsigned end_sequence : 1; /* this row ends a sequence: addr is one past its last byte */
    const char *file;
};

/* Code ranges of a unit (.debug_aranges, or DW_AT_ranges or low_pc/high_pc), sorted, adjacent
 * ones joined. `known` is false when there is no such information (no range attributes), and
 * then line rows are judged without it (only rows at address 0 are dropped). */
struct unit_claims {
    uint32_t (*ranges)[2];
    size_t n;
    bool known;
};

/* What the line-table readers return: one meaning per value for every reader of the file. */
typedef enum line_status {
    LINE_NOMEM = -1,      /* out of memory */
    LINE_DONE = 0,        /* read */
    LINE_NOT_HANDLED = 1, /* a form or layout spoor's reader leaves to libdw */
    LINE_MALFORMED = 2,   /* damaged: u->problem says what */
    LINE_UNREADABLE = 3,  /* neither reader could read it; a warning names it, no rows */
} line_status;

/* Reads spoor's own decoding of the line table at offset off of .debug_line: its files into u
 * (names the reader composes go to *names), and its rows that claims keep (see spoor_line_rows)
 * appended to *rows in program order (libdw's order is by address, a sequence's end first, then
 * program order). LINE_DONE; LINE_NOT_HANDLED (use libdw); LINE_MALFORMED (line_range 0,
 * lengths past the unit or section, a bad version, file or directory index, ...; u->problem says
 * what, u's files only when the header was whole); LINE_NOMEM. No rows are appended unless
 * LINE_DONE. */
line_status spoor_line_program_read(const spoor_elf *e, struct name_block **names, uint64_t off,
                                    const char *comp_dir, const struct unit_claims *claims,
                                    bool keep_zero, struct unit_lines *u, struct dw_line **rows,
                                    size_t *nrows, size_t *cap_rows);

/* The line rows of unit cu whose code the unit really has (see struct unit_claims; code the
 * linker discarded keeps rows at address 0 and up), appended to *rows, through the reader above
 * or libdw; and the unit's file names into u->files (for DW_AT_call_file), u->nfiles 0 when the
 * unit has none. LINE_DONE; LINE_UNREADABLE (a warning names it, the unit has no rows);
 * LINE_NOMEM. */
line_status spoor_line_rows(const spoor_elf *e, struct name_block **names, Dwarf_Die *cu,
                            const struct unit_claims *claims, bool keep_zero, struct unit_lines *u,
                            struct dw_line **rows, size_t *nrows, size_t *cap_rows);

/* spoor_line_rows for a unit DIE read without libdw: its DW_AT_stmt_list and DW_AT_comp_dir
 * (NULL: none) given. With cu NULL, a program spoor's reader does not handle gives
 * LINE_NOT_HANDLED (the caller goes through libdw) instead of libdw's rows. */
line_status spoor_line_rows_at(const spoor_elf *e, struct name_block **names, uint64_t stmt_list,
                               const char *comp_dir, Dwarf_Die *cu,
                               const struct unit_claims *claims, bool keep_zero,
                               struct unit_lines *u, struct dw_line **rows, size_t *nrows,
                               size_t *cap_rows);

/* The rows and files of unit cu's line program at offset off of .debug_line through libdw alone
 * (for a program spoor's reader does not handle), as spoor_line_rows appends them. LINE_DONE;
 * LINE_UNREADABLE (libdw could not read it: warned); LINE_NOMEM. */
line_status spoor_line_rows_libdw(const spoor_elf *e, uint64_t off, Dwarf_Die *cu,
                                  const struct unit_claims *claims, bool keep_zero,
                                  struct unit_lines *u, struct dw_line **rows, size_t *nrows,
                                  size_t *cap);

void spoor_unit_lines_free(struct unit_lines *u);

/* ---- dwarf_scopes.c ---- */

/* A function or inlined-function instance from DWARF. */
struct dw_scope {
    const char *name;
    const char *call_file; /* for inlined instances: where the call is */
    unsigned call_line;
    int32_t parent; /* index of the enclosing scope, -1 for a function */
};

struct dw_range { /* a code range of a scope, or the part of it in one unit's region */
    uint32_t lo, hi;
    uint32_t start; /* where the scope's range begins (offsets count from here) */
    int32_t scope;
    int depth;
    uint32_t unit, seq; /* ties are broken by unit, then the order the unit's DIEs list them */
};

/* One compile unit: what it claims, and once built its scopes' ranges and its line rows. */
struct dw_unit {
    Dwarf_Off header, die;     /* offsets of the unit's header and DIE in .debug_info */
    Dwarf_Off abbrev;          /* of its abbreviations in .debug_abbrev */
    struct unit_claims claims; /* what .debug_aranges lists for it, else its DIE's ranges */
    bool built;
    bool damaged; /* a part of it could not be read (warned): its answers may be partial */
    struct dw_range *ranges; /* scope indices are into symbol_tables.scopes */
    size_t nranges;
    struct dw_line *rows; /* in the order libdw or the reader hands them out */
    size_t nrows;
    struct unit_claims code;    /* the DIE's code ranges, which its rows were kept by */
    struct lookup_table *table; /* for lookups in this unit alone (symbol_index.c) */
};

/* What dwarf_scopes.c's abbreviation reader knows of a standard form (0 to DW_FORM_addrx4) for
 * units of one version and address size: its value's size (-1: not fixed), its string section
 * (1 .debug_str, 2 .debug_line_str, else 0), and whether its common case takes it (plain: a form
 * defined, its section there, no value in the abbreviation). */
struct form_entry {
    int8_t size;
    uint8_t str, plain;
};
#define STANDARD_FORMS 0x2d

struct abbrev_memo; /* dwarf_scopes.c's */

/* Everything the symbolizer builds for one spoor_elf (owned by it, see elf_internal.h). */
struct symbol_tables {
    /* for the version and address size of forms_key, by a form's byte (past the standard
     * forms: never plain) */
    struct form_entry forms[0x100];
    uint32_t forms_key; /* version << 8 | address size, 0: none made yet */
    bool keep_zero;     /* a function really starts at address 0 */
    struct dw_scope *scopes;
    size_t nscopes, cap_scopes;
    struct name_block *names; /* file names the line-table reader composed (dir/name) */
    struct unit_lines lines;  /* the line-table reader's arrays, kept for the next unit */
    uint8_t *starts;          /* dwarf_scopes.c's DIE starts map, kept for the next unit */
    size_t cap_starts;
    uint8_t starts_stamp;
    struct abbrev_memo *abbrev_memo; /* abbreviation entries read in earlier units */
    struct dw_unit *units;
    size_t nunits;
    size_t units_built;
    /* symbol_index.c's state */
    struct unit_claim *claims; /* every unit's claimed ranges, sorted by address */
    size_t nclaims;
    bool merged_only;    /* units cannot be found by address: lookups use the merged table */
    bool want_merged;    /* a unit's table could not answer: the merged table does */
    size_t lazy_lookups; /* lookups answered by one unit's table */
    struct lookup_table *merged; /* over all units, built for many lookups */
};

/* Lists the units of e->dwarf and what each claims into t->units. -1 without memory. */
int spoor_dwarf_units(const spoor_elf *e, struct symbol_tables *t);

/* Builds unit u of t: its scopes (appended to t->scopes), their ranges and its line rows.
 * Idempotent. -1 without memory (the unit stays unbuilt). */
int spoor_dwarf_unit_build(const spoor_elf *e, struct symbol_tables *t, size_t u);

/* Frees what spoor_dwarf_units and spoor_dwarf_unit_build made (not the lookup tables). */
void spoor_dwarf_units_free(struct symbol_tables *t);

/* ---- symbol_index.c ---- */

struct unit_claim { /* one claimed range, and whose */
    uint32_t lo, hi;
    uint32_t unit;
};

/* The symbolizer's tables of e, made on first use (NULL without DWARF or memory). */
struct symbol_tables *spoor_symbol_tables(const spoor_elf *e);

/* Builds every unit and the merged table, as many lookups or spoor_elf_has_dwarf do (for tests:
 * the reference the lookups of single units are checked against). */
void spoor_symbols_build_all(const spoor_elf *e);

#endif
