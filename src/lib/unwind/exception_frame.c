/* Crossing a hardware-stacked exception frame (ARMv7-M and ARMv8-M).
 *
 * On exception entry the core pushes r0-r3, r12, lr, pc, xPSR (the basic frame, 8 words)
 * and, when the interrupted context had an active FP state, s0-s15, FPSCR and one
 * reserved word after them (the extended frame, 26 words). On ARMv8-M, when the callee
 * registers are stacked by hardware (EXC_RETURN.DCRS == 0), the additional state context
 * sits below the basic frame: an integrity signature, a reserved word and r4-r11. When
 * bit 9 of the stacked xPSR is set, the core inserted a padding word to align the frame
 * to 8 bytes. The handler receives EXC_RETURN in LR; its bits say how to find the frame:
 *   bit 2 SPSEL: 1 = the frame is on PSP, 0 = on MSP
 *   bit 4 FType: 0 = extended (FP) frame
 *   bit 5 DCRS (ARMv8-M): 0 = the additional state context was stacked
 *   bit 6 S, bit 0 ES (ARMv8-M): secure stack / secure exception (informational here) */
#include "base/set_error.h"
#include "spoor/cortexm_facts.h"
#include "spoor/unwind.h"
#include "unwind/unwind_exception_internal.h"

exception_frame_layout spoor_unwind_exception_layout(uint32_t exc_return)
{
    exception_frame_layout layout = {
        .fp_frame = (exc_return & SPOOR_EXC_RETURN_FTYPE) == 0,
        .on_psp = (exc_return & SPOOR_EXC_RETURN_SPSEL) != 0,
        .additional_state = (exc_return & SPOOR_EXC_RETURN_DCRS) == 0,
    };
    return layout;
}

unwind_result spoor_unwind_exception_step(const unwind_env *env, uint32_t exc_return,
                                          uint32_t frame_addr, unwind_state *out, uint32_t *xpsr)
{
    exception_frame_layout layout = spoor_unwind_exception_layout(exc_return);
    uint32_t addr = frame_addr;
    out->known = 0;
    out->pc_is_return = false;
    const uint32_t largest = 4u * (SPOOR_EXC_FRAME_ADDITIONAL_WORDS + SPOOR_EXC_FRAME_BASIC_WORDS +
                                   SPOOR_EXC_FRAME_FP_WORDS) +
                             4u;
    if (frame_addr > UINT32_MAX - largest) {
        return UNWIND_UNREADABLE; /* the frame would wrap around the address space */
    }

    if (layout.additional_state) {
        /* signature, reserved, r4..r11 */
        for (int reg = 4; reg <= 11; reg++) {
            uint32_t value;
            if (!spoor_unwind_read_word(env, addr + 8u + 4u * (uint32_t)(reg - 4), &value)) {
                return UNWIND_UNREADABLE;
            }
            unwind_set(out, reg, value);
        }
        addr += 4u * SPOOR_EXC_FRAME_ADDITIONAL_WORDS;
    }

    static const int basic_regs[SPOOR_EXC_FRAME_BASIC_WORDS - 1] = {0,  1,         2,        3,
                                                                    12, UNWIND_LR, UNWIND_PC};
    for (unsigned i = 0; i < SPOOR_EXC_FRAME_BASIC_WORDS - 1; i++) {
        uint32_t value;
        if (!spoor_unwind_read_word(env, addr + 4u * i, &value)) {
            return UNWIND_UNREADABLE;
        }
        unwind_set(out, basic_regs[i], value);
    }
    if (!spoor_unwind_read_word(env, addr + 4u * (SPOOR_EXC_FRAME_BASIC_WORDS - 1), xpsr)) {
        return UNWIND_UNREADABLE;
    }

    uint32_t size = 4u * SPOOR_EXC_FRAME_BASIC_WORDS;
    if (layout.fp_frame) {
        size += 4u * SPOOR_EXC_FRAME_FP_WORDS;
    }
    if (*xpsr & SPOOR_EXC_FRAME_XPSR_ALIGNED) {
        size += 4u;
    }
    unwind_set(out, UNWIND_SP, addr + size);
    out->r[UNWIND_PC] &= ~1u;
    return UNWIND_OK;
}

bool spoor_regs_from_exception(const spoor_regs *handler, uint32_t exc_return, spoor_read_fn read,
                               void *ctx, spoor_regs *interrupted)
{
    if (!spoor_cortexm_is_exc_return(exc_return)) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "0x%08x is not an EXC_RETURN value", exc_return);
        return false;
    }
    exception_frame_layout layout = spoor_unwind_exception_layout(exc_return);
    uint32_t frame_addr = (handler->have & SPOOR_HAVE_BANKED_SP)
                              ? (layout.on_psp ? handler->psp : handler->msp)
                              : handler->r[UNWIND_SP];
    if (layout.on_psp && !(handler->have & SPOOR_HAVE_BANKED_SP)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "the exception frame is on PSP but PSP is not known");
        return false;
    }
    unwind_env env = {.elf = NULL, .read = read, .ctx = ctx, .scan_words = 0};
    unwind_state state = {0};
    uint32_t xpsr = 0;
    if (spoor_unwind_exception_step(&env, exc_return, frame_addr, &state, &xpsr) != UNWIND_OK) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "cannot read the exception frame at 0x%08x",
                        frame_addr);
        return false;
    }
    *interrupted = *handler;
    for (int reg = 0; reg < 16; reg++) {
        if (unwind_known(&state, reg)) {
            interrupted->r[reg] = state.r[reg];
        }
    }
    interrupted->xpsr = xpsr;
    return true;
}
