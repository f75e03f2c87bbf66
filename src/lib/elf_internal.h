/* Internals of spoor_elf shared by elf_image.c (loading, sections, symbol table) and
 * symbols.c (DWARF scope and line tables). */
#ifndef SPOOR_ELF_INTERNAL_H
#define SPOOR_ELF_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>

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

/* One piece of the address space: from `start` up to the next segment's start, the
 * innermost scope is `scope` (-1: none) whose code range began at `range_start`. */
struct dw_segment {
    uint32_t start, range_start;
    int32_t scope;
};

struct dw_line {
    uint32_t addr;
    unsigned line;
    const char *file;
    int end_sequence; /* this row ends a sequence: addr is one past its last byte */
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
    struct dw_segment *segments;
    size_t nsegments;
    struct dw_line *lines;
    size_t nlines;
    struct page_index line_pages, segment_pages;
    struct dw_function *functions;
    size_t nfunctions;
};

/* Builds the DWARF tables (idempotent). */
void spoor_elf_prepare_dwarf(spoor_elf *elf);

/* The function symbol containing addr, or NULL. */
const struct elf_symbol *spoor_elf_symbol_at(const spoor_elf *elf, uint32_t addr);

#endif
