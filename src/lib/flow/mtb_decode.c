/* MTB register block and trace buffer to packets, oldest first (spoor/mtb.h, docs/mtb.md). */
#include <string.h>

#include "base/byteorder.h"
#include "base/set_error.h"
#include "spoor/mtb_decode.h"

#define POSITION_WRAP (1u << 2)
#define POSITION_POINTER 0xFFFFFFF8u
#define MASTER_EN (1u << 31)
#define MASTER_MASK 0x1Fu
#define MAX_MASK 20u /* 2^(20+4) = SPOOR_MTB_MAX_SIZE */

bool spoor_mtb_layout_get(const spoor_mtb_regs *regs, spoor_mtb_layout *out)
{
    memset(out, 0, sizeof *out);
    uint32_t mask = regs->master & MASTER_MASK;
    if (regs->base & 7u) {
        spoor_set_error(SPOOR_ERR_FORMAT, "MTB_BASE 0x%08x is not 8-byte aligned", regs->base);
        return false;
    }
    if (mask > MAX_MASK) {
        spoor_set_error(SPOOR_ERR_TOO_LARGE,
                        "MTB_MASTER.MASK %u gives a 2^%u-byte buffer, more than the %u MiB "
                        "spoor accepts",
                        mask, mask + 4u, SPOOR_MTB_MAX_SIZE >> 20);
        return false;
    }
    uint32_t size = 1u << (mask + 4u);
    uint32_t pointer = regs->position & POSITION_POINTER;
    uint32_t start = pointer & ~(size - 1u);
    if (start > UINT32_MAX - regs->base || regs->base + start > UINT32_MAX - (size - 1u)) {
        spoor_set_error(SPOOR_ERR_FORMAT,
                        "MTB buffer at MTB_BASE 0x%08x + 0x%x (%u bytes) runs past 4 GiB",
                        regs->base, start, size);
        return false;
    }
    out->address = regs->base + start;
    out->size = size;
    out->write = pointer & (size - 1u);
    out->wrapped = (regs->position & POSITION_WRAP) != 0;
    out->enabled = (regs->master & MASTER_EN) != 0;
    return true;
}

const char *spoor_mtb_kind_name(spoor_mtb_kind kind)
{
    switch (kind) {
    case SPOOR_MTB_EXCEPTION_ENTRY: return "exception_entry";
    case SPOOR_MTB_EXCEPTION_RETURN: return "exception_return";
    default: return "branch";
    }
}

static void packet_at(const uint8_t *bytes, uint32_t offset, spoor_mtb_packet *p)
{
    uint32_t src = spoor_le32(bytes + offset), dst = spoor_le32(bytes + offset + 4u);
    p->a = (src & 1u) != 0;
    p->s = (dst & 1u) != 0;
    p->src = src & ~1u;
    p->dst = dst & ~1u;
    p->offset = offset;
    if (!p->a && spoor_mtb_is_exc_return(p->dst))
        p->kind = SPOOR_MTB_EXCEPTION_RETURN; /* the return instruction to EXC_RETURN */
    else if (p->a && spoor_mtb_is_exc_return(p->src))
        p->kind = SPOOR_MTB_EXCEPTION_RETURN; /* EXC_RETURN to where execution continues */
    else if (p->a)
        p->kind = SPOOR_MTB_EXCEPTION_ENTRY;
    else
        p->kind = SPOOR_MTB_BRANCH;
}

bool spoor_mtb_decode(const spoor_mtb_layout *layout, const uint8_t *bytes, size_t len,
                      spoor_mtb_packet *out, size_t *count)
{
    *count = 0;
    uint32_t size = layout->size;
    if (size < 16u || (size & (size - 1u)) || size > SPOOR_MTB_MAX_SIZE || layout->write >= size ||
        (layout->write & 7u)) {
        spoor_set_error(SPOOR_ERR_FORMAT, "MTB layout: size %u, write offset %u is not valid", size,
                        layout->write);
        return false;
    }
    if (len < size) {
        spoor_set_error(SPOOR_ERR_TRUNCATED,
                        "MTB_MASTER.MASK says %u bytes of trace buffer, the image holds %zu", size,
                        len);
        return false;
    }
    uint32_t first = layout->wrapped ? layout->write : 0u;
    uint32_t n = layout->wrapped ? size / 8u : layout->write / 8u;
    if (n == 0) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "the MTB trace is empty (MTB_POSITION 0x%08x: pointer at the start, "
                        "not wrapped)",
                        layout->write);
        return false;
    }
    bool any = false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t offset = (first + 8u * i) & (size - 1u);
        packet_at(bytes, offset, &out[i]);
        any |= out[i].src || out[i].dst || out[i].a || out[i].s;
    }
    if (!any) {
        spoor_set_error(SPOOR_ERR_FORMAT,
                        "the MTB trace buffer at 0x%08x holds only zeros: the MTB never wrote "
                        "there (is MTB_BASE right?)",
                        layout->address);
        return false;
    }
    *count = n;
    return true;
}
