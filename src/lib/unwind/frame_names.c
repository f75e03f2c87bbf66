/* A frame's names and the offset shown with them (spoor/unwind.h). */
#include "spoor/unwind.h"

size_t spoor_frame_symbolize(const spoor_elf *elf, const spoor_frame *f, spoor_location *loc,
                             size_t max)
{
    uint32_t lookup = spoor_frame_lookup_pc(f);
    size_t n = spoor_elf_symbolize(elf, lookup, loc, max);
    if (n && loc[0].has_offset) /* the offset of the address shown, not of the lookup */
        loc[0].offset = f->pc - (lookup - loc[0].offset);
    return n;
}

uint32_t spoor_frame_function_offset(const spoor_elf *elf, const spoor_frame *f,
                                     const spoor_location *innermost)
{
    uint32_t start;
    if (spoor_elf_function(elf, spoor_frame_lookup_pc(f), NULL, &start, NULL) && f->pc >= start)
        return f->pc - start;
    return innermost->offset;
}
