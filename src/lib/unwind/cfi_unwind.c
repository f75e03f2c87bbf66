/* Unwinding one frame with the DWARF call frame information in .debug_frame (libdw).
 * ARM DWARF register numbers: r0-r15 are 0-15; the return address column is r14 (LR);
 * the CFA is the caller's SP. */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_sections.h" /* spoor_elf_libdw */
#include "unwind/unwind_frame_internal.h"

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

/* libdw's message for an address no FDE covers (DWARF_E_NO_MATCH; the code itself is not in
 * libdw's public headers): the one failure of dwarf_cfi_addrframe that is no damage. */
static bool no_fde_for_address(int err)
{
    const char *msg = dwarf_errmsg(err);
    return msg && !strcmp(msg, "no matching address range");
}

static void warn_unreadable(const spoor_elf *elf, const char *why)
{
    spoor_elf_warn(elf, ".debug_frame: call frame information unreadable (%s)", why);
}

/* The highest DWARF register number of the ARM ABI (AAELF32 "DWARF register names": 320-323 are
 * TPIDRURO..HTPIDPR); a rule for a higher one describes no register of the target. */
#define ARM_DWARF_REG_MAX 323

/* Reads one call frame instruction stream (a CIE's initial instructions or an FDE's) as
 * readelf --debug-dump=frames does and says what in it is damaged: an opcode DWARF does not
 * define, an operand that runs past the entry, a register no ARM register (libdw takes any
 * number, so a flipped register operand only shows as a rule for a column nobody reads). */
static bool cfa_program_damaged(const uint8_t *p, const uint8_t *end, char *why, size_t n)
{
    while (p < end) {
        uint8_t op = *p++;
        uint64_t reg = 0, v;
        bool has_reg = false, ok = true;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */ continue;
        case 2: /* DW_CFA_offset: register in the low bits, ULEB offset */
            ok = spoor_uleb128(&p, end, &v);
            break;
        case 3: /* DW_CFA_restore */ break;
        default:
            switch (op) {
            case DW_CFA_nop:
            case DW_CFA_remember_state:
            case DW_CFA_restore_state: break;
            case DW_CFA_set_loc:
            case DW_CFA_advance_loc4: ok = end - p >= 4, p += ok ? 4 : 0; break;
            case DW_CFA_advance_loc1: ok = end - p >= 1, p += ok ? 1 : 0; break;
            case DW_CFA_advance_loc2: ok = end - p >= 2, p += ok ? 2 : 0; break;
            case DW_CFA_def_cfa_offset:
            case DW_CFA_def_cfa_offset_sf:
            case DW_CFA_GNU_args_size:
                ok = spoor_uleb128(&p, end, &v); /* an SLEB's bytes read as well as a ULEB's */
                break;
            case DW_CFA_restore_extended:
            case DW_CFA_undefined:
            case DW_CFA_same_value:
            case DW_CFA_def_cfa_register: ok = has_reg = spoor_uleb128(&p, end, &reg); break;
            case DW_CFA_offset_extended:
            case DW_CFA_offset_extended_sf:
            case DW_CFA_def_cfa:
            case DW_CFA_def_cfa_sf:
            case DW_CFA_val_offset:
            case DW_CFA_val_offset_sf:
            case DW_CFA_GNU_negative_offset_extended:
                ok = has_reg = spoor_uleb128(&p, end, &reg) && spoor_uleb128(&p, end, &v);
                break;
            case DW_CFA_register:
                ok = has_reg = spoor_uleb128(&p, end, &reg) && spoor_uleb128(&p, end, &v);
                if (ok && v > ARM_DWARF_REG_MAX)
                    reg = v;
                break;
            case DW_CFA_def_cfa_expression:
                ok = spoor_uleb128(&p, end, &v) && v <= (uint64_t)(end - p);
                p += ok ? v : 0;
                break;
            case DW_CFA_expression:
            case DW_CFA_val_expression:
                ok = has_reg = spoor_uleb128(&p, end, &reg) && spoor_uleb128(&p, end, &v) &&
                               v <= (uint64_t)(end - p);
                p += ok ? v : 0;
                break;
            default: snprintf(why, n, "call frame instruction 0x%02x unknown", op); return true;
            }
        }
        if (!ok) {
            snprintf(why, n, "call frame instruction 0x%02x runs past its entry", op);
            return true;
        }
        if (op >> 6 == 2 || op >> 6 == 3)
            reg = op & 0x3f, has_reg = true;
        if (has_reg && reg > ARM_DWARF_REG_MAX) {
            snprintf(why, n, "call frame instruction 0x%02x names register %llu, no ARM register",
                     op, (unsigned long long)reg);
            return true;
        }
    }
    return false;
}

/* A lookup reads .debug_frame only up to the entry it needs and runs an FDE's instructions only
 * up to the address, so damage elsewhere (an entry length that runs into the next entries, a
 * CIE pointer to nowhere, an instruction libdw does not know) may show at no lookup, or give a
 * different frame without an error. Reads every entry once, as readelf --debug-dump=frames
 * does, and runs each FDE's instructions to its last address: what fails is warned about. */
