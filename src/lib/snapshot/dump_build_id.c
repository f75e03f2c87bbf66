/* Whether a dump and an ELF come from the same build (spoor/dump.h). */
#include <stdio.h>
#include <string.h>

#include "spoor/dump.h"
#include "spoor/elf_dir.h"

const char *spoor_dump_build_id_warning(const spoor_dump *dump, const spoor_elf *elf, char *buf,
                                        size_t len)
{
    const uint8_t *eid;
    size_t elen;
    if (!dump || !dump->build_id || !spoor_elf_build_id(elf, &eid, &elen))
        return NULL;
    if (elen == dump->build_id_len && !memcmp(eid, dump->build_id, elen))
        return NULL;
    char d[130], e[130];
    spoor_build_id_hex(dump->build_id, dump->build_id_len, d);
    spoor_build_id_hex(eid, elen, e);
    snprintf(buf, len,
             "build-id mismatch: the dump is from %s, the ELF is %s; names and lines may be wrong",
             d, e);
    return buf;
}
