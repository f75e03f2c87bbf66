/* What the layers above elf (the DWARF CFI unwinder, the RTOS layer) read of an ELF below the
 * public API spoor/elf.h: the libelf/libdw handles, a section's raw contents, and the ELF's
 * one-line warnings. The struct spoor_elf itself stays inside the elf layer (elf_internal.h). */
#ifndef SPOOR_ELF_SECTIONS_H
#define SPOOR_ELF_SECTIONS_H

#include <elfutils/libdw.h>
#include <gelf.h>

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

/* The libelf/libdw handles, for modules that read DWARF themselves (the symbolizer, the DWARF
 * CFI unwinder). */
Elf *spoor_elf_libelf(const spoor_elf *elf);
Dwarf *spoor_elf_libdw(const spoor_elf *elf);

/* A section by name with its contents as they are in the file; NULL when there is no such
 * section, it has no contents or they are compressed (SHF_COMPRESSED). */
const struct elf_section *spoor_elf_debug_section(const spoor_elf *elf, const char *name);

/* Adds the one-line warning "PATH: " fmt ... unless it is there already (spoor_elf_warnings).
 * Name the section (and the unit's offset in it) and say what was skipped. */
void spoor_elf_warn(const spoor_elf *elf, const char *fmt, ...) SPOOR_PRINTF(2, 3);
/* True the first time it is asked for this ELF, false after: the DWARF CFI unwinder reads
 * .debug_frame through once to warn about what libdw would skip silently. */
bool spoor_elf_first_cfi_use(const spoor_elf *elf);

#endif
