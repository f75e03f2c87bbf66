/* The call recorder's ring found and read in target memory (spoor/calls_decode.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "flow/flow_read_internal.h"
#include "spoor/calls_decode.h"

/* The error of the last call with "input: " before it. */
static bool fail_in(const char *input)
{
    char why[512];
    snprintf(why, sizeof why, "%s", spoor_last_error());
    spoor_set_error(spoor_last_status(), "%s: %s", input, why);
    return false;
}

/* After a failed read of what: a live target's connection that failed says so (and what was
 * read before: before); else what is not in the input, with the target's reason when it gave
 * one (a server that refused the read). */
static bool read_failed(const char *input, const char *what, const char *before)
{
    if (spoor_flow_connection_failed(input, what, before))
        return false;
    char why[400];
    snprintf(why, sizeof why, "%s", spoor_flow_error_after(input));
    spoor_set_error(SPOOR_ERR_UNAVAILABLE, "%s: %s is not in the input%s%s", input, what,
                    why[0] ? ": " : "", why);
    return false;
}

bool spoor_calls_read(const spoor_elf *elf, spoor_read_fn read, void *ctx, const char *input,
                      spoor_calls_info *info, spoor_call_trace *out)
{
    memset(out, 0, sizeof *out);
    uint32_t addr, size;
    if (!spoor_elf_symbol(elf, SPOOR_CALLS_STATE_SYMBOL, &addr, &size))
        return spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                               "%s: no call recorder (no symbol %s: link the target library and "
                               "call spoor_calls_init)",
                               spoor_elf_path(elf), SPOOR_CALLS_STATE_SYMBOL),
               false;
    uint8_t st[SPOOR_CALLS_STATE_SIZE];
    char what[128];
    spoor_flow_read_begin();
    if (!read(ctx, addr, st, sizeof st)) {
        snprintf(what, sizeof what, "the call recorder's state (%s, 0x%08" PRIx32 "+%u)",
                 SPOOR_CALLS_STATE_SYMBOL, addr, SPOOR_CALLS_STATE_SIZE);
        return read_failed(input, what, "nothing of the recorder was read");
    }
    if (!spoor_calls_parse_state(st, sizeof st, info))
        return fail_in(input);
    size_t len = spoor_calls_ring_bytes(info);
    uint8_t *ring = malloc(len);
    if (!ring)
        return spoor_set_error(SPOOR_ERR_NOMEM, "out of memory"), false;
    spoor_flow_read_begin();
    if (!read(ctx, info->ring, ring, len)) {
        free(ring);
        snprintf(what, sizeof what, "the call ring (0x%08" PRIx32 "+%zu)", info->ring, len);
        return read_failed(input, what, "the recorder's state was read");
    }
    bool ok = spoor_calls_decode(info, ring, len, out);
    free(ring);
    return ok || fail_in(input);
}
