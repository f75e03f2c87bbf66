/* What every part of the unwinder shares: the registers of a frame, the environment (ELF and
 * memory reader), the result of a step and the bounded reads of target memory (unwind_memory.c).
 * The methods (cfi_unwind.c, ehabi_unwind.c, prologue_unwind.c, stack_scan.c) include this
 * and nothing of the driver; the driver (unwind.c) lists them in unwind_methods_internal.h. */
#ifndef SPOOR_UNWIND_FRAME_INTERNAL_H
#define SPOOR_UNWIND_FRAME_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/read.h"
#include "spoor/thumb.h"

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
 * spoor_lookup_pc() (spoor/thumb.h) of a return address. */
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

#endif
