/* Unwinding one frame with the ARM EHABI tables of the ELF (.ARM.exidx, .ARM.extab).
 *
 * The tables are interpreted by the target library's EHABI machine (spoor/ehabi.h,
 * target/src/ehabi_unwind_exec.c), the very code spoor_backtrace() runs on the device: this
 * file only hands it the ELF's index table, a reader for the table words (the ELF's contents)
 * and the walk's own stack reader, which has the machine's reader type (spoor_read_fn and
 * spoor_ehabi_read_fn are the same function type) and so is passed as it is. */
#include "spoor/ehabi.h"
#include "unwind/unwind_frame_internal.h"

/* The table reader: .ARM.exidx and .ARM.extab words from the ELF. `failed` tells a broken
 * table (no information) from an unreadable stack. */
typedef struct elf_tables {
    const spoor_elf *elf;
    bool failed;
} elf_tables;

static bool read_elf_tables(void *ctx, uint32_t addr, void *buf, size_t len)
{
    elf_tables *t = ctx;
    if (spoor_elf_read(t->elf, addr, buf, len) == len) {
        return true;
    }
    t->failed = true;
    return false;
}

unwind_result spoor_unwind_ehabi_step(const unwind_env *env, const unwind_state *in,
                                      unwind_state *out)
{
    uint32_t base;
    const uint8_t *data;
    size_t size;
    if (env->elf == NULL || !spoor_elf_section(env->elf, ".ARM.exidx", &base, &data, &size) ||
        size < 8 || size > UINT32_MAX - base) {
        return UNWIND_NO_INFO;
    }
    elf_tables tables = {.elf = env->elf, .failed = false};
    const spoor_ehabi_source source = {
        .exidx_start = base,
        .exidx_end = base + (uint32_t)size,
        .table = {read_elf_tables, &tables},
        .stack = {env->read, env->ctx},
    };
    /* A PC that is not a return address is the instruction about to run: at a function's
     * first instruction nothing is pushed yet and LR returns. */
    uint32_t flags = in->pc_is_return ? 0u : SPOOR_EHABI_EXACT_PC;
    *out = *in;
    out->pc_is_return = false;
    int status = spoor_ehabi_exec(&source, unwind_lookup_pc(in), flags, out->r, &out->known);
    if (status == SPOOR_EHABI_STEPPED) {
        return UNWIND_OK;
    }
    return status == SPOOR_EHABI_BAD_READ && !tables.failed ? UNWIND_UNREADABLE : UNWIND_NO_INFO;
}
