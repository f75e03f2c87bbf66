/* The MTB's register block and buffer from a dump or target memory, and stopping a live MTB
 * while it is read (spoor/mtb_decode.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "flow/flow_read_internal.h"
#include "spoor/mtb_decode.h"

#define MTB_MASTER_EN (1u << 31)
#define MTB_MASTER_TSTARTEN (1u << 5)

/* The layout of out->regs; false with the error set, input first. */
static bool get_layout(spoor_mtb_trace *out, const char *input)
{
    if (spoor_mtb_layout_get(&out->regs, &out->layout))
        return true;
    char why[256];
    snprintf(why, sizeof why, "%s", spoor_last_error());
    spoor_set_error(spoor_last_status(), "%s: %s", input, why);
    return false;
}

bool spoor_mtb_from_dump(const spoor_dump *d, const char *input, spoor_mtb_trace *out)
{
    memset(out, 0, sizeof *out);
    if (!d->has_mtb)
        return spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                               "%s: no MTB record in the dump (was spoor_crash_config."
                               "mtb_registers set?)",
                               input),
               false;
    out->regs = (spoor_mtb_regs){d->mtb_position, d->mtb_master, d->mtb_flow, d->mtb_base};
    if (!get_layout(out, input))
        return false;
    const spoor_mtb_layout *l = &out->layout;
    uint64_t end = (uint64_t)d->mtb_address + d->mtb_len;
    if (l->address < d->mtb_address || (uint64_t)l->address + l->size > end)
        return spoor_set_error(SPOOR_ERR_FORMAT,
                               "%s: the MTB registers place the %u-byte buffer at 0x%08x, the "
                               "dump's MTB record holds 0x%08x..0x%08llx",
                               input, l->size, l->address, d->mtb_address, (unsigned long long)end),
               false;
    out->bytes = d->mtb_bytes + (l->address - d->mtb_address);
    return true;
}

bool spoor_mtb_read(spoor_mem *mem, uint32_t regs_addr, const spoor_mtb_frozen *frozen,
                    const char *input, spoor_mtb_trace *out)
{
    memset(out, 0, sizeof *out);
    uint32_t w[4];
    char what[96];
    snprintf(what, sizeof what, "the MTB registers (0x%08x+16)", regs_addr);
    spoor_flow_read_begin(); /* a read that fails says why only when live */
    for (unsigned i = 0; i < 4; i++)
        if (!spoor_mem_read_u32(mem, regs_addr + 4u * i, &w[i]))
            return spoor_flow_connection_failed(input, what,
                                                frozen ? "MTB_MASTER was read, for --freeze"
                                                       : "nothing of the MTB was read")
                       ? false
                       : (spoor_set_error(
                              SPOOR_ERR_UNAVAILABLE,
                              "%s: cannot read the MTB registers at 0x%08x (give them with "
                              "--mem 0x%08x:FILE, or --mtb-regs ADDR for a block elsewhere)",
                              input, regs_addr, regs_addr),
                          false);
    out->regs = (spoor_mtb_regs){w[0], frozen ? frozen->master : w[1], w[2], w[3]};
    if (!get_layout(out, input))
        return false;
    const spoor_mtb_layout *l = &out->layout;
    out->owned = malloc(l->size);
    if (!out->owned)
        return spoor_set_error(SPOOR_ERR_NOMEM, "out of memory"), false;
    snprintf(what, sizeof what, "the trace buffer (0x%08x+%u)", l->address, l->size);
    if (!spoor_mem_read(mem, l->address, out->owned, l->size))
        return spoor_flow_connection_failed(input, what, "the MTB registers were read")
                   ? false
                   : (spoor_set_error(
                          SPOOR_ERR_UNAVAILABLE,
                          "%s: cannot read the %u-byte trace buffer at 0x%08x (MTB_BASE "
                          "0x%08x, MTB_POSITION 0x%08x; give it with --mem 0x%08x:FILE)",
                          input, l->size, l->address, out->regs.base, out->regs.position,
                          l->address),
                      false);
    out->bytes = out->owned;
    return true;
}

void spoor_mtb_trace_free(spoor_mtb_trace *t)
{
    free(t->owned);
    memset(t, 0, sizeof *t);
}

static bool write_master(spoor_mem *mem, uint32_t at, uint32_t value)
{
    uint8_t b[4] = {(uint8_t)value, (uint8_t)(value >> 8), (uint8_t)(value >> 16),
                    (uint8_t)(value >> 24)};
    return spoor_mem_write(mem, at, b, sizeof b);
}

bool spoor_mtb_freeze(spoor_mem *mem, uint32_t regs_addr, const char *input, spoor_mtb_frozen *out)
{
    memset(out, 0, sizeof *out);
    out->master_at = regs_addr + 4u;
    char why[256];
    if (!spoor_mem_read_u32(mem, out->master_at, &out->master)) {
        snprintf(why, sizeof why, "%s", spoor_last_error());
        return spoor_set_error(spoor_last_status(),
                               "%s: --freeze: cannot read MTB_MASTER at 0x%08x: %s", input,
                               out->master_at, why),
               false;
    }
    const uint32_t stopped = out->master & ~(MTB_MASTER_EN | MTB_MASTER_TSTARTEN);
    if (stopped != out->master) { /* a stopped MTB needs nothing */
        if (!write_master(mem, out->master_at, stopped)) {
            snprintf(why, sizeof why, "%s", spoor_last_error());
            spoor_status st = spoor_last_status();
            if (st == SPOOR_ERR_IO || st == SPOOR_ERR_PROTOCOL) /* sent, the answer lost */
                return spoor_set_error(st,
                                       "%s: --freeze: the stop (MTB_MASTER 0x%08x -> 0x%08x) "
                                       "got no answer: the MTB may be stopped, and cannot be "
                                       "restarted: %s",
                                       input, out->master, stopped, why),
                       false;
            /* refused: read MASTER back, as a server can refuse a write it did (E01 after
             * the write went through): a stopped MTB is frozen all the same */
            uint32_t now;
            spoor_mem_invalidate(mem);
            if (!spoor_mem_read_u32(mem, out->master_at, &now))
                return spoor_set_error(st,
                                       "%s: --freeze: the stop (MTB_MASTER 0x%08x -> 0x%08x) was "
                                       "refused and MTB_MASTER cannot be read back: the MTB may "
                                       "be stopped: %s",
                                       input, out->master, stopped, why),
                       false;
            if (now != stopped)
                return spoor_set_error(st, "%s: --freeze: cannot stop the MTB: %s", input, why),
                       false;
        }
        out->written = true;
    }
    spoor_mem_invalidate(mem); /* everything else is read after the stop */
    return true;
}

bool spoor_mtb_thaw(spoor_mem *mem, const spoor_mtb_frozen *frozen, const char *input)
{
    if (!frozen->written || write_master(mem, frozen->master_at, frozen->master))
        return true;
    char why[256];
    snprintf(why, sizeof why, "%s", spoor_last_error());
    return spoor_set_error(spoor_last_status(),
                           "%s: --freeze: cannot write MTB_MASTER 0x%08x back, the MTB stays "
                           "stopped: %s",
                           input, frozen->master, why),
           false;
}

bool spoor_mtb_open(const spoor_snapshot *snap, uint32_t regs_addr, const spoor_mtb_frozen *frozen,
                    spoor_mtb_trace *out, const char **from)
{
    if (snap->dump && snap->dump->has_mtb) {
        *from = "dump";
        return spoor_mtb_from_dump(snap->dump, snap->input, out);
    }
    *from = "memory";
    return spoor_mtb_read(snap->mem, regs_addr, frozen, snap->input, out);
}
