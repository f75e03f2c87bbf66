/*
 * Facts of the Cortex-M architecture that both halves of spoor need: what an EXC_RETURN value
 * is and what its bits say, the size of a hardware-stacked exception frame, and the Thumb call
 * encodings. One definition each, for the target library (the fault handler) and libspoor (the
 * unwinder, the call and MTB decoders, the MTB flow). C99, freestanding, static inline only:
 * the target cannot link host code.
 *
 * References: ARMv7-M Architecture Reference Manual (ARM DDI 0403E) B1.5.8 "Exception return
 * behavior" and A7.7.18/A7.7.19 (BL, BLX (register)); ARMv8-M Architecture Reference Manual
 * (ARM DDI 0553) "EXC_RETURN" and "FNC_RETURN"; ARMv6-M (ARM DDI 0419) B1.5.8.
 */
#ifndef SPOOR_CORTEXM_FACTS_H
#define SPOOR_CORTEXM_FACTS_H

#include "spoor/no_instrument.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- EXC_RETURN ------------------------------------------------------------------------
 * The value a handler finds in LR on exception entry.
 *   ARMv6-M:  0xFFFFFFF1, 0xFFFFFFF9, 0xFFFFFFFD (bits 31:4 all ones).
 *   ARMv7-M:  the same and, with the FP extension, 0xFFFFFFE1, 0xFFFFFFE9, 0xFFFFFFED
 *             (bits 31:5 all ones but bit 4, FType).
 *   ARMv8-M:  bits 31:24 the prefix 0xFF, bits 23:7 RES1, bit 6 S, bit 5 DCRS, bit 4 FType,
 *             bit 3 Mode, bit 2 SPSEL, bit 1 RES0, bit 0 ES.
 * All of them: bits 31:7 ones and bit 1 zero. That rejects the reset value of LR
 * (0xFFFFFFFF, bit 1 set), small negative numbers such as -2 (0xFFFFFFFE) and FNC_RETURN. */
#define SPOOR_EXC_RETURN_ES (1u << 0)    /* ARMv8-M: the exception was taken to Secure state */
#define SPOOR_EXC_RETURN_SPSEL (1u << 2) /* the frame is on PSP (0: on MSP) */
#define SPOOR_EXC_RETURN_MODE (1u << 3)  /* returns to Thread mode (0: to Handler mode) */
#define SPOOR_EXC_RETURN_FTYPE (1u << 4) /* basic frame (0: extended frame with FP state) */
#define SPOOR_EXC_RETURN_DCRS (1u << 5)  /* ARMv8-M: 0 = the callee registers were stacked */
#define SPOOR_EXC_RETURN_S (1u << 6)     /* ARMv8-M: the frame is on a Secure stack */

SPOOR_NO_INSTRUMENT static inline bool spoor_cortexm_is_exc_return(uint32_t value)
{
    return (value & 0xFFFFFF82u) == 0xFFFFFF80u;
}

/* FNC_RETURN (ARMv8-M Security Extension): LR of a Non-secure function called from Secure code
 * by BLXNS, 0xFEFFFFFE or 0xFEFFFFFF. A function return, not an exception return. */
SPOOR_NO_INSTRUMENT static inline bool spoor_cortexm_is_fnc_return(uint32_t value)
{
    return (value & ~1u) == 0xFEFFFFFEu;
}

/* ---- the hardware-stacked exception frame, in 32-bit words ----------------------------- */
#define SPOOR_EXC_FRAME_BASIC_WORDS 8u       /* r0-r3, r12, lr, pc, xPSR */
#define SPOOR_EXC_FRAME_FP_WORDS 18u         /* after the basic frame: s0-s15, FPSCR, reserved */
#define SPOOR_EXC_FRAME_ADDITIONAL_WORDS 10u /* ARMv8-M, below it: signature, reserved, r4-r11 */
#define SPOOR_EXC_FRAME_XPSR_ALIGNED                                                               \
    (1u << 9) /* stacked xPSR: a padding word follows the frame                                    \
               */

/* ---- Thumb calls ------------------------------------------------------------------------
 * BL (T1), ARMv6-M/v7-M/v8-M: 11110 S imm10 : 11 J1 1 J2 imm11. The BLX (immediate) encoding
 * (11 J1 0 J2 in the second halfword) exists only with the ARM instruction set (ARMv5T-ARMv7-A);
 * on M-profile it is UNDEFINED, no call. */
SPOOR_NO_INSTRUMENT static inline bool spoor_cortexm_is_bl(uint16_t first, uint16_t second)
{
    return (first & 0xF800u) == 0xF000u && (second & 0xD000u) == 0xD000u;
}

/* BLX (register) (T1): 0100 0111 1 Rm 000. */
SPOOR_NO_INSTRUMENT static inline bool spoor_cortexm_is_blx_register(uint16_t halfword)
{
    return (halfword & 0xFF87u) == 0x4780u;
}

#ifdef __cplusplus
}
#endif

#endif
