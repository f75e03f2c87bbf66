/* Unwinding one frame with the ARM EHABI tables of the ELF (.ARM.exidx, .ARM.extab).
 *
 * .ARM.exidx is a sorted table of 8-byte entries: a prel31 offset to the function start,
 * then EXIDX_CANTUNWIND (1), an inline compact entry (bit 31 set, personality 0 with up
 * to three opcode bytes) or a prel31 offset to the function's .ARM.extab entry. An extab
 * entry starts either with a compact-model word (bit 31 set, personality index in bits
 * 27:24; index 1/2 carry an extra-word count in bits 23:16) or with a prel31 offset to a
 * generic personality routine followed by a word whose top byte counts extra words. The
 * opcodes are interpreted on a virtual SP (vsp) starting at the frame's SP; every stack
 * read goes through the bounds-checked reader and the opcode count is bounded. */
#include <string.h>

#include "unwind_internal.h"

#define EXIDX_CANTUNWIND 1u
#define MAX_OPCODE_BYTES 64u

static uint32_t prel31(uint32_t word, uint32_t place)
{
    uint32_t offset = word & 0x7FFFFFFFu;
    if (offset & 0x40000000u) {
        offset |= 0x80000000u; /* sign-extend bit 30 */
    }
    return place + offset;
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The opcode bytes for pc in bytes[0..*count). False when there is no entry or the
 * function cannot be unwound. */
static bool find_opcodes(const unwind_env *env, uint32_t pc, uint8_t *bytes, size_t *count,
                         uint32_t *function)
{
    uint32_t base;
    const uint8_t *table;
    size_t size;
    if (env->elf == NULL || !spoor_elf_section(env->elf, ".ARM.exidx", &base, &table, &size) ||
        size < 8) {
        return false;
    }
    size_t entries = size / 8;
    /* The last entry whose function start is <= pc. */
    size_t lo = 0, hi = entries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t place = base + (uint32_t)(mid * 8);
        if (prel31(load_le32(table + mid * 8), place) <= pc) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return false;
    }
    size_t index = lo - 1;
    uint32_t place = base + (uint32_t)(index * 8);
    *function = prel31(load_le32(table + index * 8), place);
    uint32_t data = load_le32(table + index * 8 + 4);
    if (data == EXIDX_CANTUNWIND) {
        return false;
    }

    uint32_t word;
    uint32_t extab = 0;
    if (data & 0x80000000u) {
        word = data;
    } else {
        extab = prel31(data, place + 4);
        uint8_t b[4];
        if (spoor_elf_read(env->elf, extab, b, 4) != 4) {
            return false;
        }
        word = load_le32(b);
    }

    size_t n = 0;
    unsigned extra_words;
    if (word & 0x80000000u) {
        unsigned personality = (word >> 24) & 0x0Fu;
        if (personality == 0) {
            bytes[n++] = (uint8_t)(word >> 16);
            bytes[n++] = (uint8_t)(word >> 8);
            bytes[n++] = (uint8_t)word;
            extra_words = 0;
        } else if (personality == 1 || personality == 2) {
            extra_words = (word >> 16) & 0xFFu;
            bytes[n++] = (uint8_t)(word >> 8);
            bytes[n++] = (uint8_t)word;
        } else {
            return false;
        }
    } else {
        /* Generic personality routine; the unwind data follows in the GCC layout. */
        extab += 4;
        uint8_t b[4];
        if (spoor_elf_read(env->elf, extab, b, 4) != 4) {
            return false;
        }
        word = load_le32(b);
        extra_words = word >> 24;
        bytes[n++] = (uint8_t)(word >> 16);
        bytes[n++] = (uint8_t)(word >> 8);
        bytes[n++] = (uint8_t)word;
    }
    for (unsigned i = 0; i < extra_words; i++) {
        uint8_t b[4];
        if (n + 4 > MAX_OPCODE_BYTES || spoor_elf_read(env->elf, extab + 4 + 4 * i, b, 4) != 4) {
            return false;
        }
        word = load_le32(b);
        bytes[n++] = (uint8_t)(word >> 24);
        bytes[n++] = (uint8_t)(word >> 16);
        bytes[n++] = (uint8_t)(word >> 8);
        bytes[n++] = (uint8_t)word;
    }
    *count = n;
    return true;
}

typedef struct vm {
    const unwind_env *env;
    unwind_state regs;
    uint32_t vsp;
    bool pc_set;
} vm;

/* Pops the registers in mask (bit i = r[first + i]) in ascending order. */
static unwind_result pop_registers(vm *m, uint32_t mask, int first)
{
    bool sp_loaded = false;
    uint32_t new_sp = 0;
    for (int i = 0; mask != 0; i++, mask >>= 1) {
        if ((mask & 1u) == 0) {
            continue;
        }
        uint32_t value;
        if (!unwind_read_word(m->env, m->vsp, &value)) {
            return UNWIND_UNREADABLE;
        }
        m->vsp += 4;
        int reg = first + i;
        if (reg == UNWIND_SP) {
            sp_loaded = true;
            new_sp = value;
            continue;
        }
        unwind_set(&m->regs, reg, value);
        if (reg == UNWIND_PC) {
            m->pc_set = true;
        }
    }
    if (sp_loaded) {
        m->vsp = new_sp;
    }
    return UNWIND_OK;
}

