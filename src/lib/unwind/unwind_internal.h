/* Shared by the unwinder's modules (unwind.c drives cfi_unwind.c, ehabi_unwind.c,
 * prologue_unwind.c, stack_scan.c and exception_frame.c; all of them read memory through
 * unwind_memory.c); not a public interface. */
#ifndef SPOOR_UNWIND_INTERNAL_H
#define SPOOR_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/unwind.h"

#define UNWIND_SP 13
#define UNWIND_LR 14
#define UNWIND_PC 15

/* The registers of one frame; bit i of `known` says whether r[i] is trustworthy. */
typedef struct unwind_state {
    uint32_t r[16];
    uint16_t known;
    /* r[15] is a return address (the call is just before it); look up r[15] - 1. */
    bool pc_is_return;
} unwind_state;

/* What every method needs: the ELF and the memory reader. */
typedef struct unwind_env {
    const spoor_elf *elf;
    spoor_read_fn read;
    void *ctx;
    unsigned scan_words;
} unwind_env;

typedef enum unwind_result {
    UNWIND_OK,
    UNWIND_NO_INFO,    /* the method has nothing for this PC */
    UNWIND_UNREADABLE, /* it needed a stack word that could not be read */
} unwind_result;

static inline bool unwind_known(const unwind_state *s, int reg)
{
    return (s->known >> reg) & 1u;
}

static inline void unwind_set(unwind_state *s, int reg, uint32_t value)
{
    s->r[reg] = value;
    s->known |= (uint16_t)(1u << reg);
}

/* unwind_memory.c. One 32-bit little-endian word of target memory through the reader. */
bool spoor_unwind_read_word(const unwind_env *env, uint32_t addr, uint32_t *value);
/* Code bytes: from the ELF's loadable sections, else through the reader. */
bool spoor_unwind_read_code(const unwind_env *env, uint32_t addr, void *buf, size_t len);
/* An address inside the call instruction that return_address returns from:
 * spoor_lookup_pc() (spoor/unwind.h) of a return address. */
static inline uint32_t unwind_call_site(uint32_t return_address)
{
    return spoor_lookup_pc(return_address, true);
}

/* The address at which to look up the function and unwind information of a frame
 * (spoor_lookup_pc()): the one place the walk and every method (CFI FDE, EHABI index,
 * prologue analysis) take it from. */
static inline uint32_t unwind_lookup_pc(const unwind_state *s)
{
    return spoor_lookup_pc(s->r[UNWIND_PC], s->pc_is_return);
}

/* task_entry.c. What a return address that is a function's first byte is (any other return
 * address is UNWIND_RETURN_CALL). callee_entry is the entry of the frame's own function (0
 * when unknown). */
typedef enum unwind_return_kind {
    UNWIND_RETURN_CALL,       /* a return from a call (the instruction before it can be one) */
    UNWIND_RETURN_TASK_START, /* a task-exit hook an RTOS made a task's first return address:
                                 the frame is the task's function; *hook is the hook's entry */
    UNWIND_RETURN_NONE,       /* a function's first byte no call returns to: not believable */
} unwind_return_kind;

unwind_return_kind spoor_unwind_return_kind(const unwind_env *env, uint32_t return_address,
                                            uint32_t callee_entry, uint32_t *hook);

/* Each method turns the state of a frame (callee) into the state of its caller: on
 * UNWIND_OK, out->r[15] is the raw return address (Thumb bit set, or an EXC_RETURN value),
 * out->r[13] the caller's SP, and callee-saved registers the method restored are known. */
unwind_result spoor_unwind_cfi_step(const unwind_env *env, const unwind_state *in,
                                    unwind_state *out);
unwind_result spoor_unwind_ehabi_step(const unwind_env *env, const unwind_state *in,
                                      unwind_state *out);
unwind_result spoor_unwind_prologue_step(const unwind_env *env, const unwind_state *in,
                                         unwind_state *out);
unwind_result spoor_unwind_scan_step(const unwind_env *env, const unwind_state *in,
                                     unwind_state *out);

/* EXC_RETURN (and FNC_RETURN) values: 0xFFxxxxxx with the prefix of the architecture. */
bool spoor_unwind_is_exc_return(uint32_t value);

/* A hardware-stacked exception frame at frame_addr as described by exc_return. */
typedef struct exception_frame_layout {
    bool fp_frame;         /* extended frame: s0-s15, FPSCR and a reserved word follow */
    bool on_psp;           /* the frame is on the process stack */
    bool additional_state; /* ARMv8-M: integrity signature + r4-r11 precede the frame */
} exception_frame_layout;

exception_frame_layout spoor_unwind_exception_layout(uint32_t exc_return);

/* Reads the exception frame at frame_addr into out (r0-r3, r12, lr, pc, the stacked xPSR
 * in *xpsr, r4-r11 when the additional state context is there) and sets out->r[13] to
 * the interrupted context's SP. */
unwind_result spoor_unwind_exception_step(const unwind_env *env, uint32_t exc_return,
                                          uint32_t frame_addr, unwind_state *out, uint32_t *xpsr);

#endif
