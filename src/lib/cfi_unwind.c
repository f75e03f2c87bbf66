/* Unwinding one frame with the DWARF call frame information in .debug_frame (libdw).
 * ARM DWARF register numbers: r0-r15 are 0-15; the return address column is r14 (LR);
 * the CFA is the caller's SP. */
#include <dwarf.h>
#include <stdlib.h>

#include "elf_internal.h" /* spoor_elf_libdw */
#include "unwind_internal.h"

#define MAX_STACK 8

/* Evaluates the small DWARF expressions libdw hands out for CFA and register rules.
 * *is_value is false when the result is an address to load the register from. */
static unwind_result evaluate(const unwind_env *env, const unwind_state *in, uint32_t cfa,
                              const Dwarf_Op *ops, size_t nops, uint32_t *result, bool *is_value)
{
    uint32_t stack[MAX_STACK];
    size_t depth = 0;
    *is_value = false;
    for (size_t i = 0; i < nops; i++) {
        const Dwarf_Op *op = &ops[i];
        uint8_t atom = op->atom;
        if (depth == MAX_STACK) {
            return UNWIND_NO_INFO;
        }
        if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
            int reg = atom - DW_OP_breg0;
            if (reg > 15 || !unwind_known(in, reg)) {
                return UNWIND_NO_INFO;
            }
            stack[depth++] = in->r[reg] + (uint32_t)(int32_t)op->number;
        } else if (atom == DW_OP_bregx) {
            if (op->number > 15 || !unwind_known(in, (int)op->number)) {
                return UNWIND_NO_INFO;
            }
            stack[depth++] = in->r[op->number] + (uint32_t)(int32_t)op->number2;
        } else if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
            stack[depth++] = (uint32_t)(atom - DW_OP_lit0);
        } else if (atom == DW_OP_const1u || atom == DW_OP_const2u || atom == DW_OP_const4u ||
                   atom == DW_OP_constu || atom == DW_OP_const1s || atom == DW_OP_const2s ||
                   atom == DW_OP_const4s || atom == DW_OP_consts) {
            stack[depth++] = (uint32_t)op->number;
        } else if (atom == DW_OP_call_frame_cfa) {
            stack[depth++] = cfa;
        } else if (atom == DW_OP_plus_uconst) {
            if (depth < 1) {
                return UNWIND_NO_INFO;
            }
            stack[depth - 1] += (uint32_t)op->number;
        } else if (atom == DW_OP_plus || atom == DW_OP_minus) {
            if (depth < 2) {
                return UNWIND_NO_INFO;
            }
            uint32_t b = stack[--depth];
            stack[depth - 1] = atom == DW_OP_plus ? stack[depth - 1] + b : stack[depth - 1] - b;
        } else if (atom == DW_OP_deref) {
            if (depth < 1) {
                return UNWIND_NO_INFO;
            }
            if (!spoor_unwind_read_word(env, stack[depth - 1], &stack[depth - 1])) {
                return UNWIND_UNREADABLE;
            }
        } else if (atom == DW_OP_stack_value) {
            *is_value = true;
            break;
        } else {
            return UNWIND_NO_INFO;
        }
    }
    if (depth == 0) {
        return UNWIND_NO_INFO;
    }
    *result = stack[depth - 1];
    return UNWIND_OK;
}

static unwind_result apply_frame(const unwind_env *env, Dwarf_Frame *frame, const unwind_state *in,
                                 unwind_state *out)
{
    Dwarf_Op *ops;
    size_t nops;
    if (dwarf_frame_cfa(frame, &ops, &nops) != 0) {
        return UNWIND_NO_INFO;
    }
    uint32_t cfa;
    bool is_value;
    unwind_result r = evaluate(env, in, 0, ops, nops, &cfa, &is_value);
    if (r != UNWIND_OK) {
        return r;
    }

    Dwarf_Addr start, end;
    bool signal;
    int ra_reg = dwarf_frame_info(frame, &start, &end, &signal);
    if (ra_reg < 0 || ra_reg > 15) {
        return UNWIND_NO_INFO;
    }

    uint32_t values[16];
    uint16_t known = 0;
    for (int reg = 0; reg < 16; reg++) {
        Dwarf_Op ops_mem[3];
        if (reg == UNWIND_SP || reg == UNWIND_PC) {
            continue;
        }
        if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops) != 0) {
            continue;
        }
        if (nops == 0) {
            if (ops == NULL && unwind_known(in, reg)) { /* same value */
                values[reg] = in->r[reg];
                known |= (uint16_t)(1u << reg);
            }
            continue; /* undefined */
        }
        uint32_t value;
        r = evaluate(env, in, cfa, ops, nops, &value, &is_value);
        if (r != UNWIND_OK) {
            if (reg == ra_reg) {
                return r;
            }
            continue;
        }
        if (!is_value && !spoor_unwind_read_word(env, value, &value)) {
            if (reg == ra_reg) {
                return UNWIND_UNREADABLE;
            }
            continue;
        }
        values[reg] = value;
        known |= (uint16_t)(1u << reg);
    }
    if ((known & (1u << ra_reg)) == 0) {
        return UNWIND_NO_INFO;
    }

    out->known = 0;
    for (int reg = 0; reg < 16; reg++) {
        if (known & (1u << reg)) {
            unwind_set(out, reg, values[reg]);
        }
    }
    unwind_set(out, UNWIND_SP, cfa);
    unwind_set(out, UNWIND_PC, values[ra_reg]);
    return UNWIND_OK;
}

unwind_result spoor_unwind_cfi_step(const unwind_env *env, const unwind_state *in,
                                    unwind_state *out)
{
    struct Dwarf *dwarf = env->elf != NULL ? spoor_elf_libdw(env->elf) : NULL;
    if (dwarf == NULL) {
        return UNWIND_NO_INFO;
    }
    Dwarf_CFI *cfi = dwarf_getcfi(dwarf); /* .debug_frame; owned by the Dwarf handle */
    if (cfi == NULL) {
        return UNWIND_NO_INFO;
    }
    Dwarf_Frame *frame = NULL;
    if (dwarf_cfi_addrframe(cfi, unwind_lookup_pc(in), &frame) != 0) {
        return UNWIND_NO_INFO;
    }
    unwind_result r = apply_frame(env, frame, in, out);
    free(frame);
    return r;
}
