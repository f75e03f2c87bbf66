/* The one register state of libspoor: a Cortex-M core as a crash dump, a regs.json file or a
 * live debugger saw it, with what each source could not tell marked unknown. Dumps, the
 * unwinder, the GDB server and the GDB client all use this type; conversions live in the
 * library (dump.c, regs_json.c, gdb_remote.c, gdb_rsp.c). */
#ifndef SPOOR_REGS_H
#define SPOOR_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Groups of registers a source may or may not know (spoor_regs.have). */
#define SPOOR_HAVE_CORE 0x01u       /* r0-r15 and xpsr */
#define SPOOR_HAVE_BANKED_SP 0x02u  /* msp, psp, control */
#define SPOOR_HAVE_EXC_RETURN 0x04u /* exc_return: LR on handler entry */
#define SPOOR_HAVE_LIMITS 0x08u     /* msplim, psplim (ARMv8-M Mainline) */
#define SPOOR_HAVE_FP 0x10u         /* s0-s15 and fpscr */
#define SPOOR_HAVE_FP_HIGH 0x20u    /* s16-s31 */

typedef struct spoor_regs {
    uint32_t r[16]; /* r0..r12, r[13] the SP in use, r[14] LR, r[15] PC */
    uint32_t xpsr;  /* IPSR (bits 8:0) != 0: the state is inside a handler */
    uint32_t msp, psp, control;
    uint32_t exc_return;
    uint32_t msplim, psplim;
    uint32_t s[32];
    uint32_t fpscr;
    uint32_t have;  /* SPOOR_HAVE_* */
    uint32_t flags; /* SPOOR_REGS_* of a dump's REGISTERS record (spoor/dump_format.h), else 0 */
} spoor_regs;

/* The fault status registers of the System Control Space. valid: SPOOR_FAULT_HAS_* bits
 * (spoor/dump_format.h); a register whose bit is clear is unknown. */
typedef struct spoor_fault_status {
    uint32_t valid;
    uint32_t cfsr, hfsr, dfsr, mmfar, bfar, afsr, sfsr, sfar;
} spoor_fault_status;

/* Addresses of the fault status registers (ARMv7-M B3.2.2, ARMv8-M D1.2). */
#define SPOOR_SCS_CFSR 0xE000ED28u
#define SPOOR_SCS_HFSR 0xE000ED2Cu
#define SPOOR_SCS_DFSR 0xE000ED30u
#define SPOOR_SCS_MMFAR 0xE000ED34u
#define SPOOR_SCS_BFAR 0xE000ED38u
#define SPOOR_SCS_AFSR 0xE000ED3Cu
#define SPOOR_SCS_SFSR 0xE000EDE4u
#define SPOOR_SCS_SFAR 0xE000EDE8u

#endif
