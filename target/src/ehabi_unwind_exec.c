/*
 * The EHABI unwind machine (spoor/ehabi.h): the binary search of .ARM.exidx, the decoding of the
 * entry it finds (EXIDX_CANTUNWIND, an inline compact entry, a compact .ARM.extab entry for
 * personality routines 0-2, GCC's generic-model layout) and the frame-unwinding instructions run
 * on a virtual SP (vsp). Shared by the device's backtrace and libspoor's host unwinder.
 */
#include "spoor/ehabi.h"
#include "spoor/no_instrument.h"

#define EXIDX_CANTUNWIND 1u
#define MAX_OPCODE_BYTES (3u + 4u * 255u)
#define BIT(n) (1u << (n))

SPOOR_NO_INSTRUMENT bool spoor_ehabi_read_word(const spoor_ehabi_reader *reader, uint32_t addr,
                                               uint32_t *value)
{
    uint8_t b[4];
    if ((addr & 3u) || !reader->read(reader->ctx, addr, b, 4))
        return false;
    *value = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

/* A prel31 field: a 31-bit signed offset from the address of the word holding it. */
SPOOR_NO_INSTRUMENT static uint32_t prel31(uint32_t word, uint32_t place)
{
    uint32_t offset = word & 0x7FFFFFFFu;
    if (offset & 0x40000000u)
        offset |= 0x80000000u;
    return place + offset;
}

/* The unwind instructions of one function: up to 3 bytes in a first word, then more words,
 * each consumed most significant byte first. */
typedef struct opcode_stream {
    const spoor_ehabi_reader *table;
    uint32_t first;      /* bytes not consumed yet sit at the top */
    uint32_t first_left; /* bytes left in `first` */
    uint32_t next_word;  /* address of the next extra word */
    uint32_t words_left;
    bool bad_read;
} opcode_stream;

/* Next byte; 0xB0 (finish) once the stream is exhausted, with *have false. */
SPOOR_NO_INSTRUMENT static uint32_t next_byte(opcode_stream *s, bool *have)
{
    *have = true;
    if (s->first_left == 0 && s->words_left > 0) {
        if (!spoor_ehabi_read_word(s->table, s->next_word, &s->first)) {
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

/* The stop reason for an instruction whose operand byte is missing. */
SPOOR_NO_INSTRUMENT static int truncated(const opcode_stream *s)
{
    return s->bad_read ? SPOOR_EHABI_BAD_READ : SPOOR_EHABI_BAD_OPCODE;
}

/* The last index entry whose function starts at or before addr: SPOOR_EHABI_STEPPED with its
 * address and function start (Thumb bit cleared: the first word may carry it), or a stop. */
SPOOR_NO_INSTRUMENT static int find_entry(const spoor_ehabi_source *src, uint32_t addr,
                                          uint32_t *entry, uint32_t *function)
{
    uint32_t lo = 0, hi = 0;
    bool any = false;
    if (src->exidx_end > src->exidx_start)
        hi = (src->exidx_end - src->exidx_start) / 8u;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        uint32_t at = src->exidx_start + 8u * mid, word;
        if (!spoor_ehabi_read_word(&src->table, at, &word))
            return SPOOR_EHABI_BAD_READ;
        uint32_t fn = prel31(word, at) & ~1u;
        if (fn <= addr) {
            *entry = at;
            *function = fn;
            any = true;
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return any ? SPOOR_EHABI_STEPPED : SPOOR_EHABI_NO_ENTRY;
}

/* A compact-model word (bit 31 set, personality index in bits 27-24): Su16 holds three
 * instructions, Lu16/Lu32 an extra-word count in bits 23-16, two instructions, then the words
 * from `more` on. An entry inline in the index table has no room for extra words. */
SPOOR_NO_INSTRUMENT static int open_compact(uint32_t word, uint32_t more, bool inline_entry,
                                            opcode_stream *s)
{
    uint32_t index = (word >> 24) & 0x0Fu;
    if (index == 0) {
        s->first = word << 8;
        s->first_left = 3;
        return SPOOR_EHABI_STEPPED;
    }
    s->words_left = (word >> 16) & 0xFFu;
    if (index > 2u || (inline_entry && s->words_left))
        return SPOOR_EHABI_REFUSED;
    s->first = word << 16;
    s->first_left = 2;
    s->next_word = more;
    return SPOOR_EHABI_STEPPED;
}

/* Sets up the instruction stream of the entry at `entry`. */
SPOOR_NO_INSTRUMENT static int open_entry(const spoor_ehabi_source *src, uint32_t entry,
                                          opcode_stream *s)
{
    uint32_t word;
    s->table = &src->table;
    s->first_left = s->words_left = 0;
    s->bad_read = false;
    if (!spoor_ehabi_read_word(&src->table, entry + 4u, &word))
        return SPOOR_EHABI_BAD_READ;
    if (word == EXIDX_CANTUNWIND)
        return SPOOR_EHABI_END;
    if (word & 0x80000000u)
        return open_compact(word, 0, true, s);
    uint32_t extab = prel31(word, entry + 4u);
    if (!spoor_ehabi_read_word(&src->table, extab, &word))
        return SPOOR_EHABI_BAD_READ;
    if (word & 0x80000000u)
        return open_compact(word, extab + 4u, false, s);
    /* Generic model: a prel31 to the personality routine. GCC's routines keep their unwind
     * instructions next, as a word with the extra-word count in bits 31-24 and three
     * instructions, followed by the extra words. */
    if (!spoor_ehabi_read_word(&src->table, extab + 4u, &word))
        return SPOOR_EHABI_BAD_READ;
    s->words_left = word >> 24;
    s->first = word << 8;
    s->first_left = 3;
    s->next_word = extab + 8u;
    return SPOOR_EHABI_STEPPED;
}

/* The registers being unwound. */
typedef struct machine {
    const spoor_ehabi_reader *stack;
    uint32_t *r;
    uint32_t known; /* written back at the end */
    uint32_t vsp;
    bool popped_pc;
} machine;

/* Pops the registers in mask (bit n = r[n]) from vsp upwards, lowest register first. A popped
 * SP becomes the new vsp once the whole pop is done. */
SPOOR_NO_INSTRUMENT static bool pop_mask(machine *m, uint32_t mask)
{
    uint32_t new_sp = 0;
    bool sp_popped = false;
    for (uint32_t n = 0; n < 16u; n++) {
        if (!(mask & BIT(n)))
            continue;
        uint32_t value;
        if (!spoor_ehabi_read_word(m->stack, m->vsp, &value))
            return false;
        m->vsp += 4u;
        if (n == 13u) {
            new_sp = value;
            sp_popped = true;
        } else {
            m->r[n] = value;
        }
    }
    m->known |= mask;
    if (mask & BIT(15))
        m->popped_pc = true;
    if (sp_popped)
        m->vsp = new_sp;
    return true;
}

/* Runs the unwind instructions up to finish (or the end of the stream). */
SPOOR_NO_INSTRUMENT static int execute(machine *m, opcode_stream *s)
{
    bool have;
    for (uint32_t budget = MAX_OPCODE_BYTES; budget > 0; budget--) {
        uint32_t op = next_byte(s, &have);
        if (s->bad_read)
            return SPOOR_EHABI_BAD_READ;
        if (!have || op == 0xB0u)
            break; /* finish */
        uint32_t mask = 0;
        if ((op & 0xC0u) == 0x00u) {
            m->vsp += ((op & 0x3Fu) << 2) + 4u;
        } else if ((op & 0xC0u) == 0x40u) {
            m->vsp -= ((op & 0x3Fu) << 2) + 4u;
        } else if ((op & 0xF0u) == 0x80u) {
            uint32_t op2 = next_byte(s, &have);
            if (!have)
                return truncated(s);
            mask = (((op & 0x0Fu) << 8) | op2) << 4; /* r4 ... r15 */
            if (mask == 0)
                return SPOOR_EHABI_REFUSED; /* 0x80 0x00: refuse to unwind */
        } else if ((op & 0xF0u) == 0x90u) {
            uint32_t n = op & 0x0Fu;
            if (n == 13u || n == 15u)
                return SPOOR_EHABI_BAD_OPCODE; /* reserved */
            if (!(m->known & BIT(n)))
                return SPOOR_EHABI_REFUSED;
            m->vsp = m->r[n];
        } else if ((op & 0xF0u) == 0xA0u) {
            /* 10100nnn: pop r4-r[4+nnn]; 10101nnn: the same and r14 */
            mask = (BIT((op & 7u) + 1u) - 1u) << 4;
            if (op & 0x08u)
                mask |= BIT(14);
        } else if (op == 0xB1u) {
            mask = next_byte(s, &have); /* 0000iiii: r0-r3 */
            if (!have || mask == 0 || (mask & 0xF0u) != 0)
                return truncated(s); /* 0xB1 0x00 and 0xB1 xxxxyyyy are spare */
        } else if (op == 0xB2u) {
            /* vsp = vsp + 0x204 + (uleb128 << 2) */
            uint32_t value = 0, shift = 0, byte;
            do {
                byte = next_byte(s, &have);
                if (!have || shift > 28u)
                    return truncated(s);
                value |= (byte & 0x7Fu) << shift;
                shift += 7u;
            } while (byte & 0x80u);
            m->vsp += 0x204u + (value << 2);
        } else if (op == 0xB3u || op == 0xC8u || op == 0xC9u) {
            /* VFP D[ssss]-D[ssss+cccc]: by FSTMFDX (B3: 8 bytes each and a pad word, D0-D15
             * valid) or by VPUSH (C9; C8 counts from D16: D0-D31 valid). A range past the last
             * register is reserved. */
            uint32_t op2 = next_byte(s, &have);
            if (!have)
                return truncated(s);
            if (op != 0xC9u && (op2 >> 4) + (op2 & 0x0Fu) > 15u)
                return SPOOR_EHABI_BAD_OPCODE;
            m->vsp += 8u * ((op2 & 0x0Fu) + 1u) + (op == 0xB3u ? 4u : 0u);
        } else if ((op & 0xF8u) == 0xB8u) {
            m->vsp += 8u * ((op & 7u) + 1u) + 4u; /* FSTMFDX D8-D[8+nnn] */
        } else if ((op & 0xF8u) == 0xD0u) {
            m->vsp += 8u * ((op & 7u) + 1u); /* VPUSH D8-D[8+nnn] */
        } else {
            /* 101101nn spare, 11000nnn/11000110/11000111 Intel WMMX (not on M-profile),
             * 11001yyy and 11xxxyyy spare */
            return SPOOR_EHABI_BAD_OPCODE;
        }
        if (mask && !pop_mask(m, mask))
            return SPOOR_EHABI_BAD_READ;
    }
    return SPOOR_EHABI_STEPPED;
}

SPOOR_NO_INSTRUMENT int spoor_ehabi_exec(const spoor_ehabi_source *source, uint32_t addr,
                                         uint32_t flags, uint32_t r[16], uint16_t *known)
{
    uint32_t entry = 0, function = 0;
    int status = find_entry(source, addr, &entry, &function);
    if (status != SPOOR_EHABI_STEPPED)
        return status;
    opcode_stream stream;
    status = open_entry(source, entry, &stream);
    if (status != SPOOR_EHABI_STEPPED)
        return status;
    machine m = {&source->stack, r, *known, r[13], false};
    if (!(m.known & BIT(13)))
        return SPOOR_EHABI_REFUSED;
    /* The table describes the frame after the prologue; at the first instruction nothing is
     * pushed yet. */
    if (!((flags & SPOOR_EHABI_EXACT_PC) && addr == function)) {
        status = execute(&m, &stream);
        if (status != SPOOR_EHABI_STEPPED)
            return status;
    }
    if (!m.popped_pc) {
        if (!(m.known & BIT(14)))
            return SPOOR_EHABI_REFUSED;
        r[15] = r[14]; /* finish: the return address is in LR */
    }
    r[13] = m.vsp;
    *known = (uint16_t)(m.known | BIT(13) | BIT(15));
    return SPOOR_EHABI_STEPPED;
}
