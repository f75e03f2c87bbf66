/*
 * spoor crash capture, the target side (C99, freestanding, no heap).
 *
 * Firmware calls spoor_crash_init() early in main(). From then on a fault (HardFault,
 * MemManage, BusFault, UsageFault, SecureFault) or a call to spoor_crash_capture() writes a
 * crash dump (format: spoor/dump_format.h) into a RAM buffer the startup code does not clear
 * (.noinit). The dump survives the reset that follows; after reset the firmware checks
 * spoor_crash_valid(), hands the dump out with spoor_crash_stream() and marks it read with
 * spoor_crash_take(). While a dump is waiting to be read, later crashes do not overwrite it
 * (the first crash of a crash loop is the interesting one); they are only counted.
 *
 * Linking spoor_crash_init() pulls in the fault handlers (they live in the same object
 * file) and so replaces the weak CMSIS-named handlers of the startup code.
 * docs/crash-capture.md shows the linker script lines and a complete setup.
 */
#ifndef SPOOR_CRASH_H
#define SPOOR_CRASH_H

#include <stdbool.h>
#include <stdint.h>

#include "spoor/dump_format.h"
#include "spoor/ehabi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An address range [start, end). */
typedef struct spoor_range {
    uint32_t start;
    uint32_t end;
} spoor_range;

/* Reads len bytes of target memory at addr into dst; false when it cannot. On the device
 * this is a plain copy done after the caller checked the address; host tests map target
 * addresses onto host buffers. */
typedef bool (*spoor_mem_read_fn)(void *ctx, uint32_t addr, void *dst, uint32_t len);

/* Where a finished capture goes next. */
typedef void (*spoor_crash_hook_fn)(void);

typedef struct spoor_crash_config {
    /* The dump buffer, in a section the startup code neither loads nor zeroes (.noinit).
     * SPOOR_CRASH_CONTROL_SIZE bytes of it keep the capture state; the rest holds the dump.
     * 2 KiB is enough for registers and a 1 KiB stack window. Must be 4-byte aligned. */
    void *buffer;
    uint32_t buffer_size;
    /* A stack reserved for the fault handler, so it works after a stack overflow. NULL
     * uses a built-in 512-byte stack. */
    void *handler_stack;
    uint32_t handler_stack_size;
    /* Bytes of the active stack (from the exception frame up) copied into the dump; the
     * other stack pointer (PSP when MSP was active and the reverse) gets the same window. */
    uint32_t stack_window;
    /* Where RAM and code are. Every stack and region read is checked against ram (a
     * region may also lie in flash), every PC the unwinder follows against flash. */
    const spoor_range *ram;
    uint32_t ram_count;
    const spoor_range *flash;
    uint32_t flash_count;
    /* Called after a fault was captured (interrupts and faults masked, on the reserved
     * stack); must not return. NULL: reset through AIRCR.SYSRESETREQ. */
    spoor_crash_hook_fn after_capture;
    /* Optional Micro Trace Buffer: the address of its register block (e.g. 0xE0043000) or 0
     * for none. The handler stops tracing, then copies the buffer (base, size) whole. */
    uint32_t mtb_registers;
    uint32_t mtb_buffer;
    uint32_t mtb_buffer_size;
} spoor_crash_config;

#define SPOOR_CRASH_CONTROL_SIZE 16u
#define SPOOR_CRASH_MAX_REGIONS 8u

/* Stores the configuration and validates the capture state in the buffer (a buffer that
 * does not hold a valid state, as after power-on, is reset). Keeps a dump from before the
 * reset. Then checks its own wiring: the fault entries of the active vector table (VTOR; on a
 * Cortex-M0 the table at 0) must be spoor's handlers (spoor/handlers.h) or branch to them
 * with their first instruction (B/B.W). MemManage, BusFault, UsageFault (and SecureFault) are
 * enabled only where they are: the others stay disabled and escalate to HardFault.
 * Returns false when the configuration is unusable (no buffer, buffer too small) or an entry
 * is not spoor's (capture is set up as far as it goes: a wrong HardFault entry means faults
 * are not captured); spoor_crash_init_message() then says why. */
bool spoor_crash_init(const spoor_crash_config *config);

/* Why the last spoor_crash_init() returned false, as a sentence; NULL when it returned true.
 * The text lives in a static buffer, e.g. "HardFault entry of the vector table at 0x00000000 is
 * 0x000001a5, not spoor's HardFault_Handler 0x00000c11 (...)". */
