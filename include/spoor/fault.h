/* Cortex-M fault status in words: which fault, which status bits, what they mean, and the
 * faulting address when the hardware recorded one. Bit meanings follow the ARMv7-M and
 * ARMv8-M Architecture Reference Manuals (CFSR = MMFSR|BFSR|UFSR, HFSR, SFSR). */
#ifndef SPOOR_FAULT_H
#define SPOOR_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump_format.h"
#include "spoor/error.h"
#include "spoor/read.h"
#include "spoor/regs.h"

typedef struct spoor_fault_bit {
    const char *reg;     /* "CFSR", "HFSR", "SFSR" */
    const char *name;    /* "INVSTATE" */
    const char *meaning; /* "branch to an address without the Thumb bit / bad function pointer" */
} spoor_fault_bit;

#define SPOOR_FAULT_MAX_BITS 24

typedef struct spoor_fault_info {
    const char *type; /* "UsageFault", "BusFault", "MemManage", "SecureFault", "HardFault" */
    bool escalated;   /* HFSR.FORCED: a configurable fault escalated to HardFault */
    size_t nbits;
    spoor_fault_bit bits[SPOOR_FAULT_MAX_BITS];
    bool has_address;
    uint32_t address;         /* MMFAR/BFAR/SFAR when valid, the PC for instruction faults */
    const char *address_from; /* "MMFAR", "BFAR", "SFAR", "PC" */
} spoor_fault_info;

/* Decodes the fault status (a register is considered only when its SPOOR_FAULT_HAS_* bit is
 * set; ARMv6-M has none of them). exception: the handler that ran (3 HardFault .. 7
 * SecureFault), -1 unknown; pc: the stacked PC, for faults whose address is the PC. Never
 * fails: with no status registers the type comes from the exception number, and with neither
 * it is "fault". */
void spoor_fault_decode(const spoor_fault_status *status, int exception, uint32_t pc,
                        spoor_fault_info *info);

/* The fault status registers as far as target memory holds the System Control Space page
 * (0xE000ED28..0xE000ED3F, and SFSR/SFAR on ARMv8-M); a debugger snapshot usually includes it.
 * Sets the SPOOR_FAULT_HAS_* bit of each register read; false when none could be read. */
bool spoor_fault_status_read(spoor_read_fn read, void *ctx, spoor_fault_status *out);

/* One line: "UsageFault: INVSTATE - branch to ... / bad function pointer, PC 0xbf00de4c". */
size_t spoor_fault_summary(const spoor_fault_info *info, char *buf, size_t len);

#endif
