/* Thumb instruction helpers for the MTB flow: calls, and one-instruction disassembly with
 * capstone (loaded on first use, as for the prologue analysis). */
#include <stdio.h>
#include <string.h>

#include "arch/capstone_loader.h"
#include "spoor/thumb.h"

bool spoor_thumb_is_call(const uint8_t *code, unsigned size)
{
    uint16_t hw1 = (uint16_t)(code[0] | code[1] << 8);
    if (size == 2u)
        return (hw1 & 0xFF87u) == 0x4780u; /* BLX Rm (ARMv7-M A7.7.19) */
    uint16_t hw2 = (uint16_t)(code[2] | code[3] << 8);
    /* BL (A7.7.18): 11110 S imm10, 11 J1 1 J2 imm11; BLX imm (v7-A only): 11 J1 0 J2 */
    return (hw1 & 0xF800u) == 0xF000u && (hw2 & 0xC000u) == 0xC000u;
}

static csh handle;
static cs_insn *insn;
static int state; /* 0 untried, 1 ready, -1 unavailable */

static bool capstone_ready(void)
{
    if (state == 0) {
        const capstone_api *cs = spoor_capstone_get();
        state = -1;
        if (cs && cs->open(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS, &handle) == CS_ERR_OK) {
            insn = cs->malloc_insn(handle);
            if (insn)
                state = 1;
            else
                cs->close(&handle);
        }
    }
    return state == 1;
}

bool spoor_thumb_disassemble(uint32_t pc, const uint8_t *code, unsigned size, char *text,
                             size_t text_len)
{
    if (capstone_ready()) {
        const uint8_t *p = code;
        size_t left = size;
        uint64_t address = pc;
        if (spoor_capstone_get()->disasm_iter(handle, &p, &left, &address, insn)) {
            if (insn->op_str[0])
                snprintf(text, text_len, "%s\t%s", insn->mnemonic, insn->op_str);
            else
                snprintf(text, text_len, "%s", insn->mnemonic);
            return true;
        }
    }
    uint32_t value = size == 4u
                         ? (uint32_t)(code[0] | code[1] << 8) << 16 | (code[2] | code[3] << 8)
                         : (uint32_t)(code[0] | code[1] << 8);
    snprintf(text, text_len, size == 4u ? ".inst.w\t0x%08x" : ".inst.n\t0x%04x", value);
    return false;
}
