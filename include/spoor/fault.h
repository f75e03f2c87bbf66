/* Cortex-M fault status in words: which fault, which status bits, what they mean, and the
 * faulting address when the hardware recorded one. Bit meanings follow the ARMv7-M and
 * ARMv8-M Architecture Reference Manuals (CFSR = MMFSR|BFSR|UFSR, HFSR, SFSR). */
#ifndef SPOOR_FAULT_H
#define SPOOR_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The registers a decoder can use; a register is considered only when its has_ bit is set
 * (ARMv6-M has none of them). */
typedef struct spoor_fault_regs {
    bool has_cfsr, has_hfsr, has_mmfar, has_bfar, has_sfsr, has_sfar;
    uint32_t cfsr, hfsr, mmfar, bfar, sfsr, sfar;
    int exception; /* the handler that ran (3 HardFault .. 7 SecureFault), -1 unknown */
    uint32_t pc;   /* the stacked PC, for faults whose address is the PC */
} spoor_fault_regs;

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

/* Decodes the fault. Never fails: with no status registers the type comes from the
 * exception number, and with neither it is "fault". */
void spoor_fault_decode(const spoor_fault_regs *regs, spoor_fault_info *info);

/* One line: "UsageFault: INVSTATE - branch to ... / bad function pointer, PC 0xbf00de4c". */
size_t spoor_fault_summary(const spoor_fault_info *info, char *buf, size_t len);

#endif
