/* The compilation directories an ELF's DWARF names (spoor_elf_comp_dirs, spoor/elf.h): where a
 * relative source file name of a unit is relative to. */
#include <dwarf.h>
#include <string.h>

#include "elf/elf_internal.h"

size_t spoor_elf_comp_dirs(const spoor_elf *e, const char **dirs, size_t max)
{
    size_t n = 0;
    Dwarf *dwarf = e->dwarf;
    Dwarf_Off off = 0, next;
    size_t header_size;
    while (dwarf && n < max &&
           dwarf_nextcu(dwarf, off, &next, &header_size, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Attribute attr;
        const char *dir = NULL;
        if (dwarf_offdie(dwarf, off + header_size, &cu) && dwarf_attr(&cu, DW_AT_comp_dir, &attr))
            dir = dwarf_formstring(&attr);
        off = next;
        if (!dir || !*dir)
            continue;
        size_t k = 0;
        while (k < n && strcmp(dirs[k], dir) != 0)
            k++;
        if (k == n)
            dirs[n++] = dir;
    }
    return n;
}
