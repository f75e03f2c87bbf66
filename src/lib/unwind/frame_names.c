/* A frame's names and the offset shown with them (spoor/unwind.h): those of its pc. */
#include "spoor/unwind.h"

size_t spoor_frame_symbolize(const spoor_elf *elf, const spoor_frame *f, spoor_location *loc,
                             size_t max)
{
    return spoor_elf_symbolize_pc(elf, f->pc, f->pc_is_return, loc, max);
}

uint32_t spoor_frame_function_offset(const spoor_elf *elf, const spoor_frame *f,
                                     const spoor_location *innermost)
{
    return spoor_elf_function_offset(elf, f->pc, f->pc_is_return, innermost);
}
