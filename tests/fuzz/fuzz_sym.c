/* libFuzzer harness: the symbolizer on an ELF it is given (the ELF and section headers, the
 * symbol table, the DWARF units, abbreviations, DIE trees and line programs spoor reads itself,
 * and libdw's part). Any input must open or be refused with an error, and every lookup must
 * answer without a crash or a leak, whatever the DWARF says. spoor_elf_open takes a path: the
 * input is written to a memory file first. The seeds (corpus_sym/), all linked at address 0:
 * hello-m0.elf, the example firmware examples/hello as the build makes it for the Cortex-M0
 * (GCC, DWARF 5: range and location lists, inlined functions, five units); stt_file.elf,
 * tests/e2e/fw/producers/stt_file.c; gcc-c-dwarf3.elf, producers/c_inline.c and c_lto_peer.c
 * with newlib (-O2 -gdwarf-3); gxx-Os-dwarf4.elf, producers/cxx_classes.cpp (g++ -Os -gdwarf-4,
 * mangled C++ names): the producers built as tests/e2e/test_sym_producers.py builds them, with
 * -Wl,-n to keep the files small. Regression inputs of fixed findings are named after what they
 * found. */
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
    /* the seeds' code is below 0x1000: every 14 bytes (both halfword alignments, a few hits in
     * each function) keeps the runs fast enough for the fuzzer */
    for (uint32_t addr = 0; addr < 0x1000; addr += 14) {
        spoor_elf_symbolize(e, addr, frames, 16);
        spoor_elf_function(e, addr, &name, &start, &len);
        spoor_elf_partial(e, addr);
    }
    spoor_symbols_build_all(e);
    for (uint32_t addr = 2; addr < 0x1000; addr += 38)
        spoor_elf_symbolize(e, addr, frames, 16);
    const char *const *list;
    spoor_elf_warnings(e, &list);
    spoor_elf_close(e);
    return 0;
}