static void check_debug_frame(const spoor_elf *elf, Dwarf_CFI *cfi)
{
    const struct elf_section *sec = spoor_elf_debug_section(elf, ".debug_frame");
    const char *ident = elf_getident(spoor_elf_libelf(elf), NULL);
    if (!sec || !ident || sec->size < 8)
        return;
    Elf_Data data = {.d_buf = (void *)sec->data, .d_size = sec->size, .d_type = ELF_T_BYTE};
    bool big = ident[EI_DATA] == ELFDATA2MSB;
    Dwarf_Off off, next;
    char why[160];
    /* the CIEs, where each FDE's CIE pointer must lead */
    size_t ncies = 0, cap = 0;
    Dwarf_Off *cies = NULL;
    for (off = 0; off < sec->size; off = next) {
        Dwarf_CFI_Entry entry;
        if (dwarf_next_cfi((const unsigned char *)ident, &data, false, off, &next, &entry) != 0)
            break; /* the end, or an error the next loop reports */
        if (!dwarf_cfi_cie_p(&entry))
            continue;
        if (ncies == cap) {
            Dwarf_Off *more = realloc(cies, (cap = cap ? 2 * cap : 16) * sizeof *cies);
            if (!more)
                break;
            cies = more;
        }
        cies[ncies++] = off;
    }
    for (off = 0; off < sec->size;) {
        Dwarf_CFI_Entry entry;
        int r = dwarf_next_cfi((const unsigned char *)ident, &data, false, off, &next, &entry);
        if (r > 0)
            break; /* the end */
        if (r < 0) {
            snprintf(why, sizeof why, "entry at 0x%llx: libdw: %s", (unsigned long long)off,
                     dwarf_errmsg(-1));
            warn_unreadable(elf, why);
            break;
        }
        char damage[96];
        if (dwarf_cfi_cie_p(&entry)) {
            if (cfa_program_damaged(entry.cie.initial_instructions,
                                    entry.cie.initial_instructions_end, damage, sizeof damage)) {
                snprintf(why, sizeof why, "CIE at 0x%llx: %s", (unsigned long long)off, damage);
                warn_unreadable(elf, why);
                break;
            }
            off = next;
            continue;
        }
        size_t c = 0;
        while (c < ncies && cies[c] != entry.fde.CIE_pointer)
            c++;
        if (c == ncies || entry.fde.end - entry.fde.start < 8) {
            snprintf(why, sizeof why, "FDE at 0x%llx: %s", (unsigned long long)off,
                     c == ncies ? "its CIE pointer leads to no CIE" : "too short");
            warn_unreadable(elf, why);
            break;
        }
        /* the FDE's instructions: after its two address words and, where its CIE's augmentation
         * begins with 'z', the augmentation data */
        const uint8_t *insns = entry.fde.start + 8;
        Dwarf_CFI_Entry cie;
        Dwarf_Off cie_next;
        uint64_t aug_len = 0;
        if (dwarf_next_cfi((const unsigned char *)ident, &data, false, cies[c], &cie_next, &cie) ==
                0 &&
            cie.cie.augmentation[0] == 'z' &&
            (!spoor_uleb128(&insns, entry.fde.end, &aug_len) ||
             aug_len > (uint64_t)(entry.fde.end - insns)))
            insns = entry.fde.end + 1; /* the augmentation data runs past the FDE */
        if (insns > entry.fde.end) {
            snprintf(why, sizeof why, "FDE at 0x%llx: augmentation data past its end",
                     (unsigned long long)off);
            warn_unreadable(elf, why);
            break;
        }
        if (cfa_program_damaged(insns + aug_len, entry.fde.end, damage, sizeof damage)) {
            snprintf(why, sizeof why, "FDE at 0x%llx: %s", (unsigned long long)off, damage);
            warn_unreadable(elf, why);
            break;
        }
        /* an FDE of a 32-bit target: initial_location and address_range, 4 bytes each */
        const uint8_t *b = entry.fde.start;
        uint32_t start = big ? spoor_be32(b) : spoor_le32(b);
        uint32_t range = big ? spoor_be32(b + 4) : spoor_le32(b + 4);
        Dwarf_Frame *frame = NULL;
        if (range != 0 && dwarf_cfi_addrframe(cfi, start + range - 1, &frame) != 0) {
            int err = dwarf_errno();
            if (!no_fde_for_address(err)) {
                snprintf(why, sizeof why, "FDE at 0x%llx: libdw: %s", (unsigned long long)off,
                         dwarf_errmsg(err));
                warn_unreadable(elf, why);
                break;
            }
        }
        free(frame);
        off = next;
    }
    free(cies);
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
        if (spoor_elf_debug_section(env->elf, ".debug_frame") != NULL)
            warn_unreadable(env->elf, dwarf_errmsg(-1));
        return UNWIND_NO_INFO;
    }
    if (spoor_elf_first_cfi_use(env->elf))
        check_debug_frame(env->elf, cfi);
    Dwarf_Frame *frame = NULL;
    if (dwarf_cfi_addrframe(cfi, unwind_lookup_pc(in), &frame) != 0) {
        /* no FDE for the address is no damage (the unwinder's other methods follow); any other
         * failure is a .debug_frame that cannot be read, which the answer must say */
        int err = dwarf_errno();
        if (!no_fde_for_address(err))
            warn_unreadable(env->elf, dwarf_errmsg(err));
        return UNWIND_NO_INFO;
    }
    unwind_result r = apply_frame(env, frame, in, out);
    free(frame);
    return r;
}
