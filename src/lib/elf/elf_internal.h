/* Internals of spoor_elf: loading, sections and the symbol table (elf.c), for the modules
 * of the elf layer (the symbolizer, symbols_internal.h; the DWARF call sites). The layers above
 * read the ELF below the public API through elf_sections.h only. */
#ifndef SPOOR_ELF_INTERNAL_H
#define SPOOR_ELF_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>

#include "base/byteorder.h"
#include "elf/demangle.h"
#include "elf/elf_sections.h"
#include "spoor/elf.h"
#include "spoor/error.h"

struct elf_symbol { /* a function symbol: [start, start+size) */
    uint32_t start, size;
    const char *name;
    /* The source file binutils gives the symbol (the STT_FILE symbol before it in the table, for
     * a local symbol or one before any STT_FILE that follows other symbols; elf.c), NULL
     * when none: the file of an address in it that no line row covers. */
    const char *file;
    uint32_t index; /* in the symbol table: the first of equal aliases is preferred */
    /* A symbol of size 0 in code (spoor_elf.zero): the end of its section, which its code does
     * not reach past. Unused for the others. */
    uint32_t section_end;
};

/* What could not be read (elf_warnings.c): one line each, deduplicated. */
struct elf_warnings {
    char **lines;
    size_t n, cap;
    bool full; /* the last line says that more were not kept */
};

/* The sections elf.c finds once at open for spoor_elf_debug_section (the DWARF sections
 * and .ARM.attributes, which the symbolizer asks for per unit), in the order of its
 * known_section_names. */
enum elf_known_section {
    SEC_DEBUG_INFO,
    SEC_DEBUG_ABBREV,
    SEC_DEBUG_LINE,
    SEC_DEBUG_STR,
    SEC_DEBUG_LINE_STR,
    SEC_DEBUG_ARANGES,
    SEC_DEBUG_RANGES,
    SEC_DEBUG_RNGLISTS,
    SEC_DEBUG_FRAME,
    SEC_ARM_ATTRIBUTES,
    ELF_KNOWN_SECTIONS
};

struct spoor_elf {
    char *path;
    int fd;
    Elf *elf;
    Dwarf *dwarf; /* NULL when the ELF has no DWARF */
    struct elf_section *sections;
    size_t nsections;
    /* The first section named known_section_names[i] (elf.c), NULL when there is none. */
    const struct elf_section *known_sections[ELF_KNOWN_SECTIONS];
    struct elf_symbol *symbols; /* sorted by start */
    size_t nsymbols;
    /* The symbols of size 0 in code that name what follows them, as binutils and gdb do
     * (STT_FUNC ones, and labels: STT_NOTYPE in an executable section, no mapping symbol),
     * sorted by start; made on first use (spoor_elf_symbol_naming). */
    struct elf_symbol *zero;
    size_t nzero;
    bool zero_made;
    const uint8_t *build_id;
    size_t build_id_len;
    const uint8_t *symtab;            /* the symbol table's Elf32_Sym entries, NULL when none */
    size_t nsymtab;                   /* how many */
    const struct elf_section *strtab; /* the string table it names */
    /* spoor_elf_symbol's index, made at its first call: the defined symbols sorted by name, then
     * table index (a handle is used by one thread at a time) */
    struct elf_named_symbol {
        const char *name;
        uint32_t index; /* in the symbol table */
    } * by_name;
    size_t nby_name;
    bool by_name_made;

    struct elf_warnings warnings;
    /* A part not tied to one DWARF unit could not be read (the symbol table, the list of units,
     * the DWARF as a whole): any answer may be missing something (spoor_elf_partial). */
    bool damaged;

    /* The symbolizer's tables (symbols_internal.h), made by symbol_index.c on first use and
     * freed at close through release_symbolizer: ELF access never calls up into the symbolizer. */
    struct symbol_tables *symbolizer;
    void (*release_symbolizer)(struct symbol_tables *);
    /* The DWARF call sites (dwarf_call_sites.h), made on first use and freed at close through
     * release_call_sites. */
    struct call_site_table *call_sites;
    void (*release_call_sites)(struct call_site_table *);
    bool raw_names;   /* function names as the ELF has them (spoor_elf_set_demangle) */
    bool cfi_checked; /* .debug_frame was read through once (cfi_unwind.c) */
    struct spoor_demangle_cache demangled;
};

void spoor_elf_warnings_free(spoor_elf *elf);

/* The function symbol containing addr, or NULL. */
const struct elf_symbol *spoor_elf_symbol_at(const spoor_elf *elf, uint32_t addr);

/* The symbol that names addr as addr2line and gdb do: the function symbol containing it or, when
 * none does, a symbol of size 0 (assembly without .size, a label in it) that is the closest
 * below addr, in the same section; NULL when neither. *size (may be NULL) the symbol's size or,
 * for one of size 0, the bytes up to the next symbol or its section's end. */
const struct elf_symbol *spoor_elf_symbol_naming(const spoor_elf *elf, uint32_t addr,
                                                 uint32_t *size);

/* A number for each symbol spoor_elf_symbol_naming may give, unique in the ELF. */
size_t spoor_elf_symbol_number(const spoor_elf *elf, const struct elf_symbol *s);

/* spoor_elf_debug_section of a known section: NULL when there is none, it has no contents or
 * they are compressed. */
static inline const struct elf_section *spoor_elf_known_section(const spoor_elf *e,
                                                                enum elf_known_section k)
{
    const struct elf_section *sec = e->known_sections[k];
    return sec && sec->data && !(sec->flags & SHF_COMPRESSED) ? sec : NULL;
}

/* A unit header of .debug_info as the elf layer reads it (32-bit DWARF: ARM's), without libdw. */
struct unit_header {
    unsigned version, addr_size;
    unsigned type;  /* DWARF 5's unit type, else DW_UT_compile */
    uint64_t table; /* its abbreviations' offset in .debug_abbrev (UINT64_MAX: not there) */
    const uint8_t *die, *end; /* its first DIE; its end (whole only) */
    bool whole;               /* a 32-bit DWARF length, within the section */
};

/* The unit header at off of info into *h: false when fewer than 11 bytes are there (then h is
 * unset), else its version and address size, and h->whole as above. */
static inline bool spoor_unit_header(const struct elf_section *info, uint64_t off,
                                     struct unit_header *h)
{
    if (off > info->size || info->size - off < 11)
        return false;
    const uint8_t *p = info->data + off;
    uint64_t length = spoor_le32(p);
    h->version = spoor_le16(p + 4);
    bool v5 = h->version >= 5;
    h->addr_size = v5 ? p[7] : p[10];
    h->whole = length < 0xfffffff0u && length <= info->size - off - 4;
    h->type = v5 ? p[6] : 0x01; /* DW_UT_compile */
    h->table = !v5 || info->size - off >= 12 ? spoor_le32(p + (v5 ? 8 : 6)) : UINT64_MAX;
    h->die = p + (v5 ? 12 : 11);
    h->end = h->whole ? p + 4 + length : NULL;
    return true;
}

#endif
