/* A spoor_dump assembled from raw debugger output instead of a device dump: registers from a
 * regs.json file (regs_json.c) and memory from ADDR:FILE pairs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/dump.h"
#include "spoor/error.h"
#include "spoor/number.h"

#include "dump_internal.h"

bool spoor_raw_memory_parse(const char *arg, spoor_raw_memory *out)
{
    const char *colon = arg ? strchr(arg, ':') : NULL;
    if (colon && colon != arg && colon[1] != '\0' &&
        spoor_parse_u32(arg, (size_t)(colon - arg), SPOOR_NUM_AUTO, &out->address)) {
        out->path = colon + 1;
        return true;
    }
    spoor_set_error(SPOOR_ERR_ARGUMENT, "--mem: expected ADDR:FILE, got '%s'", arg ? arg : "");
    return false;
}

static bool keep(spoor_dump *d, uint8_t *buf)
{
    uint8_t **more = realloc(d->extra, (d->extra_count + 1) * sizeof *more);
    if (!more) {
        free(buf);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    d->extra = more;
    d->extra[d->extra_count++] = buf;
    return true;
}

spoor_dump *spoor_dump_from_raw(const char *regs_path, const spoor_raw_memory *mems, size_t count)
{
    spoor_dump *d = calloc(1, sizeof *d);
    if (!d) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    d->version = SPOOR_DUMP_VERSION;
    if (regs_path) {
        uint8_t *text;
        size_t size;
        if (!spoor_dump_read_file(regs_path, &text, &size))
            goto fail;
        bool ok = spoor_regs_json_parse((const char *)text, size, regs_path, d);
        free(text);
        if (!ok)
            goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        uint8_t *bytes;
        size_t size;
        if (!spoor_dump_read_file(mems[i].path, &bytes, &size) || !keep(d, bytes))
            goto fail;
        if (size == 0)
            continue;
        if ((uint64_t)mems[i].address + size > 0x100000000ull) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "%s: %zu bytes at 0x%08" PRIx32 " run past the 4 GiB address space",
                            mems[i].path, size, mems[i].address);
            goto fail;
        }
        spoor_dump_region *r = realloc(d->regions, (d->region_count + 1) * sizeof *r);
        if (!r) {
            spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
            goto fail;
        }
        d->regions = r;
        r[d->region_count++] =
            (spoor_dump_region){mems[i].address, (uint32_t)size, SPOOR_REGION_OTHER, false, bytes};
    }
    if (!spoor_dump_check_regions(d))
        goto fail;
    return d;
fail:
    spoor_dump_free(d);
    return NULL;
}
