/* The GNU build-id note and its hex form (spoor/elf_dir.h): one reader of Elf32_Nhdr records
 * for the ELF loader (elf.c), the build-id index (elf_dir.c) and the dump's check. */
#include <stdio.h>
#include <string.h>

#include "spoor/elf_dir.h"

#define NOTE_GNU_BUILD_ID 3u /* NT_GNU_BUILD_ID */

bool spoor_elf_note_build_id(const uint8_t *data, size_t size, const uint8_t **id, size_t *len)
{
    /* Elf32_Nhdr records: namesz, descsz, type, name (4-aligned), desc (4-aligned) */
    size_t off = 0;
    while (data && size >= 12 && off <= size - 12) {
        uint32_t nsz, dsz, type;
        memcpy(&nsz, data + off, 4);
        memcpy(&dsz, data + off + 4, 4);
        memcpy(&type, data + off + 8, 4);
        size_t name_off = off + 12;
        if (nsz > size - name_off)
            return false;
        size_t desc_off = name_off + ((nsz + 3u) & ~(size_t)3u);
        if (desc_off > size || dsz > size - desc_off)
            return false;
        if (type == NOTE_GNU_BUILD_ID && nsz == 4 && !memcmp(data + name_off, "GNU", 4)) {
            *id = data + desc_off;
            *len = dsz;
            return dsz > 0;
        }
        off = desc_off + ((dsz + 3u) & ~(size_t)3u);
    }
    return false;
}

char *spoor_build_id_hex(const uint8_t *id, size_t len, char *out)
{
    size_t i = 0;
    for (; i < len && i < 64; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    out[2 * i] = 0;
    return out;
}