static unwind_result run(vm *m, const uint8_t *ops, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t op = ops[i++];
        unwind_result r = UNWIND_OK;
        if ((op & 0xC0u) == 0x00u) {
            m->vsp += ((uint32_t)(op & 0x3Fu) << 2) + 4u;
        } else if ((op & 0xC0u) == 0x40u) {
            m->vsp -= ((uint32_t)(op & 0x3Fu) << 2) + 4u;
        } else if ((op & 0xF0u) == 0x80u) {
            if (i >= n) {
                return UNWIND_NO_INFO;
            }
            uint32_t mask = ((uint32_t)(op & 0x0Fu) << 8) | ops[i++];
            if (mask == 0) {
                return UNWIND_NO_INFO; /* refuse to unwind */
            }
            r = pop_registers(m, mask, 4);
        } else if ((op & 0xF0u) == 0x90u) {
            int reg = op & 0x0F;
            if (reg == UNWIND_SP || reg == UNWIND_PC || !unwind_known(&m->regs, reg)) {
                return UNWIND_NO_INFO;
            }
            m->vsp = m->regs.r[reg];
        } else if ((op & 0xF0u) == 0xA0u) {
            uint32_t mask = (1u << ((op & 0x07u) + 1u)) - 1u; /* r4..r(4+nnn) */
            if (op & 0x08u) {
                mask |= 1u << (UNWIND_LR - 4);
            }
            r = pop_registers(m, mask, 4);
        } else if (op == 0xB0u) {
            break; /* finish */
        } else if (op == 0xB1u) {
            if (i >= n) {
                return UNWIND_NO_INFO;
            }
            uint8_t mask = ops[i++];
            if (mask == 0 || (mask & 0xF0u) != 0) {
                return UNWIND_NO_INFO;
            }
            r = pop_registers(m, mask, 0);
        } else if (op == 0xB2u) {
            uint32_t value = 0;
            unsigned shift = 0;
            uint8_t byte;
            do {
                if (i >= n || shift > 28) {
                    return UNWIND_NO_INFO;
                }
                byte = ops[i++];
                value |= (uint32_t)(byte & 0x7Fu) << shift;
                shift += 7;
            } while (byte & 0x80u);
            m->vsp += 0x204u + (value << 2);
        } else if (op == 0xB3u || op == 0xC8u || op == 0xC9u) {
            if (i >= n) {
                return UNWIND_NO_INFO;
            }
            uint32_t count = (ops[i++] & 0x0Fu) + 1u;
            m->vsp += count * 8u + (op == 0xB3u ? 4u : 0u); /* FSTMFDX has a pad word */
        } else if ((op & 0xF8u) == 0xB8u) {
            m->vsp += ((op & 0x07u) + 1u) * 8u + 4u;
        } else if ((op & 0xF8u) == 0xD0u) {
            m->vsp += ((op & 0x07u) + 1u) * 8u;
        } else {
            return UNWIND_NO_INFO; /* spare or iWMMXt: not on Cortex-M */
        }
        if (r != UNWIND_OK) {
            return r;
        }
    }
    return UNWIND_OK;
}

unwind_result unwind_ehabi_step(const unwind_env *env, const unwind_state *in, unwind_state *out)
{
    uint8_t ops[MAX_OPCODE_BYTES];
    size_t n = 0;
    uint32_t function = 0;
    if (!find_opcodes(env, unwind_lookup_pc(in), ops, &n, &function)) {
        return UNWIND_NO_INFO;
    }
    if (!unwind_known(in, UNWIND_SP)) {
        return UNWIND_NO_INFO;
    }
    /* The table describes the frame after the prologue. At the first instruction nothing
     * is pushed yet (a fault on entry, a breakpoint on the address): LR returns. */
    if (!in->pc_is_return && (in->r[UNWIND_PC] & ~1u) == function) {
        if (!unwind_known(in, UNWIND_LR)) {
            return UNWIND_NO_INFO;
        }
        *out = *in;
        out->pc_is_return = false;
        unwind_set(out, UNWIND_PC, in->r[UNWIND_LR]);
        return UNWIND_OK;
    }
    vm m = {.env = env, .regs = *in, .vsp = in->r[UNWIND_SP], .pc_set = false};
    unwind_result r = run(&m, ops, n);
    if (r != UNWIND_OK) {
        return r;
    }
    *out = m.regs;
    out->pc_is_return = false;
    if (!m.pc_set) {
        if (!unwind_known(&m.regs, UNWIND_LR)) {
            return UNWIND_NO_INFO;
        }
        out->r[UNWIND_PC] = m.regs.r[UNWIND_LR];
    }
    unwind_set(out, UNWIND_PC, out->r[UNWIND_PC]);
    unwind_set(out, UNWIND_SP, m.vsp);
    return UNWIND_OK;
}
