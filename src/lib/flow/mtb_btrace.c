/* The MTB's flow as GDB branch trace (spoor/mtb_decode.h): the instructions spoor_mtb_flow
 * walks between packets, grouped into the Branch Trace Store's blocks, up to the stop. */
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/mtb_decode.h"

typedef struct build {
    spoor_mtb_btrace *out;
    size_t cap;
    bool nomem;
    const spoor_mtb_packet *packets;
    size_t end; /* index of the window's last packet: the exception entry at the stop pc */
    bool wrapped;
    uint32_t stop_pc;
    bool in_run; /* instructions since the last packet or gap: first..last, next after it */
    uint32_t first, last, next;
    size_t run_insns;
} build;

static void push(build *b, spoor_rsp_block block)
{
    spoor_mtb_btrace *o = b->out;
    if (o->count == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        spoor_rsp_block *grown =
            cap < SIZE_MAX / sizeof *grown ? realloc(o->blocks, cap * sizeof *grown) : NULL;
        if (!grown) {
            b->nomem = true;
            return;
        }
        o->blocks = grown;
        b->cap = cap;
    }
    o->blocks[o->count++] = block;
    if (block.end < block.begin)
        o->gaps++;
}

/* The instructions walked since the last packet or gap, as one block. */
static void flush(build *b)
{
    if (!b->in_run)
        return;
    push(b, (spoor_rsp_block){b->first, b->last});
    b->out->insns += b->run_insns;
    b->in_run = false;
    b->run_insns = 0;
}

static bool on_step(void *ctx, const spoor_mtb_step *s)
{
    build *b = ctx;
    switch (s->kind) {
    case SPOOR_MTB_STEP_INSN:
        if (!b->in_run)
            b->first = s->pc;
        b->in_run = true;
        b->last = s->pc;
        b->next = s->pc + s->size;
        b->run_insns++;
        break;
    case SPOOR_MTB_STEP_GAP:
        flush(b);
        push(b, spoor_rsp_gap(s->pc));
        break;
    case SPOOR_MTB_STEP_PACKET: {
        size_t index = (size_t)(s->packet - b->packets);
        if (index == 0 && b->wrapped) /* what ran before the oldest packet was overwritten */
            push(b, spoor_rsp_gap(s->packet->dst));
        if (index < b->end) {
            flush(b);
            break;
        }
        /* the stop: the run up to it ends at the stop pc, the current instruction */
        if (b->in_run && b->next == b->stop_pc) {
            push(b, (spoor_rsp_block){b->first, b->stop_pc});
            b->out->insns += b->run_insns;
            b->in_run = false;
        } else {
            flush(b);
            push(b, (spoor_rsp_block){b->stop_pc, b->stop_pc});
        }
        return false;
    }
    }
    return !b->nomem;
}

bool spoor_mtb_btrace_build(const spoor_mtb_packet *packets, size_t count, bool wrapped,
                            uint32_t stop_pc, spoor_read_fn read, void *read_ctx,
                            spoor_mtb_btrace *out)
{
    memset(out, 0, sizeof *out);
    stop_pc &= ~1u;
    build b = {.out = out, .packets = packets, .wrapped = wrapped, .stop_pc = stop_pc};
    spoor_mtb_packet *copy = NULL;
    size_t end = count;
    for (size_t i = count; i-- > 0;)
        if (packets[i].kind == SPOOR_MTB_EXCEPTION_ENTRY && packets[i].src == stop_pc) {
            end = i;
            break;
        }
    if (end == count) { /* no entry at the stop: the history runs on from the newest packet */
        copy = malloc((count + 1) * sizeof *copy);
        if (!copy) {
            spoor_set_error(SPOOR_ERR_NOMEM, "out of memory for %zu MTB packets", count + 1);
            return false;
        }
        if (count)
            memcpy(copy, packets, count * sizeof *copy);
        copy[count] = (spoor_mtb_packet){.src = stop_pc,
                                         .dst = stop_pc,
                                         .a = true,
                                         .kind = SPOOR_MTB_EXCEPTION_ENTRY,
                                         .offset = UINT32_MAX};
        b.packets = copy;
    } else {
        out->at_entry = true;
    }
    b.end = end;
    out->packets = end == count ? count : end + 1;
    spoor_mtb_flow(b.packets, end + 1, read, read_ctx, 0, on_step, &b);
    free(copy);
    if (b.nomem) {
        spoor_mtb_btrace_free(out);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory for the branch trace");
        return false;
    }
    return true;
}

void spoor_mtb_btrace_free(spoor_mtb_btrace *bt)
{
    free(bt->blocks);
    memset(bt, 0, sizeof *bt);
}

bool spoor_mtb_btrace_of(const spoor_mtb_trace *trace, uint32_t stop_pc, spoor_read_fn read,
                         void *read_ctx, spoor_mtb_btrace *out)
{
    const spoor_mtb_layout *l = &trace->layout;
    memset(out, 0, sizeof *out);
    spoor_mtb_packet *packets = malloc(sizeof *packets * (l->size / 8u + 1u));
    if (!packets) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory for %u MTB packets", l->size / 8u);
        return false;
    }
    size_t n = 0;
    bool ok = spoor_mtb_decode(l, trace->bytes, l->size, packets, &n);
    if (ok || spoor_last_status() == SPOOR_ERR_UNAVAILABLE) /* empty: no history */
        ok = spoor_mtb_btrace_build(packets, ok ? n : 0, l->wrapped, stop_pc, read, read_ctx, out);
    free(packets);
    return ok;
}
