/*
 * spoor MTB driver, the target side (C99, freestanding): turns the CoreSight Micro Trace Buffer
 * on and off. The MTB writes one 8-byte packet into SRAM for every non-sequential PC change;
 * `spoor mtb` decodes the buffer from a crash dump, memory images or a live target
 * (docs/mtb.md).
 *
 * Cortex-M33 (MTB-M33): the register block is at SPOOR_MTB_M33_REGISTERS. Cortex-M0+
 * (MTB-M0+): the vendor places it; take the address from the device's reference manual.
 * The buffer must lie in the SRAM the MTB writes (from what MTB_BASE reads, up to the device's
 * maximum), be a power of two of at least 16 bytes and be aligned to its size.
 *
 * Freeze on fault: give the same register block to spoor_crash_config.mtb_registers; the fault
 * entry then clears MASTER.EN before the handler's first branch, so the trace ends at the fault.
 */
#ifndef SPOOR_TARGET_MTB_H
#define SPOOR_TARGET_MTB_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPOOR_MTB_M33_REGISTERS 0xE0043000u

/* Register offsets in the block (MTB-M33 TRM; MTB-M0+ has the first four). */
#define SPOOR_MTB_REG_POSITION 0x00u
#define SPOOR_MTB_REG_MASTER 0x04u
#define SPOOR_MTB_REG_FLOW 0x08u
#define SPOOR_MTB_REG_BASE 0x0Cu
#define SPOOR_MTB_REG_TSTART 0x10u /* MTB-M33 */
#define SPOOR_MTB_REG_TSTOP 0x14u  /* MTB-M33 */

#define SPOOR_MTB_MASTER_EN (1u << 31)
#define SPOOR_MTB_MASTER_TSTOPEN (1u << 6)
#define SPOOR_MTB_MASTER_TSTARTEN (1u << 5)
#define SPOOR_MTB_FLOW_AUTOSTOP (1u << 0)
#define SPOOR_MTB_POSITION_WRAP (1u << 2)

typedef struct spoor_mtb_config {
    /* The register block (SPOOR_MTB_M33_REGISTERS, or the vendor's MTB-M0+ address). A
     * uintptr_t, so host tests can point it at a fake block. */
    uintptr_t registers;
    /* The trace buffer: in the MTB's SRAM (at or after MTB_BASE), aligned to size. */
    void *buffer;
    uint32_t size;     /* bytes: a power of two >= 16 */
    uint32_t max_size; /* the device's maximum MTB SRAM (datasheet); 0: not checked */
    /* FLOW watermark: 0 wraps and overwrites (the default, the last packets survive); otherwise
     * tracing stops (AUTOSTOP) once this many bytes are written (a multiple of 8, < size):
     * the first packets survive. */
    uint32_t watermark;
    /* DWT-triggered start/stop (MTB-M33 TSTART/TSTOP: bit N = DWT comparator N): with a start
     * mask, tracing waits for the comparator instead of starting at once. */
    uint32_t tstart_comparators;
    uint32_t tstop_comparators;
} spoor_mtb_config;

typedef enum spoor_mtb_status {
    SPOOR_MTB_OK = 0,
    SPOOR_MTB_BAD_SIZE,      /* not a power of two, or below 16 */
    SPOOR_MTB_TOO_LARGE,     /* above max_size */
    SPOOR_MTB_MISALIGNED,    /* buffer not aligned to size */
    SPOOR_MTB_NOT_IN_SRAM,   /* buffer before MTB_BASE, or running past base + max_size */
    SPOOR_MTB_BAD_WATERMARK, /* not a multiple of 8, or not inside the buffer */
    SPOOR_MTB_NO_REGISTERS,  /* registers is 0 or buffer NULL */
} spoor_mtb_status;

/* The register values spoor_mtb_enable() writes. */
typedef struct spoor_mtb_setup {
    uint32_t position, master, flow, tstart, tstop;
} spoor_mtb_setup;

/* Checks the configuration against base (what MTB_BASE reads) and computes the register
 * values: POSITION = the buffer's offset from base (WRAP clear), MASTER = EN (unless a start
 * comparator is given) | TSTARTEN/TSTOPEN | MASK (size = 2^(MASK+4)), FLOW = the watermark's
 * offset | AUTOSTOP or 0. Portable: built for the host and unit-tested there. */
spoor_mtb_status spoor_mtb_plan(const spoor_mtb_config *config, uintptr_t base,
                                spoor_mtb_setup *out);

/* Stops tracing, checks config, clears the buffer, programs POSITION, FLOW, TSTART/TSTOP and
 * then MASTER (tracing starts). Returns the check's status; nothing is written on failure
 * except that tracing was stopped. */
spoor_mtb_status spoor_mtb_enable(const spoor_mtb_config *config);

/* Stops tracing (MASTER.EN = 0) on the block spoor_mtb_enable() programmed; the buffer and
 * POSITION stay as they are, for a dump or a debugger. */
void spoor_mtb_disable(void);

/* Stops tracing on the block at registers and returns MASTER as it was: for a port's own fault
 * path (spoor's fault entry does this itself when spoor_crash_config.mtb_registers is set). */
uint32_t spoor_mtb_freeze(uintptr_t registers);

#ifdef __cplusplus
}
#endif

#endif