const char *spoor_crash_init_message(void);

/* Adds [addr, addr+len) to every future dump (MTB buffer, call-record ring, RTOS task
 * blocks...). Regions outside the configured ram/flash ranges are skipped at capture time;
 * parts already in the dump (the stack window, an earlier region) are not copied twice.
 * False when SPOOR_CRASH_MAX_REGIONS are registered already. */
bool spoor_dump_add_region(const void *addr, uint32_t len, enum spoor_region_kind kind);

/* Adds a function-call record ring (entry_size bytes per entry, count entries; *next is
 * the index the ring writes next, NULL if unknown) as a SPOOR_REC_CALL_RECORDS record. */
bool spoor_dump_add_call_records(const void *ring, uint16_t entry_size, uint32_t count,
                                 const volatile uint32_t *next);

/* Why a capture is taken, for spoor_crash_capture(). */
typedef struct spoor_crash_event {
    enum spoor_reason reason; /* SPOOR_REASON_ASSERT, _WATCHDOG or _USER */
    uint32_t code;
    const char *file; /* may be NULL */
    uint32_t line;
    const char *message; /* may be NULL */
} spoor_crash_event;

/* Writes a dump of the caller's state (registers as at the call, the stack window, the
 * regions) and returns: for asserts, watchdog early warnings, user requests. Returns false
 * when nothing was written (not initialised, or an unread dump is kept). */
bool spoor_crash_capture(const spoor_crash_event *event);

/* Captures and then runs the after_capture hook (reset by default): never returns. */
void spoor_crash_fatal(const spoor_crash_event *event) __attribute__((noreturn));

#define SPOOR_CRASH_ASSERT(cond)                                                                   \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            static const spoor_crash_event spoor_assert_event_ = {SPOOR_REASON_ASSERT, 0u,         \
                                                                  __FILE__, __LINE__, #cond};      \
            spoor_crash_fatal(&spoor_assert_event_);                                               \
        }                                                                                          \
    } while (0)

/* True when the buffer holds a complete dump (CRC checked) that was not taken yet. */
bool spoor_crash_valid(void);
/* The waiting dump and its size, or NULL. */
const uint8_t *spoor_crash_data(uint32_t *size);
/* How many crashes happened while the waiting dump was kept (they were not recorded). */
uint32_t spoor_crash_dropped(void);

/* Hands the waiting dump out in chunks of at most chunk bytes (0: 256) through sink, in
 * order. Stops and returns false when sink returns false or there is no dump. */
typedef bool (*spoor_crash_sink_fn)(void *ctx, const uint8_t *bytes, uint32_t len);
bool spoor_crash_stream(spoor_crash_sink_fn sink, void *ctx, uint32_t chunk);

/* Marks the waiting dump as read: the next crash may overwrite it. */
void spoor_crash_take(void);

/* Fills pcs with the return addresses of the calling code (pcs[0]: the return address into
 * the caller of spoor_backtrace) by unwinding .ARM.exidx/.ARM.extab (compile with
 * -funwind-tables). Needs spoor_crash_init() for the RAM/flash ranges. Returns the count. */
uint32_t spoor_backtrace(uint32_t *pcs, uint32_t max);

/* ---- portable pieces (also built for the host and unit-tested there) ---------------- */

/* CRC-32/ISO-HDLC, as used by the dump header. crc is the running value: start with 0. */
uint32_t spoor_crc32(uint32_t crc, const void *data, uint32_t len);

/* Everything one capture writes; the arch code (or a test) fills it in. */
typedef struct spoor_capture {
    uint32_t regs[SPOOR_REGS_WORDS]; /* the REGISTERS payload, word by word */
    bool has_fault;
    uint32_t fault[SPOOR_FAULT_SIZE / 4u]; /* the FAULT payload: valid mask, registers */
    uint32_t reason;                       /* SPOOR_REASON_* */
    uint32_t code;
    const char *file;
    uint32_t line;
    const char *message;
    /* The stack windows to copy (length 0: none). */
    uint32_t stack_start, stack_len;
    uint32_t other_stack_start, other_stack_len;
    const uint8_t *build_id; /* NULL: none */
    uint32_t build_id_len;
    bool has_mtb;
    uint32_t mtb_regs[4]; /* POSITION, MASTER, FLOW, BASE */
} spoor_capture;

