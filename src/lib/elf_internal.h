/* Internals of spoor_elf: loading, sections and the symbol table (elf_image.c), for the modules
 * that read the ELF below the public API (the symbolizer, symbols_internal.h; the DWARF CFI
 * unwinder). */
#ifndef SPOOR_ELF_INTERNAL_H
#define SPOOR_ELF_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>

#include "demangle.h"
#include "spoor/elf.h"
#include "spoor/error.h"

struct elf_section { /* section i + 1 of the file is sections[i] */
    const char *name;
    uint32_t addr, size;
    uint32_t type;
    uint64_t flags;
    uint32_t link, info, entsize;
    const uint8_t *data; /* NULL for SHT_NOBITS */
};

struct elf_symbol { /* a function symbol: [start, start+size) */
    uint32_t start, size;
    const char *name;
    uint32_t index; /* in the symbol table: the first of equal aliases is preferred */
};

/* What could not be read (elf_warnings.c): one line each, deduplicated. */
struct elf_warnings {
    char **lines;
    size_t n, cap;
    bool full; /* the last line says that more were not kept */
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
    const uint8_t *symtab;            /* the symbol table's Elf32_Sym entries, NULL when none */
    size_t nsymtab;                   /* how many */
    const struct elf_section *strtab; /* the string table it names */

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

/* Adds the one-line warning "PATH: " fmt ... unless it is there already (spoor_elf_warnings).
 * Name the section (and the unit's offset in it) and say what was skipped. */
void spoor_elf_warn(const spoor_elf *elf, const char *fmt, ...) SPOOR_PRINTF(2, 3);
void spoor_elf_warnings_free(spoor_elf *elf);

/* The function symbol containing addr, or NULL. */
const struct elf_symbol *spoor_elf_symbol_at(const spoor_elf *elf, uint32_t addr);

/* A section by name with its contents as they are in the file; NULL when there is no such
 * section, it has no contents or they are compressed (SHF_COMPRESSED). */
const struct elf_section *spoor_elf_debug_section(const spoor_elf *elf, const char *name);

/* The libelf/libdw handles, for modules that read DWARF themselves (the symbolizer, the DWARF
 * CFI unwinder). */
Elf *spoor_elf_libelf(const spoor_elf *elf);
Dwarf *spoor_elf_libdw(const spoor_elf *elf);

/* Tag_CPU_arch of the ELF's build attributes (.ARM.attributes, "aeabi" file attributes; ARM
 * IHI 0045 "Addenda to the ARM ABI" 2.4), e.g. SPOOR_ELF_ARCH_V6M for a Cortex-M0 build;
 * SPOOR_ELF_ARCH_UNKNOWN when there are none or they cannot be read. */
typedef enum spoor_elf_arch {
    SPOOR_ELF_ARCH_UNKNOWN = -1,
    SPOOR_ELF_ARCH_V7 = 10, /* ARMv7 (with profile M: ARMv7-M) */
    SPOOR_ELF_ARCH_V6M = 11,
    SPOOR_ELF_ARCH_V6SM = 12,
    SPOOR_ELF_ARCH_V7EM = 13,
    SPOOR_ELF_ARCH_V8M_BASE = 16,
    SPOOR_ELF_ARCH_V8M_MAIN = 17,
    SPOOR_ELF_ARCH_V81M_MAIN = 21,
} spoor_elf_arch;
spoor_elf_arch spoor_elf_cpu_arch(const spoor_elf *elf);

#endif
