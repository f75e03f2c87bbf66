/* Facts about Thumb instructions (ARMv6-M/ARMv7-M/ARMv8-M): sizes, calls, and one-instruction
 * disassembly with capstone. */
#ifndef SPOOR_THUMB_H
#define SPOOR_THUMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The size of the Thumb instruction whose first halfword is hw: 4 for a 32-bit encoding
 * (bits [15:11] 0b11101, 0b11110, 0b11111), 2 otherwise. */
static inline unsigned spoor_thumb_size(uint16_t hw)
{
    return (hw >> 11) >= 0x1Du ? 4u : 2u;
}

/* True when the instruction (code: its bytes, size 2 or 4) is a call: BL or BLX Rm
 * (spoor/cortexm_facts.h; M-profile has no BLX immediate). */
bool spoor_thumb_is_call(const uint8_t *code, unsigned size);

/* Disassembles one Thumb instruction into text ("bne.n 0x2000032a", "push {r7, lr}") with
 * capstone (loaded on first use). False when capstone is missing or the bytes are not an
 * instruction; text then holds ".inst 0x..." */
bool spoor_thumb_disassemble(uint32_t pc, const uint8_t *code, unsigned size, char *text,
                             size_t text_len);

#endif
