/*
 * A bounded EHABI unwinder ("Exception Handling ABI for the ARM Architecture": the
 * .ARM.exidx index table and the ARM-defined personality routines 0, 1 and 2).
 *
 * Portable and explicit: the caller passes the index table's target address range, the
 * register state and a spoor_memory (reader plus RAM/flash ranges), so the same code runs
 * on the device (spoor_backtrace) and in host unit tests. Table reads must lie in flash,
 * stack reads in RAM, and every unwound PC in flash; anything else stops the walk.
 */
#include <string.h>

#include "spoor/crash.h"

#define EXIDX_CANTUNWIND 1u
#define MAX_OPCODE_BYTES (3u + 4u * 255u)

typedef enum { STEP_CONTINUE = -1 } step_status;

static bool read_word(const spoor_memory *m, const spoor_range *ranges, uint32_t count,
                      uint32_t addr, uint32_t *value)
{
    uint8_t b[4];
    if ((addr & 3u) || !spoor_range_contains(ranges, count, addr, 4) ||
        !m->read(m->ctx, addr, b, 4))
        return false;
    *value = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

static bool table_word(const spoor_memory *m, uint32_t addr, uint32_t *value)
{
    return read_word(m, m->flash, m->flash_count, addr, value);
}

static bool stack_word(const spoor_memory *m, uint32_t addr, uint32_t *value)
{
    return read_word(m, m->ram, m->ram_count, addr, value);
}

/* A prel31 field: a 31-bit signed offset from the address of the word holding it. */
static uint32_t prel31(uint32_t word, uint32_t place)
{
    uint32_t offset = word & 0x7FFFFFFFu;
    if (offset & 0x40000000u)
        offset |= 0x80000000u;
    return place + offset;
}

/* The unwind instructions of one function: up to 3 bytes in a first word, then more words,
 * each consumed most significant byte first. */
typedef struct opcode_stream {
    const spoor_memory *memory;
    uint32_t first;      /* bytes not consumed yet sit at the top */
    uint32_t first_left; /* bytes left in `first` */
    uint32_t next_word;  /* address of the next extra word */
    uint32_t words_left;
    bool bad_read;
} opcode_stream;

/* Next byte; 0xB0 (finish) once the stream is exhausted. */
static uint32_t next_byte(opcode_stream *s, bool *have)
{
    *have = true;
    if (s->first_left == 0 && s->words_left > 0) {
        if (!table_word(s->memory, s->next_word, &s->first)) {
            s->bad_read = true;
            *have = false;
            return 0xB0u;
        }
        s->next_word += 4;
        s->words_left--;
        s->first_left = 4;
    }
    if (s->first_left == 0) {
        *have = false;
        return 0xB0u;
    }
    uint32_t byte = s->first >> 24;
    s->first <<= 8;
    s->first_left--;
    return byte;
}

/* Finds the index entry covering addr; returns its address or 0. */
static uint32_t find_entry(const spoor_ehabi_table *t, const spoor_memory *m, uint32_t addr,
                           bool *bad_read)
{
    uint32_t count = (t->exidx_end - t->exidx_start) / 8u;
    uint32_t lo = 0, hi = count, found = 0;
    bool any = false;
    if (t->exidx_end <= t->exidx_start)
        return 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        uint32_t entry = t->exidx_start + 8u * mid, word;
        if (!table_word(m, entry, &word)) {
            *bad_read = true;
            return 0;
        }
        uint32_t fn = prel31(word, entry) & ~1u;
        if (fn <= addr) {
            found = entry;
            any = true;
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return any ? found : 0;
}

/* Sets up the opcode stream for the entry; returns STEP_CONTINUE or a stop reason. */
static int open_entry(const spoor_memory *m, uint32_t entry, opcode_stream *s)
{
    uint32_t word;
    memset(s, 0, sizeof *s);
    s->memory = m;
    if (!table_word(m, entry + 4u, &word))
        return SPOOR_EHABI_BAD_READ;
    if (word == EXIDX_CANTUNWIND)
        return SPOOR_EHABI_END;
    if (word & 0x80000000u) {
        /* inline compact model: personality index in bits 27-24, must be 0 (Su16) */
        if (((word >> 24) & 0x0Fu) != 0)
            return SPOOR_EHABI_REFUSED;
        s->first = word << 8;
        s->first_left = 3;
        return STEP_CONTINUE;
    }
    uint32_t extab = prel31(word, entry + 4u);
    if (!table_word(m, extab, &word))
        return SPOOR_EHABI_BAD_READ;
    if (word & 0x80000000u) {
        uint32_t index = (word >> 24) & 0x0Fu;
        if (index == 0) { /* Su16: three opcodes */
            s->first = word << 8;
            s->first_left = 3;
        } else if (index == 1 || index == 2) { /* Lu16 / Lu32: count, two opcodes, words */
            s->words_left = (word >> 16) & 0xFFu;
            s->first = word << 16;
            s->first_left = 2;
            s->next_word = extab + 4u;
        } else {
            return SPOOR_EHABI_REFUSED;
        }
        return STEP_CONTINUE;
    }
    /* Generic model: a prel31 to the personality routine. GCC's routines keep their
     * unwind instructions next, as a word with the extra-word count in bits 31-24 and three
     * opcodes, followed by the extra words. */
    if (!table_word(m, extab + 4u, &word))
        return SPOOR_EHABI_BAD_READ;
    s->words_left = word >> 24;
    s->first = word << 8;
    s->first_left = 3;
    s->next_word = extab + 8u;
    return STEP_CONTINUE;
}

/* Pops the registers in mask (bit n = r[n]) from vsp upwards, lowest register first. */
static bool pop_mask(const spoor_memory *m, spoor_ehabi_state *st, uint32_t *vsp, uint32_t mask,
                     bool *popped_pc)
{
    uint32_t new_sp = 0;
    bool sp_popped = false;
    for (uint32_t r = 0; r < 16u; r++) {
        if (!(mask & (1u << r)))
            continue;
        uint32_t value;
        if (!stack_word(m, *vsp, &value))
            return false;
        *vsp += 4u;
        if (r == 13u) {
            new_sp = value;
            sp_popped = true;
        } else {
            st->r[r] = value;
        }
        if (r == 15u)
            *popped_pc = true;
    }
    if (sp_popped) /* a popped SP becomes the new vsp once the pop is done */
        *vsp = new_sp;
    return true;
}

/* Runs the unwind instructions; returns STEP_CONTINUE or a stop reason. */
static int execute(const spoor_memory *m, opcode_stream *s, spoor_ehabi_state *st)
{
    uint32_t vsp = st->r[13];
    bool popped_pc = false, have;
    for (uint32_t budget = MAX_OPCODE_BYTES; budget > 0; budget--) {
        uint32_t op = next_byte(s, &have);
        if (s->bad_read)
            return SPOOR_EHABI_BAD_READ;
        if (!have || op == 0xB0u)
            break; /* finish */
        if ((op & 0xC0u) == 0x00u) {
            vsp += ((op & 0x3Fu) << 2) + 4u;
        } else if ((op & 0xC0u) == 0x40u) {
            vsp -= ((op & 0x3Fu) << 2) + 4u;
        } else if ((op & 0xF0u) == 0x80u) {
            uint32_t op2 = next_byte(s, &have);
            if (!have)
                return s->bad_read ? SPOOR_EHABI_BAD_READ : SPOOR_EHABI_BAD_OPCODE;
            uint32_t mask = ((op & 0x0Fu) << 8) | op2; /* bit 0 = r4 ... bit 11 = r15 */
            if (mask == 0)
                return SPOOR_EHABI_REFUSED; /* 0x80 0x00: refuse to unwind */
            if (!pop_mask(m, st, &vsp, mask << 4, &popped_pc))
                return SPOOR_EHABI_BAD_READ;
        } else if ((op & 0xF0u) == 0x90u) {
            uint32_t n = op & 0x0Fu;
            if (n == 13u || n == 15u)
                return SPOOR_EHABI_BAD_OPCODE; /* reserved */
            vsp = st->r[n];
        } else if ((op & 0xF0u) == 0xA0u) {
            /* 10100nnn: pop r4-r[4+nnn]; 10101nnn: the same and r14 */
            uint32_t mask = ((1u << ((op & 7u) + 1u)) - 1u) << 4;
            if (op & 0x08u)
                mask |= 1u << 14;
            if (!pop_mask(m, st, &vsp, mask, &popped_pc))
                return SPOOR_EHABI_BAD_READ;
        } else if (op == 0xB1u) {
            uint32_t op2 = next_byte(s, &have);
            if (!have || op2 == 0 || (op2 & 0xF0u) != 0)
                return s->bad_read ? SPOOR_EHABI_BAD_READ : SPOOR_EHABI_BAD_OPCODE; /* spare */
            if (!pop_mask(m, st, &vsp, op2, &popped_pc))
                return SPOOR_EHABI_BAD_READ;
        } else if (op == 0xB2u) {
            /* vsp = vsp + 0x204 + (uleb128 << 2) */
            uint32_t value = 0, shift = 0, byte;
            do {
                byte = next_byte(s, &have);
                if (!have || shift > 28u)
                    return s->bad_read ? SPOOR_EHABI_BAD_READ : SPOOR_EHABI_BAD_OPCODE;
                value |= (byte & 0x7Fu) << shift;
                shift += 7u;
            } while (byte & 0x80u);
            vsp += 0x204u + (value << 2);
        } else if (op == 0xB3u) {
            /* pop VFP d[ssss]-d[ssss+cccc] saved by FSTMFDX: 8 bytes each plus a pad word */
            uint32_t op2 = next_byte(s, &have);
            if (!have)
                return s->bad_read ? SPOOR_EHABI_BAD_READ : SPOOR_EHABI_BAD_OPCODE;
            vsp += 8u * ((op2 & 0x0Fu) + 1u) + 4u;
        } else if ((op & 0xF8u) == 0xB8u) {
            vsp += 8u * ((op & 7u) + 1u) + 4u; /* FSTMFDX d8-d[8+nnn] */
        } else if (op == 0xC8u || op == 0xC9u) {
            /* pop VFP d[16+ssss].. (C8) or d[ssss].. (C9), saved by VPUSH */
            uint32_t op2 = next_byte(s, &have);
            if (!have)
                return s->bad_read ? SPOOR_EHABI_BAD_READ : SPOOR_EHABI_BAD_OPCODE;
            vsp += 8u * ((op2 & 0x0Fu) + 1u);
        } else if ((op & 0xF8u) == 0xD0u) {
            vsp += 8u * ((op & 7u) + 1u); /* VPUSH d8-d[8+nnn] */
        } else {
            /* 101101nn spare, 11000nnn/11000110/11000111 Intel WMMX (not on M-profile),
             * 11001yyy and 11xxxyyy spare */
            return SPOOR_EHABI_BAD_OPCODE;
        }
    }
    if (!popped_pc)
        st->r[15] = st->r[14];
    st->r[13] = vsp;
    return STEP_CONTINUE;
}

/* The caller's state from a hardware-stacked exception frame (basic or extended FP frame, on
 * MSP or PSP; the ARMv8-M additional state context is not handled). */
static int cross_exception(const spoor_memory *m, spoor_ehabi_state *st, uint32_t exc_return)
{
    uint32_t frame = st->r[13], word[8];
    if (exc_return & 4u) {
        if (st->psp == 0)
            return SPOOR_EHABI_END; /* the frame is on PSP, whose value is unknown */
        frame = st->psp;
    }
    for (uint32_t i = 0; i < 8u; i++)
        if (!stack_word(m, frame + 4u * i, &word[i]))
            return SPOOR_EHABI_BAD_READ;
    st->r[0] = word[0];
    st->r[1] = word[1];
    st->r[2] = word[2];
    st->r[3] = word[3];
    st->r[12] = word[4];
    st->r[14] = word[5];
    st->r[15] = word[6];
    uint32_t size = (exc_return & 0x10u) ? 0x20u : 0x68u;
    st->r[13] = frame + size + ((word[7] & (1u << 9)) ? 4u : 0u);
    return STEP_CONTINUE;
}

int spoor_ehabi_step(const spoor_ehabi_table *table, const spoor_memory *memory,
                     spoor_ehabi_state *state)
{
    uint32_t pc = state->r[15] & ~1u;
    uint32_t old_sp = state->r[13];
    uint32_t lookup = state->pc_is_return ? pc - 2u : pc;
    bool bad_read = false;
    uint32_t entry = find_entry(table, memory, lookup, &bad_read);
    if (bad_read)
        return SPOOR_EHABI_BAD_READ;
    if (!entry)
        return SPOOR_EHABI_NO_ENTRY;

    opcode_stream stream;
    int status = open_entry(memory, entry, &stream);
    if (status != STEP_CONTINUE)
        return status;
    spoor_ehabi_state next = *state;
    status = execute(memory, &stream, &next);
    if (status != STEP_CONTINUE)
        return status;

    bool is_return = true;
    if ((next.r[15] & 0xF0000000u) == 0xF0000000u && next.r[15] != 0xFFFFFFFFu) {
        /* EXC_RETURN: the caller is the code the exception interrupted */
        status = cross_exception(memory, &next, next.r[15]);
        if (status != STEP_CONTINUE)
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
    return STEP_CONTINUE;
}

uint32_t spoor_ehabi_unwind(const spoor_ehabi_table *table, const spoor_memory *memory,
                            const spoor_ehabi_state *start, uint32_t *pcs, uint32_t max, int *stop)
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
        if (status != STEP_CONTINUE) {
            why = status;
            break;
        }
        pcs[n++] = state.r[15];
    }
    if (stop)
        *stop = why;
    return n;
}
