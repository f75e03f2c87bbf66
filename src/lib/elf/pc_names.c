/* The names of a PC that may be a return address (spoor/elf.h spoor_elf_symbolize_pc). */
#include "spoor/elf.h"
#include "spoor/thumb.h"

size_t spoor_elf_symbolize_pc(const spoor_elf *elf, uint32_t pc, bool pc_is_return,
                              spoor_location *loc, size_t max)
{
    uint32_t lookup = spoor_lookup_pc(pc, pc_is_return);
    size_t n = spoor_elf_symbolize(elf, lookup, loc, max);
    if (n && loc[0].has_offset) /* the offset of the address shown, not of the lookup */
        loc[0].offset = pc - (lookup - loc[0].offset);
    return n;
}

uint32_t spoor_elf_function_offset(const spoor_elf *elf, uint32_t pc, bool pc_is_return,
                                   const spoor_location *innermost)
{
    uint32_t start;
    if (spoor_elf_function(elf, spoor_lookup_pc(pc, pc_is_return), NULL, &start, NULL) &&
        pc >= start)
        return pc - start;
    return innermost->offset;
}
