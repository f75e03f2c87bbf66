/* Internals of spoor_elf shared by elf_image.c (loading, sections, symbol table) and
 * symbols.c (DWARF scope and line tables). */
#ifndef SPOOR_ELF_INTERNAL_H
#define SPOOR_ELF_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>

#include "demangle.h"
#include "spoor/elf.h"

struct elf_section {
    const char *name;
    uint32_t addr, size;
    uint32_t type;
    uint64_t flags;
    const uint8_t *data; /* NULL for SHT_NOBITS */
};

struct elf_symbol { /* a function symbol: [start, start+size) */
    uint32_t start, size;
    const char *name;
    uint32_t index; /* in the symbol table: the first of equal aliases is preferred */
};

/* A function or inlined-function instance from DWARF. */
struct dw_scope {
    const char *name;
    const char *call_file; /* for inlined instances: where the call is */
    unsigned call_line;
    int32_t parent; /* index of the enclosing scope, -1 for a function */
};

struct dw_line {
    uint32_t addr;
    unsigned line : 31;
    unsigned end_sequence : 1; /* this row ends a sequence: addr is one past its last byte */
    const char *file;
};

/* One piece of the address space over which the answer does not change: from `start` up to
 * the next span's start, the innermost scope is `scope` (-1: none) whose code range began at
 * `range_start`, and the line-table row in force says file:line (file NULL and line 0 when no
 * row covers it). The scope ranges and the line rows merged, so that a lookup is one search
 * and reads one span. */
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

struct spoor_elf {
    char *path;
    int fd;
    Elf *elf;
    Dwarf *dwarf; /* NULL when the ELF has no DWARF */
    struct elf_section *sections;
    size_t nsections;
    struct elf_symbol *symbols; /* sorted by start */
    size_t nsymbols;
    const uint8_t *build_id;
    size_t build_id_len;

    int tables_ready; /* DWARF tables below are built on first use */
    struct dw_scope *scopes;
    size_t nscopes;
    struct dw_line *lines; /* sorted by address; freed once merged into spans */
    size_t nlines;         /* line rows loaded */
    struct dw_span *spans; /* sorted by start */
    size_t nspans;
    struct page_index span_pages;
    struct dw_function *functions;
    size_t nfunctions;
    struct name_block *names; /* file names the line-table reader composed (dir/name) */
    bool raw_names;           /* function names as the ELF has them (spoor_elf_set_demangle) */
    struct spoor_demangle_cache demangled;
};

struct name_block { /* a chunk of composed file names; blocks are chained for freeing */
    struct name_block *next;
    size_t size, used;
    char text[];
};

/* Builds the DWARF tables (idempotent). */
void spoor_elf_prepare_dwarf(spoor_elf *elf);

/* The function symbol containing addr, or NULL. */
const struct elf_symbol *spoor_elf_symbol_at(const spoor_elf *elf, uint32_t addr);

#endif
