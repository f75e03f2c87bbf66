/* libFuzzer harness: the first 16 bytes are an MTB register block (POSITION, MASTER, FLOW,
 * BASE), the rest the trace buffer and, behind it, code bytes at 0x1000 for the flow. Checks
 * that nothing crashes and that what comes out is consistent: packets inside the buffer, in
 * order from the oldest, flow steps of instructions 2 or 4 bytes long, branch trace blocks
 * that end at the stop pc and never span more than a run. */
#include <stdlib.h>
#include <string.h>

#include "spoor/mtb_decode.h"

static void check(int ok)
{
    if (!ok)
        abort();
}

struct code {
    const uint8_t *bytes;
    size_t len;
};

static bool read_code(void *ctx, uint32_t addr, void *buf, size_t len)
{
    const struct code *c = ctx;
    if (addr < 0x1000u || addr - 0x1000u > c->len || len > c->len - (addr - 0x1000u))
        return false;
    memcpy(buf, c->bytes + (addr - 0x1000u), len);
    return true;
}

static bool step(void *ctx, const spoor_mtb_step *s)
{
    size_t *n = ctx;
    if (s->kind == SPOOR_MTB_STEP_INSN)
        check(s->size == 2 || s->size == 4);
    if (s->kind == SPOOR_MTB_STEP_PACKET)
        check(s->packet != NULL);
    return ++*n < 100000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    spoor_mtb_regs r;
    memcpy(&r, data, 16);
    r.master &= 0x8000001Fu;
    if ((r.master & 0x1Fu) > 9u) /* keep the buffers small enough for the fuzzer */
        r.master = (r.master & ~0x1Fu) | 9u;
    spoor_mtb_layout l;
    if (!spoor_mtb_layout_get(&r, &l)) {
        check(spoor_last_error()[0] != 0);
        return 0;
    }
    check(l.size >= 16 && (l.size & (l.size - 1)) == 0 && l.write < l.size);
    const uint8_t *buf = data + 16;
    size_t len = size - 16;
    spoor_mtb_packet *p = malloc(sizeof *p * (l.size / 8u));
    size_t n = 0;
    if (spoor_mtb_decode(&l, buf, len, p, &n)) {
        check(n >= 1 && n <= l.size / 8u);
        uint32_t first = l.wrapped ? l.write : 0u;
        for (size_t i = 0; i < n; i++)
            check(p[i].offset == ((first + 8u * i) & (l.size - 1u)));
        struct code c = {buf + l.size, len - l.size};
        size_t steps = 0;
        spoor_mtb_flow(p, n, read_code, &c, 4096, step, &steps);
        /* as GDB branch trace, stopped at the newest source: every block a gap or a forward
         * run, the last one at the stop pc */
        spoor_mtb_btrace bt;
        uint32_t stop = p[n - 1].src;
        check(spoor_mtb_btrace_build(p, n, l.wrapped, stop, read_code, &c, &bt));
        check(bt.count >= 1 && bt.blocks[bt.count - 1].end == stop && bt.packets <= n);
        for (size_t i = 0; i < bt.count; i++)
            check(bt.blocks[i].end < bt.blocks[i].begin ||
                  bt.blocks[i].end - bt.blocks[i].begin <= 64u * 1024u + 4u);
        spoor_mtb_btrace_free(&bt);
    } else {
        check(n == 0 && spoor_last_error()[0] != 0);
    }
    free(p);
    return 0;
}
