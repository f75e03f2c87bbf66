/* Raw debugger output instead of a device dump: the --mem ADDR:FILE argument, and a spoor_dump
 * holding the registers of a regs.json file (regs_json.c). The memory images themselves are a
 * layer of the memory view (memory.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/dump.h"
#include "util/number.h"

#include "snapshot/dump_internal.h"

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

spoor_dump *spoor_dump_from_regs_json(const char *regs_path)
{
    spoor_dump *d = calloc(1, sizeof *d);
    if (!d) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    d->version = SPOOR_DUMP_VERSION;
    uint8_t *text;
    size_t size;
    if (!spoor_dump_read_file(regs_path, &text, &size)) {
        spoor_dump_free(d);
        return NULL;
    }
    bool ok = spoor_regs_json_parse((const char *)text, size, regs_path, d);
    free(text);
    if (!ok) {
        spoor_dump_free(d);
        return NULL;
    }
    return d;
}
