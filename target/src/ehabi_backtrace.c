/*
 * The on-target EHABI walk (spoor_ehabi_step, spoor_ehabi_unwind in spoor/crash.h): each frame
 * is unwound by the shared machine (ehabi_unwind_exec.c, spoor/ehabi.h); this file adds what a
 * walk on the device needs around it: reads checked against the RAM/flash ranges, crossing
 * hardware-stacked exception frames, and the checks that end a walk (PC in flash, SP grows).
 *
 * Portable and explicit: the caller passes the index table's target address range, the
 * register state and a spoor_memory (reader plus RAM/flash ranges), so the same code runs
 * on the device (spoor_backtrace) and in host unit tests. Table reads must lie in flash,
 * stack reads in RAM, and every unwound PC in flash; anything else stops the walk.
 */
#include "spoor/cortexm_facts.h"
#include "spoor/crash.h"
#include "spoor/no_instrument.h"

/* A reader for the machine: reads through the memory's reader only what lies inside ranges
 * (flash for the tables, RAM for the stack). */
typedef struct checked_reader {
    const spoor_memory *memory;
    const spoor_range *ranges;
    uint32_t count;
} checked_reader;

SPOOR_NO_INSTRUMENT static bool checked_read(void *ctx, uint32_t addr, void *buf, size_t len)
{
    const checked_reader *c = ctx;
    return spoor_range_contains(c->ranges, c->count, addr, (uint32_t)len) &&
           c->memory->read(c->memory->ctx, addr, buf, (uint32_t)len);
}

/* The caller's state from a hardware-stacked exception frame (basic or extended FP frame, on
 * MSP or PSP; the ARMv8-M additional state context is not handled). */
SPOOR_NO_INSTRUMENT static int cross_exception(const spoor_ehabi_reader *stack,
                                               spoor_ehabi_state *st, uint32_t exc_return)
{
    uint32_t frame = st->r[13], word[SPOOR_EXC_FRAME_BASIC_WORDS];
    if (exc_return & SPOOR_EXC_RETURN_SPSEL) {
        if (st->psp == 0)
            return SPOOR_EHABI_END; /* the frame is on PSP, whose value is unknown */
        frame = st->psp;
    }
    for (uint32_t i = 0; i < SPOOR_EXC_FRAME_BASIC_WORDS; i++)
        if (!spoor_ehabi_read_word(stack, frame + 4u * i, &word[i]))
            return SPOOR_EHABI_BAD_READ;
    st->r[0] = word[0];
    st->r[1] = word[1];
    st->r[2] = word[2];
    st->r[3] = word[3];
    st->r[12] = word[4];
    st->r[14] = word[5];
    st->r[15] = word[6];
    uint32_t words = SPOOR_EXC_FRAME_BASIC_WORDS;
    if ((exc_return & SPOOR_EXC_RETURN_FTYPE) == 0)
        words += SPOOR_EXC_FRAME_FP_WORDS;
    st->r[13] = frame + 4u * words + ((word[7] & SPOOR_EXC_FRAME_XPSR_ALIGNED) ? 4u : 0u);
    return SPOOR_EHABI_STEPPED;
}

SPOOR_NO_INSTRUMENT int spoor_ehabi_step(const spoor_ehabi_table *table, const spoor_memory *memory,
                                         spoor_ehabi_state *state)
{
    uint32_t pc = state->r[15] & ~1u;
    uint32_t old_sp = state->r[13];
    checked_reader flash = {memory, memory->flash, memory->flash_count};
    checked_reader ram = {memory, memory->ram, memory->ram_count};
    const spoor_ehabi_source source = {
        table->exidx_start, table->exidx_end, {checked_read, &flash}, {checked_read, &ram}};
    spoor_ehabi_state next = *state;
    uint16_t known = 0xFFFFu; /* the device knows every register */
    /* A return address is judged by the call before it; any other PC (frame 0, a PC read from
     * an exception frame) is the instruction about to run, where a function's first instruction
     * has pushed nothing yet. */
    int status = spoor_ehabi_exec(&source, state->pc_is_return ? pc - 2u : pc,
                                  state->pc_is_return ? 0u : SPOOR_EHABI_EXACT_PC, next.r, &known);
    if (status != SPOOR_EHABI_STEPPED)
        return status;

    bool is_return = true;
    if (spoor_cortexm_is_exc_return(next.r[15])) {
        /* EXC_RETURN: the caller is the code the exception interrupted */
        status = cross_exception(&source.stack, &next, next.r[15]);
        if (status != SPOOR_EHABI_STEPPED)
            return status;
        is_return = false;
    }
    uint32_t new_pc = next.r[15] & ~1u;
    if (new_pc == 0 || next.r[15] == 0xFFFFFFFFu)
        return SPOOR_EHABI_END;
    if (!spoor_range_contains(memory->flash, memory->flash_count, new_pc, 2))
        return SPOOR_EHABI_BAD_PC;
    /* SP only grows - except when the walk changes from the main to the process stack */
    if (is_return ? (next.r[13] < old_sp || (next.r[13] == old_sp && new_pc == pc))
                  : next.r[13] == old_sp && new_pc == pc)
        return SPOOR_EHABI_NO_PROGRESS;
    next.r[15] = new_pc;
    next.pc_is_return = is_return;
    *state = next;
    return SPOOR_EHABI_STEPPED;
}

SPOOR_NO_INSTRUMENT uint32_t spoor_ehabi_unwind(const spoor_ehabi_table *table,
                                                const spoor_memory *memory,
                                                const spoor_ehabi_state *start, uint32_t *pcs,
                                                uint32_t max, int *stop)
{
    int why = SPOOR_EHABI_FULL;
    uint32_t n = 0;
    if (max == 0 || !table || !memory || !start || !pcs) {
        if (stop)
            *stop = why;
        return 0;
    }
    spoor_ehabi_state state = *start;
    state.r[15] &= ~1u;
    pcs[n++] = state.r[15];
    uint32_t steps = 0;
    while (n < max) {
        if (steps++ >= SPOOR_EHABI_MAX_STEPS) {
            why = SPOOR_EHABI_NO_PROGRESS;
            break;
        }
        int status = spoor_ehabi_step(table, memory, &state);
        if (status != SPOOR_EHABI_STEPPED) {
            why = status;
            break;
        }
        pcs[n++] = state.r[15];
    }
    if (stop)
        *stop = why;
    return n;
}
