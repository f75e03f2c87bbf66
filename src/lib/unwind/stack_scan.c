/* The last-resort method: scan the stack upwards from SP for a word that looks like a
 * Thumb return address, i.e. an odd value whose preceding instruction is a call (BL, or
 * BLX with a register) in code, or like an EXC_RETURN value (a handler saves LR on entry,
 * just below the exception frame). The first such word is taken as the caller's PC and
 * the slot above it as the caller's SP. In a frame that was not reached through a call
 * (frame 0, or the interrupted code of an exception frame) LR is tried first: a leaf
 * function never saves it, and it is taken when it returns into another function than
 * the PC's. A scan can be fooled by a stale return address left in a dead stack slot,
 * which is why every frame it produces is marked "scan". */
#include "base/byteorder.h"
#include "spoor/cortexm_facts.h"
#include "unwind/unwind_frame_internal.h"

/* True when the instruction ending at return_pc (Thumb bit clear) is BL or BLX Rm. */
static bool follows_call(const unwind_env *env, uint32_t return_pc)
{
    uint8_t b[4];
    if (return_pc >= 4 && spoor_unwind_read_code(env, return_pc - 4, b, 4)) {
        if (spoor_cortexm_is_bl(spoor_le16(b), spoor_le16(b + 2))) {
            return true;
        }
    }
    if (return_pc >= 2 && spoor_unwind_read_code(env, return_pc - 2, b, 2)) {
        if (spoor_cortexm_is_blx_register(spoor_le16(b))) {
            return true;
        }
    }
    return false;
}

/* The call is code, not the word itself: after a call to a noreturn function as a
 * function's last instruction the return address is past the function, maybe past .text. */
static bool is_return_address(const unwind_env *env, uint32_t word)
{
    return (word & 1u) != 0 && word > 1u && spoor_elf_is_code(env->elf, unwind_call_site(word)) &&
           follows_call(env, word & ~1u);
}

/* LR of a frame not entered by a call, when it returns into another function. */
static bool link_returns_elsewhere(const unwind_env *env, const unwind_state *in)
{
    if (in->pc_is_return || !unwind_known(in, UNWIND_LR) ||
        !is_return_address(env, in->r[UNWIND_LR])) {
        return false;
    }
    const char *name;
    uint32_t start, size;
    uint32_t pc = in->r[UNWIND_PC] & ~1u;
    if (!spoor_elf_function(env->elf, pc, &name, &start, &size)) {
        return true;
    }
    uint32_t call = unwind_call_site(in->r[UNWIND_LR]);
    return !(call >= start && call - start < size);
}

unwind_result spoor_unwind_scan_step(const unwind_env *env, const unwind_state *in,
                                     unwind_state *out)
{
    if (!unwind_known(in, UNWIND_SP) || env->elf == NULL) {
        return UNWIND_NO_INFO;
    }
    uint32_t sp = in->r[UNWIND_SP];
    if (link_returns_elsewhere(env, in)) {
        out->known = 0;
        out->pc_is_return = false;
        unwind_set(out, UNWIND_PC, in->r[UNWIND_LR]);
        unwind_set(out, UNWIND_SP, sp);
        return UNWIND_OK;
    }
    for (unsigned i = 0; i < env->scan_words; i++) {
        uint32_t slot = sp + 4u * i;
        if (slot < sp) {
            break; /* wrapped around the address space */
        }
        uint32_t word;
        if (!spoor_unwind_read_word(env, slot, &word)) {
            return i == 0 ? UNWIND_UNREADABLE : UNWIND_NO_INFO;
        }
        if (!spoor_cortexm_is_exc_return(word) && !is_return_address(env, word)) {
            continue;
        }
        out->known = 0;
        out->pc_is_return = false;
        unwind_set(out, UNWIND_PC, word);
        unwind_set(out, UNWIND_SP, slot + 4u);
        return UNWIND_OK;
    }
    return UNWIND_NO_INFO;
}
