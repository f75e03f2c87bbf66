/* Unwinding one frame by reading the function's prologue (Thumb-2, capstone).
 *
 * From the function start up to the frame's PC the instructions that build the frame are
 * replayed on a model of the stack: push/stmdb sp!/str rX,[sp,#-4]! (registers saved
 * below the entry SP), vpush, sub sp,#N, and the frame-pointer setup add r7,sp,#N or
 * mov r7,sp. The CFA (the SP at entry, i.e. the caller's SP) is the current SP plus what
 * was pushed and reserved; when SP was moved by an amount only known at run time (alloca,
 * a VLA) the frame pointer r7 gives it instead. The return address is the saved LR, or
 * LR itself while it has not been saved. The replay stops at a return or an
 * unconditional branch; conditional branches and calls are stepped over. */
#include <string.h>

#include "arch/capstone_loader.h"
#include "unwind/unwind_frame_internal.h"

#define MAX_PROLOGUE_BYTES 1024u
#define MAX_INSNS 256u

typedef struct frame_model {
    uint32_t depth;      /* bytes between the current SP and the CFA */
    int32_t saved[16];   /* offset of the saved register from the CFA (negative) */
    uint16_t saved_mask; /* which registers have a saved slot */
    bool has_fp;         /* r7 = CFA - fp_from_cfa */
    uint32_t fp_from_cfa;
    bool sp_variable; /* SP moved by an unknown amount */
} frame_model;

static int core_reg(unsigned reg)
{
    if (reg >= ARM_REG_R0 && reg <= ARM_REG_R12) {
        return (int)(reg - ARM_REG_R0);
    }
    if (reg == ARM_REG_SP) {
        return UNWIND_SP;
    }
    if (reg == ARM_REG_LR) {
        return UNWIND_LR;
    }
    if (reg == ARM_REG_PC) {
        return UNWIND_PC;
    }
    return -1;
}

static bool is_vfp_double(unsigned reg)
{
    return reg >= ARM_REG_D0 && reg <= ARM_REG_D31;
}

static void save_register(frame_model *m, int reg, uint32_t depth_of_slot)
{
    if (reg < 0 || (m->saved_mask & (1u << reg))) {
        return; /* the first save (the prologue's) is the one that holds the caller's value */
    }
    m->saved[reg] = -(int32_t)depth_of_slot;
    m->saved_mask |= (uint16_t)(1u << reg);
}

/* push {list} / stmdb sp!, {list}: lowest register at the lowest address. */
static void model_push(frame_model *m, const cs_arm *arm, unsigned first_op)
{
    unsigned n = arm->op_count > first_op ? arm->op_count - first_op : 0;
    uint32_t new_depth = m->depth + 4u * n;
    for (unsigned i = 0; i < n; i++) {
        const cs_arm_op *op = &arm->operands[first_op + i];
        if (op->type == ARM_OP_REG) {
            save_register(m, core_reg(op->reg), new_depth - 4u * i);
        }
    }
    m->depth = new_depth;
}

static bool writes_sp(const cs_arm *arm)
{
    return arm->op_count > 0 && arm->operands[0].type == ARM_OP_REG &&
           arm->operands[0].reg == ARM_REG_SP && (arm->operands[0].access & CS_AC_WRITE);
}

