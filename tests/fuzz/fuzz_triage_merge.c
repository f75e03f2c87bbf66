/* libFuzzer harness: the JSON Lines spoor triage --merge reads back (bucket, per-dump and
 * error lines). Any input must be merged or fail with an error naming the line, never crash or
 * leak; what was merged must list and sort. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/triage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spoor_triage *t = spoor_triage_new(NULL, 0);
    if (!t)
        return 0;
    spoor_triage_merge_text(t, (const char *)data, size, "fuzz");
    const spoor_triage_bucket *b;
    const spoor_triage_dump *d;
    size_t nb = spoor_triage_buckets(t, &b), nd = spoor_triage_dumps(t, &d);
    for (size_t i = 0; i < nb; i++)
        if (!b[i].count || !b[i].example || strlen(b[i].sig.id) != 16)
            abort();
    for (size_t i = 0; i + 1 < nd; i++)
        if (strcmp(d[i].path, d[i + 1].path) >= 0)
            abort();
    spoor_triage_free(t);
    return 0;
}

/* Merging signs nothing: the signing side is not linked in. */
spoor_dump *spoor_dump_load(const char *path)
{
    (void)path;
    abort();
}
void spoor_dump_free(spoor_dump *dump)
{
    (void)dump;
}
spoor_elf *spoor_elf_dir_open(spoor_elf_dir *dir, const uint8_t *id, size_t len)
{
    (void)dir, (void)id, (void)len;
    abort();
}
bool spoor_triage_sign(const spoor_elf *elf, spoor_dump *dump, const char *name, unsigned k,
                       spoor_triage_sig *out)
{
    (void)elf, (void)dump, (void)name, (void)k, (void)out;
    abort();
}
spoor_elf *spoor_elf_open(const char *path)
{
    (void)path;
    abort();
}
void spoor_elf_close(spoor_elf *elf)
{
    (void)elf;
}
const char *spoor_elf_path(const spoor_elf *elf)
{
    (void)elf;
    abort();
}
size_t spoor_elf_dir_warnings(const spoor_elf_dir *dir, const char *const **list)
{
    (void)dir, (void)list;
    return 0;
}
size_t spoor_elf_warnings(const spoor_elf *elf, const char *const **list)
{
    (void)elf, (void)list;
    return 0;
}
bool spoor_dump_read_file(const char *path, uint8_t **data, size_t *size)
{
    (void)path, (void)data, (void)size;
    abort();
}
