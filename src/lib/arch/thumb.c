/* Thumb instruction helpers for the MTB flow: calls, and one-instruction disassembly with
 * capstone (loaded on first use, as for the prologue analysis). */
#include <stdio.h>
#include <string.h>

#include "arch/capstone_loader.h"
#include "base/byteorder.h"
#include "spoor/cortexm_facts.h"
#include "spoor/thumb.h"

bool spoor_thumb_is_call(const uint8_t *code, unsigned size)
{
    if (size == 2u)
        return spoor_cortexm_is_blx_register(spoor_le16(code));
    return spoor_cortexm_is_bl(spoor_le16(code), spoor_le16(code + 2));
}

bool spoor_thumb_disassemble(uint32_t pc, const uint8_t *code, unsigned size, char *text,
                             size_t text_len)
{
    const capstone_thumb *t = spoor_capstone_thumb();
    if (t) {
        const uint8_t *p = code;
        size_t left = size;
        uint64_t address = pc;
        if (t->cs->disasm_iter(t->handle, &p, &left, &address, t->insn)) {
            if (t->insn->op_str[0])
                snprintf(text, text_len, "%s\t%s", t->insn->mnemonic, t->insn->op_str);
            else
                snprintf(text, text_len, "%s", t->insn->mnemonic);
            return true;
        }
    }
    uint32_t value =
        size == 4u ? (uint32_t)spoor_le16(code) << 16 | spoor_le16(code + 2) : spoor_le16(code);
    snprintf(text, text_len, size == 4u ? ".inst.w\t0x%08x" : ".inst.n\t0x%04x", value);
    return false;
}