/* Applies one instruction to the model; false when the replay must stop here. */
static bool model_insn(frame_model *m, const cs_insn *insn)
{
    const cs_arm *arm = &insn->detail->arm;
    const cs_arm_op *ops = arm->operands;
    unsigned n = arm->op_count;

    switch (insn->id) {
    case ARM_INS_PUSH: model_push(m, arm, 0); return true;
    case ARM_INS_STMDB:
        if (n >= 2 && ops[0].type == ARM_OP_REG && ops[0].reg == ARM_REG_SP && arm->writeback) {
            model_push(m, arm, 1);
        }
        return true;
    case ARM_INS_VPUSH: {
        uint32_t bytes = 0;
        for (unsigned i = 0; i < n; i++) {
            bytes += is_vfp_double(ops[i].reg) ? 8u : 4u;
        }
        m->depth += bytes;
        return true;
    }
    case ARM_INS_STR:
        if (n == 2 && arm->writeback && ops[1].type == ARM_OP_MEM &&
            ops[1].mem.base == ARM_REG_SP && ops[1].mem.disp < 0 && ops[1].mem.disp >= -255) {
            m->depth += (uint32_t)(-ops[1].mem.disp);
            save_register(m, core_reg(ops[0].reg), m->depth);
        }
        return true;
    case ARM_INS_SUB:
    case ARM_INS_SUBW:
    case ARM_INS_ADD:
    case ARM_INS_ADDW:
        if (writes_sp(arm)) {
            const cs_arm_op *last = &ops[n - 1];
            bool from_sp = n == 2 || (ops[1].type == ARM_OP_REG && ops[1].reg == ARM_REG_SP);
            if (last->type == ARM_OP_IMM && from_sp) {
                bool sub = insn->id == ARM_INS_SUB || insn->id == ARM_INS_SUBW;
                m->depth += sub ? (uint32_t)last->imm : (uint32_t)-last->imm;
            } else {
                m->sp_variable = true;
            }
            return true;
        }
        if ((insn->id == ARM_INS_ADD || insn->id == ARM_INS_ADDW) && n == 3 &&
            ops[0].type == ARM_OP_REG && ops[0].reg == ARM_REG_R7 && ops[1].type == ARM_OP_REG &&
            ops[1].reg == ARM_REG_SP && ops[2].type == ARM_OP_IMM && !m->has_fp) {
            m->has_fp = true;
            m->fp_from_cfa = m->depth - (uint32_t)ops[2].imm;
        }
        return true;
    case ARM_INS_MOV:
        if (n == 2 && ops[0].type == ARM_OP_REG && ops[1].type == ARM_OP_REG) {
            if (ops[0].reg == ARM_REG_R7 && ops[1].reg == ARM_REG_SP && !m->has_fp) {
                m->has_fp = true;
                m->fp_from_cfa = m->depth;
            } else if (ops[0].reg == ARM_REG_SP) {
                m->sp_variable = true;
            }
        }
        return true;
    case ARM_INS_POP:
    case ARM_INS_LDM:
    case ARM_INS_BX:
        return false; /* a return (or the start of one): the frame is as built so far */
    case ARM_INS_B: return arm->cc != ARM_CC_AL && arm->cc != ARM_CC_INVALID;
    default:
        if (writes_sp(arm)) {
            m->sp_variable = true;
        }
        return true;
    }
}

static bool analyze(const unwind_env *env, uint32_t start, uint32_t end, frame_model *m)
{
    uint8_t code[MAX_PROLOGUE_BYTES];
    size_t len = end - start;
    if (len > sizeof code) {
        len = sizeof code;
    }
    if (len == 0) {
        return true;
    }
    if (!spoor_unwind_read_code(env, start, code, len)) {
        return false;
    }
    const capstone_thumb *t = spoor_capstone_thumb();
    if (t == NULL) {
        return false;
    }
    const uint8_t *p = code;
    size_t left = len;
    uint64_t address = start;
    for (unsigned count = 0; left > 0 && count < MAX_INSNS; count++) {
        if (!t->cs->disasm_iter(t->handle, &p, &left, &address, t->insn)) {
            break; /* data or an undecodable instruction: keep what we have */
        }
        if (!model_insn(m, t->insn)) {
            break;
        }
    }
    return true;
}

unwind_result spoor_unwind_prologue_step(const unwind_env *env, const unwind_state *in,
                                         unwind_state *out)
{
    uint32_t pc = in->r[UNWIND_PC] & ~1u;
    const char *name;
    uint32_t start, size;
    if (env->elf == NULL ||
        !spoor_elf_function(env->elf, unwind_lookup_pc(in), &name, &start, &size)) {
        return UNWIND_NO_INFO;
    }
    start &= ~1u;
    if (pc < start) {
        return UNWIND_NO_INFO;
    }
    frame_model m = {0};
    if (!analyze(env, start, pc, &m)) {
        return UNWIND_NO_INFO;
    }

    uint32_t cfa;
    if (m.has_fp && unwind_known(in, 7) && (m.sp_variable || !unwind_known(in, UNWIND_SP))) {
        cfa = in->r[7] + m.fp_from_cfa;
    } else if (!m.sp_variable && unwind_known(in, UNWIND_SP)) {
        cfa = in->r[UNWIND_SP] + m.depth;
    } else {
        return UNWIND_NO_INFO;
    }

    *out = *in;
    out->pc_is_return = false;
    for (int reg = 0; reg < 16; reg++) {
        if (m.saved_mask & (1u << reg)) {
            uint32_t value;
            if (!spoor_unwind_read_word(env, cfa + (uint32_t)m.saved[reg], &value)) {
                return UNWIND_UNREADABLE;
            }
            unwind_set(out, reg, value);
        }
    }
    uint32_t ra;
    if (m.saved_mask & (1u << UNWIND_PC)) {
        ra = out->r[UNWIND_PC]; /* push {.., pc} never happens in a prologue, but be exact */
    } else if (unwind_known(out, UNWIND_LR)) {
        ra = out->r[UNWIND_LR];
    } else {
        return UNWIND_NO_INFO;
    }
    unwind_set(out, UNWIND_PC, ra);
    unwind_set(out, UNWIND_SP, cfa);
    return UNWIND_OK;
}
