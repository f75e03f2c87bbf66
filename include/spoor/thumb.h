/* Facts about Thumb instructions (ARMv6-M/ARMv7-M/ARMv8-M): sizes, calls, the call a return
 * address returns from, and one-instruction disassembly with capstone. */
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

/* The address to ask about a PC (its function, line, unwind table entry, whether it is
 * code): the PC itself, or for a return address the byte before it, inside the call, as gdb
 * does (pc - 1): a call to a noreturn function can be a function's last instruction, and its
 * return address is then the next function, or the end of .text. Thumb bit ignored. The one
 * statement of this rule, for the unwinder's walk and every method as for the CLI. */
static inline uint32_t spoor_lookup_pc(uint32_t pc, bool pc_is_return)
{
    pc &= ~1u;
    return pc_is_return ? pc - 1u : pc;
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
