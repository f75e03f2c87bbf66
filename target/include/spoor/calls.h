/*
 * spoor function-call recorder, the target side (C99, freestanding, no heap).
 *
 * Compile the code to trace with -finstrument-functions: GCC then calls
 * __cyg_profile_func_enter(this_fn, call_site) at the start of every function and
 * __cyg_profile_func_exit(this_fn, call_site) before it returns. This library implements both
 * hooks: each appends one record (function address, call site, enter/exit; layout in
 * spoor/dump_format.h, "The function-call recorder") to a RAM ring the application gives.
 * When the ring is full the oldest records are overwritten, so after a crash the ring holds
 * the newest calls. `spoor calls -e FW.elf` turns the ring into a call tree with names from
 * the ELF; it finds the ring through the state object spoor_calls_state (the stable symbol
 * SPOOR_CALLS_STATE_SYMBOL), so a RAM image or a crash dump that holds the state object and the
 * ring is enough.
 *
 * Concurrency: records are claimed with one atomic update of the next slot's address (LDREX/STREX
 * on ARMv7-M and ARMv8-M Mainline, a PRIMASK section of a few instructions on ARMv6-M and ARMv8-M
 * Baseline), so interrupt handlers may be instrumented too; their call site is then the EXC_RETURN
 * value.
 *
 * The hooks and the whole library are no_instrument_function and call nothing; the recorder
 * needs no C runtime (nothing in .data, no C library calls). Code the hooks must not see (start-up
 * code that runs before both .bss is zeroed and spoor_calls_init, the fault path) is built
 * without -finstrument-functions or left out with
 *   -finstrument-functions-exclude-file-list=startup.c,spoor/
 *   -finstrument-functions-exclude-function-list=SystemInit
 * (docs/calls.md). The crash library's fault handler calls spoor_calls_freeze() first, when
 * this recorder is linked in: no records come from the fault path.
 *
 * Build-time options (define when compiling target/src/calls_recorder.c):
 *   SPOOR_CALLS_TIME=1     a u32 timestamp per record: DWT CYCCNT where the core has it (M3,
 *                          M4, M7, M33; the recorder enables the counter), SysTick VAL on M0/M0+
 *   SPOOR_CALLS_CONTEXT=1  a u32 context id per record: IPSR, or spoor_calls_context() when
 *                          the application defines it (e.g. the RTOS's current thread)
 */
#ifndef SPOOR_CALLS_H
#define SPOOR_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "spoor/no_instrument.h"

/* The recorder's state, laid out as SPOOR_CALLS_ST_* say (every field a u32). It is in .bss:
 * nothing of the recorder depends on .data having been copied, and spoor_calls_init writes
 * every field. The hooks read only next and last (and the flags on their slow path): while
 * last is 0, which zeroed RAM reads, they record nothing. */
typedef struct spoor_calls_state_t {
    uint32_t magic;
    uint32_t format;
    uint32_t ring;
    uint32_t capacity;
    volatile uint32_t next; /* the address of the slot written next */
    volatile uint32_t flags;
    volatile uint32_t last; /* the hooks' gate: the ring's last slot, or 0: not to the ring alone */
} spoor_calls_state_t;

extern spoor_calls_state_t spoor_calls_state;

/* Starts recording into buf (size bytes, 4-byte aligned): zeroes it, holds size / record size
 * records, and enables recording. It writes every field of spoor_calls_state and needs no C
 * runtime (no .data copy, no C library): call it first thing in Reset_Handler if calls in the
 * start-up code are to be recorded. Hooks called before init record nothing as long as
 * spoor_calls_state reads zero (it is in .bss: zeroed by the C runtime, or by the loader).
 * Zeroing .bss after init turns recording off (nothing is recorded; no fault): call init
 * again after it. Returns false (recording stays off, the state says "not initialised") when
 * buf is NULL, misaligned or holds fewer than 2 records. Call it again to restart with an
 * empty ring. Register the ring and the state object with the crash
 * dump to find them after a fault:
 *   spoor_dump_add_region(&spoor_calls_state, sizeof spoor_calls_state, SPOOR_REGION_DATA);
 *   spoor_dump_add_region(buf, size, SPOOR_REGION_DATA); */
bool spoor_calls_init(void *buf, size_t size) SPOOR_NO_INSTRUMENT;

/* Turns recording on or off (after init; a frozen recorder stays off). */
void spoor_calls_enable(bool on) SPOOR_NO_INSTRUMENT;

/* Stops recording for good (until the next init): the fault handler's first step. */
void spoor_calls_freeze(void) SPOOR_NO_INSTRUMENT;

/* Also writes every record to ITM stimulus port `port` (0-31) as 32-bit writes, word by word
 * (ARMv7-M / ARMv8-M Mainline with an ITM; the port must be enabled in ITM TER). port < 0
 * stops it. `spoor calls --itm SOURCE` reads them back. */
void spoor_calls_itm(int port) SPOOR_NO_INSTRUMENT;

/* The record size in bytes this library was built for (8 without options). */
uint32_t spoor_calls_record_size(void) SPOOR_NO_INSTRUMENT;

/* With SPOOR_CALLS_CONTEXT: the application's context id for the current record (weak;
 * IPSR when the application does not define it). */
uint32_t spoor_calls_context(void) SPOOR_NO_INSTRUMENT;

/* The GCC hooks. */
void __cyg_profile_func_enter(void *this_fn, void *call_site) SPOOR_NO_INSTRUMENT;
void __cyg_profile_func_exit(void *this_fn, void *call_site) SPOOR_NO_INSTRUMENT;

#ifdef __cplusplus
}
#endif

#endif