/* The memory the capture reads: reader plus the ranges reads are checked against. */
typedef struct spoor_memory {
    spoor_mem_read_fn read;
    void *ctx;
    const spoor_range *ram;
    uint32_t ram_count;
    const spoor_range *flash;
    uint32_t flash_count;
} spoor_memory;

/* Like spoor_crash_init() without touching hardware; used by the arch code and by tests.
 * The memory description is copied. */
bool spoor_crash_setup(const spoor_crash_config *config, const spoor_memory *memory);

/* The configuration and memory description in use, NULL before a successful setup. */
const spoor_crash_config *spoor_crash_current_config(void);
const spoor_memory *spoor_crash_current_memory(void);

/* Where a region goes; kind is a SPOOR_REGION_*. */
typedef void (*spoor_region_fn)(void *ctx, uint32_t addr, uint32_t len, uint32_t kind);
/* Regions decided at capture time (the thread-aware capture, spoor/crash_threads.h): called
 * while a dump is built, after the registered regions; each region it hands to emit becomes
 * MEMORY records as far as the buffer holds. One at a time; NULL removes it;
 * spoor_crash_init() resets it. */
typedef void (*spoor_dump_extra_fn)(const spoor_memory *memory, spoor_region_fn emit, void *ctx);
void spoor_dump_set_extra(spoor_dump_extra_fn extra);

/* Writes the dump for capture into the configured buffer (unless a dump is waiting, which
 * only increments the dropped count). Returns true when a dump was written. */
bool spoor_crash_write(const spoor_capture *capture);

/* True when [addr, addr+len) lies inside one of ranges (len 0 counts as inside when addr
 * does). */
bool spoor_range_contains(const spoor_range *ranges, uint32_t count, uint32_t addr, uint32_t len);

/* [start, start + want) clipped to the range of ranges holding start: its length, 0 when start
 * lies in none. */
uint32_t spoor_range_room(const spoor_range *ranges, uint32_t count, uint32_t start, uint32_t want);

/* Builds a dump into buf (used by spoor_crash_write; exposed for tests and for tools that
 * write dumps). Returns the dump size, or 0 when buf cannot hold even the header, the
 * registers and the end record. */
uint32_t spoor_dump_build(uint8_t *buf, uint32_t cap, const spoor_capture *capture,
                          const spoor_memory *memory);

/* ---- EHABI unwinder (portable) ---------------------------------------------------- */
/* A walk over the device's memory with the shared EHABI machine (spoor/ehabi.h, which also
 * defines the stop reasons, enum spoor_ehabi_stop). */

/* The state the unwinder starts from: r[0..15] (r[13] SP, r[14] LR, r[15] PC). pc_is_return
 * says r[15] is a return address (the call is the instruction before it): the index entry is
 * then looked up for r[15] - 2. The unwinder sets it after every step. */
typedef struct spoor_ehabi_state {
    uint32_t r[16];
    bool pc_is_return;
    /* PSP, for crossing an exception frame stacked on the process stack (EXC_RETURN bit 2);
     * 0 when unknown, which ends the walk at such a frame. */
    uint32_t psp;
} spoor_ehabi_state;

typedef struct spoor_ehabi_table {
    uint32_t exidx_start; /* target address of .ARM.exidx (__exidx_start) */
    uint32_t exidx_end;   /* __exidx_end */
} spoor_ehabi_table;

/* One unwind step: updates state to the caller's (pc in r[15], Thumb bit cleared).
 * Returns SPOOR_EHABI_END/... on stop, or SPOOR_EHABI_STEPPED (-1) when the step produced a
 * caller frame. */
int spoor_ehabi_step(const spoor_ehabi_table *table, const spoor_memory *memory,
                     spoor_ehabi_state *state);

/* Walks from state: pcs[0] = state->r[15], then each caller's PC (a return address), at most
 * max entries and SPOOR_EHABI_MAX_STEPS steps. *stop (if not NULL) says why it ended. Every
 * stack read is checked against memory->ram, every table read and PC against memory->flash.
 * Returns the number of PCs written. */
#define SPOOR_EHABI_MAX_STEPS 64u
uint32_t spoor_ehabi_unwind(const spoor_ehabi_table *table, const spoor_memory *memory,
                            const spoor_ehabi_state *state, uint32_t *pcs, uint32_t max, int *stop);

#ifdef __cplusplus
}
#endif

#endif
