/* The instructions executed between MTB packets (spoor/mtb.h): every instruction from one
 * packet's destination up to the next packet's source runs in sequence, since any other change
 * of flow would have written a packet. */
#include "base/byteorder.h"
#include "spoor/mtb_decode.h"
#include "spoor/thumb.h"

#define DEFAULT_MAX_RUN (64u * 1024u)
#define CHUNK 256u

static bool gap(spoor_mtb_step_fn fn, void *ctx, uint32_t pc, const char *why)
{
    spoor_mtb_step step = {SPOOR_MTB_STEP_GAP, pc, 0, NULL, NULL, why};
    return fn(ctx, &step);
}

/* The instructions from `from` up to `to` (to_inclusive: the one at `to` too). */
static bool run(uint32_t from, uint32_t to, bool to_inclusive, spoor_read_fn read, void *read_ctx,
                uint32_t max_run, spoor_mtb_step_fn fn, void *ctx)
{
    if (spoor_mtb_is_exc_return(from))
        return true; /* after EXC_RETURN: the next packet says where execution went */
    if (to < from || to - from > max_run)
        return gap(fn, ctx, from,
                   to < from ? "the next source lies before this destination"
                             : "the next source lies too far after this destination");
    uint64_t end = (uint64_t)to + (to_inclusive ? 1u : 0u); /* instructions start below end */
    uint8_t code[CHUNK];
    uint64_t pc = from;
    uint32_t last = from - 1u; /* start of the last instruction reported */
    while (pc < end) {
        uint64_t want = (end - pc + 3u) & ~1ull; /* the last instruction may be 32-bit */
        if (want > CHUNK)
            want = CHUNK;
        if (pc + want > 0x100000000u)
            want = 0x100000000u - pc;
        while (want >= 2u && !read(read_ctx, (uint32_t)pc, code, (size_t)want))
            want = want > 4u ? 4u : want - 2u; /* near the end of readable code */
        if (want < 2u)
            return gap(fn, ctx, (uint32_t)pc, "code not readable");
        uint32_t at = 0;
        while (at + 2u <= want && pc < end) {
            unsigned size = spoor_thumb_size(spoor_le16(code + at));
            if (at + size > want) {
                if (at == 0)
                    return gap(fn, ctx, (uint32_t)pc, "code not readable");
                break; /* read on from pc */
            }
            spoor_mtb_step step = {SPOOR_MTB_STEP_INSN, (uint32_t)pc, size, code + at, NULL, NULL};
            if (!fn(ctx, &step))
                return false;
            last = (uint32_t)pc;
            pc += size;
            at += size;
        }
    }
    /* the walk must land on the source: start of the last instruction (inclusive), or just
     * after it */
    if (to_inclusive ? last != to : pc != to)
        return gap(fn, ctx, to, "the source is not on an instruction boundary");
    return true;
}

bool spoor_mtb_flow(const spoor_mtb_packet *packets, size_t count, spoor_read_fn read,
                    void *read_ctx, uint32_t max_run, spoor_mtb_step_fn fn, void *ctx)
{
    if (max_run == 0)
        max_run = DEFAULT_MAX_RUN;
    for (size_t i = 0; i < count; i++) {
        const spoor_mtb_packet *p = &packets[i];
        if (i > 0 && !p->s) {
            /* an exception entry's source is the preferred return address: not yet run */
            bool inclusive = !p->a;
            if (!run(packets[i - 1].dst, p->src, inclusive, read, read_ctx, max_run, fn, ctx))
                return false;
        } else if (i > 0 && !gap(fn, ctx, packets[i - 1].dst, "tracing stopped and restarted")) {
            return false;
        }
        spoor_mtb_step step = {SPOOR_MTB_STEP_PACKET, p->src, 0, NULL, p, NULL};
        if (!fn(ctx, &step))
            return false;
    }
    return true;
}
