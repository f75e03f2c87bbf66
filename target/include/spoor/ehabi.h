/*
 * The EHABI unwind machine ("Exception Handling ABI for the Arm Architecture": the .ARM.exidx
 * index table, the Arm compact model with personality routines 0, 1 and 2, GCC's layout of the
 * generic model, and the frame-unwinding instructions).
 *
 * One interpreter for the whole project: the device's spoor_backtrace() (through
 * spoor_ehabi_step, spoor/crash.h) and libspoor's host unwinder (src/lib/ehabi_unwind.c) both
 * call spoor_ehabi_exec. Portable C99, freestanding, no heap, no static state; bounded (binary
 * search, at most 3 + 4 * 255 instruction bytes); it never dereferences a target address: every
 * table and stack read goes through a reader, so it is safe in a fault handler.
 */
#ifndef SPOOR_EHABI_H
#define SPOOR_EHABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reads len bytes of target memory at addr into buf; false (buf unspecified) when any byte is
 * unavailable. The same type as libspoor's spoor_read_fn (spoor/memory.h), which this header
 * cannot include: the host passes its reader as it is. */
typedef bool (*spoor_ehabi_read_fn)(void *ctx, uint32_t addr, void *buf, size_t len);

typedef struct spoor_ehabi_reader {
    spoor_ehabi_read_fn read;
    void *ctx;
} spoor_ehabi_reader;

/* What the machine reads: the index table [exidx_start, exidx_end) and the .ARM.extab entries it
 * points to through `table`, saved registers through `stack`. All reads are aligned words. */
typedef struct spoor_ehabi_source {
    uint32_t exidx_start; /* target address of .ARM.exidx (__exidx_start) */
    uint32_t exidx_end;   /* __exidx_end */
    spoor_ehabi_reader table;
    spoor_ehabi_reader stack;
} spoor_ehabi_source;

/* Results of the machine and reasons why a walk stopped (spoor_ehabi_unwind, spoor/crash.h). */
enum spoor_ehabi_stop {
    SPOOR_EHABI_STEPPED = -1,   /* not a stop: the step produced the caller's frame */
    SPOOR_EHABI_END = 0,        /* reached a frame with no caller (LR 0/0xFFFFFFFF, CANTUNWIND) */
    SPOOR_EHABI_FULL = 1,       /* pcs is full */
    SPOOR_EHABI_NO_ENTRY = 2,   /* no index entry covers the PC */
    SPOOR_EHABI_REFUSED = 3,    /* the entry refuses to unwind, has a personality routine that is
                                   not Arm's, or needs a register whose value is unknown */
    SPOOR_EHABI_BAD_OPCODE = 4, /* spare, reserved or truncated unwind instruction */
    SPOOR_EHABI_BAD_READ = 5,   /* a stack or table read failed (outside the allowed ranges) */
    SPOOR_EHABI_BAD_PC = 6,     /* an unwound PC is outside flash */
    SPOOR_EHABI_NO_PROGRESS = 7 /* SP did not grow, or the step limit was reached */
};

/* Flags of spoor_ehabi_exec. */
/* addr is the PC of the instruction about to run (a fault, a breakpoint, an interrupted
 * instruction), not an address inside a call: at a function's first instruction nothing is
 * pushed yet, so the caller is LR and SP stays. */
#define SPOOR_EHABI_EXACT_PC 1u

/* Unwinds one frame. Finds the index entry covering addr (the PC, or for a return address an
 * address inside the call: the return address minus 1 or 2) and runs its instructions on r[0..15],
 * starting with vsp = r[13]. Bit n of *known says r[n] holds a real value (0xFFFF: all do); a
 * needed register that is not known refuses.
 * Returns SPOOR_EHABI_STEPPED with the caller's registers in r: r[13] the final vsp, r[15] the
 * return address as found (popped, else r[14]; Thumb bit or EXC_RETURN as they were), and the
 * popped registers, r13 and r15 marked known. Otherwise returns why not: SPOOR_EHABI_END
 * (EXIDX_CANTUNWIND), _NO_ENTRY, _REFUSED, _BAD_OPCODE or _BAD_READ; r and *known are then partly
 * updated, so callers run the machine on a copy. */
int spoor_ehabi_exec(const spoor_ehabi_source *source, uint32_t addr, uint32_t flags,
                     uint32_t r[16], uint16_t *known);

/* One little-endian word at addr (4-byte aligned, else false) through the reader. */
bool spoor_ehabi_read_word(const spoor_ehabi_reader *reader, uint32_t addr, uint32_t *value);

#ifdef __cplusplus
}
#endif

#endif
