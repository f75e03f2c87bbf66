/* libFuzzer harness: the symbolizer on an ELF it is given (the ELF and section headers, the
 * symbol table, the DWARF units, abbreviations, DIE trees and line programs spoor reads itself,
 * and libdw's part). Any input must open or be refused with an error, and every lookup must
 * answer without a crash or a leak, whatever the DWARF says. spoor_elf_open takes a path: the
 * input is written to a memory file first. The seed (corpus_sym/stt_file.elf) is the firmware of
 * tests/e2e/fw/producers/stt_file.c linked small (-Wl,-n). */
#include <stdint.h>

#include "fuzz_memfd.h"

#include "elf/symbols_internal.h"
#include "spoor/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spoor_elf *e = spoor_elf_open(fuzz_memfd_path(data, size));
    if (!e)
        return 0;
    spoor_location frames[16];
    const char *name;
    uint32_t start, len;
    /* one unit at a time first (the lazy tables), then all of them (the merged table) */
    for (uint32_t addr = 0; addr < 0x80; addr += 2) {
        spoor_elf_symbolize(e, addr, frames, 16);
        spoor_elf_function(e, addr, &name, &start, &len);
        spoor_elf_partial(e, addr);
    }
    spoor_symbols_build_all(e);
    for (uint32_t addr = 0; addr < 0x80; addr += 6)
        spoor_elf_symbolize(e, addr, frames, 16);
    const char *const *list;
    spoor_elf_warnings(e, &list);
    spoor_elf_close(e);
    return 0;
}
