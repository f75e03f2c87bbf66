/*
 * ITM/DWT set-up for `spoor top`, the target side (C99, freestanding): for firmware that
 * configures its trace itself instead of leaving it to the debugger (docs/top.md).
 *
 * spoor_itm_watch_current_thread(&pxCurrentTCB) turns on what spoor top needs: trace
 * (DEMCR.TRCENA), the ITM with local timestamps, synchronisation packets and DWT packets
 * forwarded (ITM_TCR), the cycle counter (DWT_CTRL.CYCCNTENA, SYNCTAP), and one DWT comparator
 * on the RTOS's current-thread pointer that emits a data trace data value packet on every write
 * to it. The comparator encodings differ: ARMv7-M (ARMv7-M ARM C1.8.17: DWT_FUNCTION.FUNCTION
 * 0b1101, "sample data for write transfers", DWT_MASK 0) and ARMv8-M Mainline (ARMv8-M ARM
 * DWT_FUNCTION: MATCH 0b1101 "data address with value, writes", ACTION 0b10, which for that
 * comparator type generates a Data Trace Data Value packet, DATAVSIZE word).
 * ARMv6-M and ARMv8-M Baseline have no ITM: the calls return SPOOR_ITM_WATCH_NO_ITM.
 *
 * The register values are computed by spoor_itm_watch_plan(), portable code that the host
 * test suite checks against the manuals' encodings; the Cortex-M part only writes them.
 */
#ifndef SPOOR_ITM_WATCH_H
#define SPOOR_ITM_WATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum spoor_dwt_arch {
    SPOOR_DWT_ARMV7M, /* Cortex-M3, M4, M7 */
    SPOOR_DWT_ARMV8M, /* Cortex-M33, M35P, M55, M85 (Mainline) */
} spoor_dwt_arch;

/* Registers (ARMv7-M / ARMv8-M System Control Space, ITM and DWT). */
#define SPOOR_DEMCR 0xE000EDFCu
#define SPOOR_ITM_STIM(n) (0xE0000000u + 4u * (n)) /* stimulus port n, 0-255 */
#define SPOOR_ITM_TER0 0xE0000E00u
#define SPOOR_ITM_TPR 0xE0000E40u
#define SPOOR_ITM_TCR 0xE0000E80u
#define SPOOR_ITM_LAR 0xE0000FB0u
#define SPOOR_DWT_CTRL 0xE0001000u
#define SPOOR_DWT_CYCCNT 0xE0001004u
#define SPOOR_DWT_LAR 0xE0001FB0u
#define SPOOR_DWT_END 0xE0002000u /* the end of the DWT's 4 KiB block */
#define SPOOR_DWT_COMP(n) (0xE0001020u + 16u * (n))
#define SPOOR_DWT_MASK(n) (0xE0001024u + 16u * (n)) /* ARMv7-M only */
#define SPOOR_DWT_FUNCTION(n) (0xE0001028u + 16u * (n))
#define SPOOR_CORESIGHT_UNLOCK 0xC5ACCE55u

/* One register write: value into the bits of mask (mask 0xFFFFFFFF: the whole register;
 * otherwise read-modify-write, the other bits kept). */
typedef struct spoor_reg_write {
    uint32_t addr, value, mask;
} spoor_reg_write;

#define SPOOR_ITM_WATCH_MAX_WRITES 12

/* The writes, in order, that watch the 32-bit variable at watch_addr with DWT comparator
 * comparator (0-3: the data trace packet names 0-3) on arch, with exception trace too when
 * exceptions is not 0. Returns how many (at most SPOOR_ITM_WATCH_MAX_WRITES), 0 for a
 * comparator above 3 or an address that is not word aligned. */
size_t spoor_itm_watch_plan(uint32_t watch_addr, unsigned comparator, spoor_dwt_arch arch,
                            int exceptions, spoor_reg_write *out);

/* Results of the Cortex-M calls. */
#define SPOOR_ITM_WATCH_OK 0
/* Written, but DWT_CTRL read as zero, so no NUMCOMP to check the comparator against: an
 * emulator with no DWT (QEMU ignores the writes; spoor vprobe follows them, docs/vprobe.md). */
#define SPOOR_ITM_WATCH_UNCHECKED 1
#define SPOOR_ITM_WATCH_NO_ITM (-1)        /* ARMv6-M, ARMv8-M Baseline */
#define SPOOR_ITM_WATCH_NO_COMPARATOR (-2) /* DWT_CTRL.NUMCOMP says it does not exist */
#define SPOOR_ITM_WATCH_BAD_ARGUMENT (-3)

/* Watches *current (the RTOS's current-thread pointer: &pxCurrentTCB,
 * &osRtxInfo.thread.run.curr, &_kernel.cpus[0].current, ...) with comparator 1, as spoor top
 * expects by default; exception trace off. */
int spoor_itm_watch_current_thread(void *const *current);
/* The same with a chosen comparator (spoor top --comparator N) and exception trace (-E). */
int spoor_itm_watch_current_thread_ex(void *const *current, unsigned comparator, int exceptions);

#ifdef __cplusplus
}
#endif

#endif
