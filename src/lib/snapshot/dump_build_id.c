/* Whether a dump and an ELF come from the same build (spoor/dump.h). */
#include <stdio.h>
#include <string.h>

#include "spoor/dump.h"

/* Lowercase hex of at most 64 bytes (a sha1 build-id has 20). */
static void hex_bytes(char out[130], const uint8_t *bytes, size_t n)
{
    size_t i = 0;
    for (; i < n && i < 64; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    out[2 * i] = 0;
}

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
    hex_bytes(d, dump->build_id, dump->build_id_len);
    hex_bytes(e, eid, elen);
    snprintf(buf, len,
             "build-id mismatch: the dump is from %s, the ELF is %s; names and lines may be wrong",
             d, e);
    return buf;
}
