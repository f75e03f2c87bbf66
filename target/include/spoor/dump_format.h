/*
 * The spoor crash dump format: the one definition shared by the target writer
 * (target/src/dump_writer.c) and the host reader (src/lib/dump.c).
 * docs/dump-format.md describes the same layout byte by byte.
 *
 * Plain C99, no structs on the wire: every field is a little-endian integer at a fixed
 * offset given below, so neither side depends on compiler packing.
 *
 * A dump is a header followed by records:
 *
 *   header   (SPOOR_DUMP_HEADER_SIZE bytes)
 *   record*  (each: an 8-byte record header, a payload, zero padding up to a 4-byte boundary)
 *   END record (type SPOOR_REC_END, empty payload), ending exactly at header.total_size
 *
 * Readers skip records whose type they do not know (record header.length says how far), and
 * read only the prefix they know of a known record that is longer than they expect: new record
 * types and new trailing fields do not change the version. The version changes only when an
 * existing field changes meaning or place; a reader rejects versions it does not know.
 */
#ifndef SPOOR_DUMP_FORMAT_H
#define SPOOR_DUMP_FORMAT_H

#include <stdint.h>

/* ---- header ------------------------------------------------------------------------- */

/* "SPDM" as bytes 53 50 44 4d, read as a little-endian u32. */
#define SPOOR_DUMP_MAGIC 0x4D445053u
#define SPOOR_DUMP_VERSION 1u

#define SPOOR_DUMP_HDR_MAGIC 0u       /* u32 SPOOR_DUMP_MAGIC */
#define SPOOR_DUMP_HDR_VERSION 4u     /* u16 format version */
#define SPOOR_DUMP_HDR_HEADER_SIZE 6u /* u16 size of this header; records start here */
#define SPOOR_DUMP_HDR_TOTAL_SIZE 8u  /* u32 bytes of the whole dump, header included */
#define SPOOR_DUMP_HDR_CRC 12u        /* u32 CRC-32 (see below) */
#define SPOOR_DUMP_HEADER_SIZE 16u

/* The CRC is CRC-32/ISO-HDLC (the zlib/Ethernet CRC: reflected polynomial 0xEDB88320, initial
 * value 0xFFFFFFFF, final XOR 0xFFFFFFFF) over bytes [0, 12) followed by bytes
 * [16, total_size): the whole dump except the CRC field itself. */

/* ---- record header ------------------------------------------------------------------ */

#define SPOOR_REC_HDR_TYPE 0u   /* u16 SPOOR_REC_* */
#define SPOOR_REC_HDR_FLAGS 2u  /* u16 SPOOR_REC_FLAG_* */
#define SPOOR_REC_HDR_LENGTH 4u /* u32 payload bytes (padding not included) */
#define SPOOR_REC_HEADER_SIZE 8u
/* Records start on 4-byte boundaries: the next record is at
 * offset + SPOOR_REC_HEADER_SIZE + SPOOR_DUMP_ALIGN4(length). */
#define SPOOR_DUMP_ALIGN4(n) (((n) + 3u) & ~3u)

/* The record holds less than was asked for: the dump buffer was full, or part of a memory
 * region was already in an earlier record or could not be read. */
#define SPOOR_REC_FLAG_TRUNCATED 0x0001u

enum spoor_record_type {
    SPOOR_REC_END = 0x0000,
    SPOOR_REC_REGISTERS = 0x0001,
    SPOOR_REC_FAULT = 0x0002,
    SPOOR_REC_MEMORY = 0x0003,
    SPOOR_REC_BUILD_ID = 0x0004,
    SPOOR_REC_REASON = 0x0005,
    SPOOR_REC_MTB = 0x0006,
    SPOOR_REC_CALL_RECORDS = 0x0007,
};

/* ---- SPOOR_REC_REGISTERS: the CPU state at the fault / capture point -----------------
 * All fields u32. r0-r3, r12, lr, pc, xpsr come from the hardware-stacked exception frame
 * (REGS_FRAME_VALID) and r4-r11 from the handler entry (or the additional state context).
 * sp is the SP of the interrupted code: the frame address plus the frame size plus the
 * alignment word (xPSR bit 9). msp/psp are the interrupted code's values (the one holding
 * the frame is popped, equal to sp) and control has SPSEL/FPCA as the interrupted code had
 * them. For a software capture (REGS_SOFTWARE) pc is the address of the call instruction
 * (BL/BLX) to spoor_crash_capture()/spoor_crash_fatal() in the caller, sp the caller's SP at
 * that call, r4-r11 the caller's, r0-r3/r12 0, and lr unknown (0xFFFFFFFF). */
#define SPOOR_REGS_FLAGS 0u
#define SPOOR_REGS_R0 4u /* r0..r12 at 4 + 4*n */
#define SPOOR_REGS_SP 56u
#define SPOOR_REGS_LR 60u
#define SPOOR_REGS_PC 64u
#define SPOOR_REGS_XPSR 68u
#define SPOOR_REGS_EXC_RETURN 72u /* LR on handler entry */
#define SPOOR_REGS_MSP 76u
#define SPOOR_REGS_PSP 80u
#define SPOOR_REGS_CONTROL 84u
#define SPOOR_REGS_MSPLIM 88u /* ARMv8-M Mainline only (REGS_HAS_LIMITS) */
#define SPOOR_REGS_PSPLIM 92u
#define SPOOR_REGS_S0 96u     /* s0..s15 at 96 + 4*n, valid with REGS_FP_VALID */
#define SPOOR_REGS_FPSCR 160u /* valid with REGS_FP_VALID */
#define SPOOR_REGS_SIZE 164u
#define SPOOR_REGS_WORDS (SPOOR_REGS_SIZE / 4u)

/* REGISTERS flags word */
#define SPOOR_REGS_FRAME_VALID 0x0001u /* the stacked frame was in RAM and was read */
#define SPOOR_REGS_FP_FRAME 0x0002u    /* EXC_RETURN says extended (FP) frame */
#define SPOOR_REGS_FP_VALID 0x0004u    /* s0-s15 and fpscr were read from that frame */
#define SPOOR_REGS_ON_PSP 0x0008u      /* the frame was on PSP (EXC_RETURN bit 2) */
#define SPOOR_REGS_HANDLER 0x0010u     /* the interrupted code was in handler mode */
#define SPOOR_REGS_SECURE 0x0020u      /* ARMv8-M: the frame is on a secure stack */
#define SPOOR_REGS_ADDITIONAL 0x0040u  /* ARMv8-M: additional state context was stacked */
#define SPOOR_REGS_HAS_LIMITS 0x0080u  /* msplim/psplim are valid */
#define SPOOR_REGS_SOFTWARE 0x0100u    /* captured by software (assert/watchdog), no frame */
/* The fault was a stack overflow (CFSR.STKOF, MSTKERR or BSTKERR, or the frame address is
 * outside RAM): the frame was not read; pc 0, lr 0xFFFFFFFF, xpsr 0, r0-r3 the live values,
 * sp the stack pointer after the failed stacking. */
#define SPOOR_REGS_STACK_OVERFLOW 0x0200u
#define SPOOR_REGS_HANDLER_STACK 0x0400u /* the handler ran on the reserved stack */

/* ---- SPOOR_REC_FAULT: the System Control Block fault status registers ---------------
 * u32 valid mask (bit n: register n below was read from hardware), then 8 u32 registers.
 * ARMv6-M has none (mask 0); SFSR/SFAR exist on ARMv8-M Mainline with the Security
 * Extension only. MMFAR/BFAR hold an address only when CFSR.MMARVALID/BFARVALID say so. */
#define SPOOR_FAULT_VALID 0u
#define SPOOR_FAULT_CFSR 4u   /* 0xE000ED28 */
#define SPOOR_FAULT_HFSR 8u   /* 0xE000ED2C */
#define SPOOR_FAULT_DFSR 12u  /* 0xE000ED30 */
#define SPOOR_FAULT_MMFAR 16u /* 0xE000ED34 */
#define SPOOR_FAULT_BFAR 20u  /* 0xE000ED38 */
#define SPOOR_FAULT_AFSR 24u  /* 0xE000ED3C */
#define SPOOR_FAULT_SFSR 28u  /* 0xE000EDE4 */
#define SPOOR_FAULT_SFAR 32u  /* 0xE000EDE8 */
#define SPOOR_FAULT_SIZE 36u
#define SPOOR_FAULT_REG_COUNT 8u
/* valid-mask bits, in register order */
#define SPOOR_FAULT_HAS_CFSR 0x01u
#define SPOOR_FAULT_HAS_HFSR 0x02u
#define SPOOR_FAULT_HAS_DFSR 0x04u
#define SPOOR_FAULT_HAS_MMFAR 0x08u
#define SPOOR_FAULT_HAS_BFAR 0x10u
#define SPOOR_FAULT_HAS_AFSR 0x20u
#define SPOOR_FAULT_HAS_SFSR 0x40u
#define SPOOR_FAULT_HAS_SFAR 0x80u

/* ---- SPOOR_REC_MEMORY: a copy of target memory ----------------------------------------
 * u32 address, u16 kind (SPOOR_REGION_*), u16 reserved (0), then length - 8 bytes of memory.
 * Memory records of one dump never overlap (the writer clips later regions). */
#define SPOOR_MEM_ADDRESS 0u
#define SPOOR_MEM_KIND 4u
#define SPOOR_MEM_RESERVED 6u
#define SPOOR_MEM_BYTES 8u

enum spoor_region_kind {
    SPOOR_REGION_OTHER = 0,
    SPOOR_REGION_STACK = 1,        /* a window of the active stack at the fault */
    SPOOR_REGION_OTHER_STACK = 2,  /* a window of the other stack (PSP when MSP was active...) */
    SPOOR_REGION_RTOS = 3,         /* RTOS task control blocks, task lists */
    SPOOR_REGION_DATA = 4,         /* application data the firmware registered */
    SPOOR_REGION_PERIPHERAL = 5,   /* peripheral registers */
    SPOOR_REGION_THREAD_STACK = 6, /* a window of a thread's stack from its saved SP (the
                                      thread-aware capture, spoor/crash_threads.h) */
};

/* ---- SPOOR_REC_BUILD_ID: the GNU build-id (the NT_GNU_BUILD_ID note's descriptor bytes,
 * usually 20 bytes of SHA-1) of the firmware that wrote the dump. */

/* ---- SPOOR_REC_REASON: why the dump was written ----------------------------------------
 * u32 reason (SPOOR_REASON_*), u32 code (user/watchdog code, exception number for faults),
 * u32 line, u16 file length F, u16 message length M, then F bytes of file name and M bytes
 * of message (neither NUL-terminated). */
#define SPOOR_REASON_REASON 0u
#define SPOOR_REASON_CODE 4u
#define SPOOR_REASON_LINE 8u
#define SPOOR_REASON_FILE_LEN 12u
#define SPOOR_REASON_MSG_LEN 14u
#define SPOOR_REASON_TEXT 16u

enum spoor_reason {
    SPOOR_REASON_FAULT = 1,    /* a fault handler ran; code = exception number (3..7) */
    SPOOR_REASON_ASSERT = 2,   /* an assertion failed: file, line, message */
    SPOOR_REASON_WATCHDOG = 3, /* a watchdog early warning; code is the application's */
    SPOOR_REASON_USER = 4,     /* the application asked for a dump; code is its own */
};

/* ---- SPOOR_REC_MTB: the Micro Trace Buffer at the fault -------------------------------
 * u32 POSITION, u32 MASTER, u32 FLOW, u32 BASE (the MTB registers as read before the
 * writer stopped tracing), u32 address of the buffer in SRAM, then the buffer bytes. */
#define SPOOR_MTB_POSITION 0u
#define SPOOR_MTB_MASTER 4u
#define SPOOR_MTB_FLOW 8u
#define SPOOR_MTB_BASE 12u
#define SPOOR_MTB_ADDRESS 16u
#define SPOOR_MTB_BYTES 20u

/* ---- SPOOR_REC_CALL_RECORDS: a function-call record ring at the fault ------------------
 * u32 address of the ring, u16 entry size, u16 reserved, u32 entry count, u32 index of the
 * next entry the ring would have written, then the ring bytes (entry count * entry size). */
#define SPOOR_CALLS_ADDRESS 0u
#define SPOOR_CALLS_ENTRY_SIZE 4u
#define SPOOR_CALLS_RESERVED 6u
#define SPOOR_CALLS_COUNT 8u
#define SPOOR_CALLS_NEXT 12u
#define SPOOR_CALLS_BYTES 16u

/* ---- The function-call recorder (target/include/spoor/calls.h, docs/calls.md) ---------
 * Not a dump record: the layout of the recorder's state object and of its ring in target RAM.
 * The host finds the state object in the ELF by its symbol SPOOR_CALLS_STATE_SYMBOL and reads
 * it and the ring from any memory view (dump regions, RAM images, a live target).
 *
 * State object, SPOOR_CALLS_STATE_SIZE bytes that the host reads (the device's object has one
 * more word, the hooks' gate), every field a little-endian u32: */
#define SPOOR_CALLS_STATE_SYMBOL "spoor_calls_state"
#define SPOOR_CALLS_MAGIC 0x4C435053u /* "SPCL" as bytes 53 50 43 4c; 0 before init */
#define SPOOR_CALLS_ST_MAGIC 0u
#define SPOOR_CALLS_ST_FORMAT                                                                      \
    4u                              /* bits 0-7 record size in bytes, bits 8-15 SPOOR_CALLS_HAS_*, \
                                       bits 16-23 the layout (SPOOR_CALLS_LAYOUT_*) */
#define SPOOR_CALLS_ST_RING 8u      /* address of the ring (4-byte aligned) */
#define SPOOR_CALLS_ST_CAPACITY 12u /* records the ring holds */
#define SPOOR_CALLS_ST_NEXT 16u     /* the slot written next: its index or address (layout) */
#define SPOOR_CALLS_ST_FLAGS 20u    /* SPOOR_CALLS_FLAG_* */
#define SPOOR_CALLS_STATE_SIZE 24u
/* The device's own: the hooks' gate, the address of the ring's last slot while the records go
 * to the ring alone (flags ready and enabled, no ITM), 0 otherwise. Not read by the host. */
#define SPOOR_CALLS_ST_LAST 24u

/* format bits 16-23: how next names the slot written next */
#define SPOOR_CALLS_LAYOUT_INDEX 0u   /* its index, 0 .. capacity-1 (the first layout) */
#define SPOOR_CALLS_LAYOUT_ADDRESS 1u /* its address: ring + index * record size */

/* format bits 8-15: optional words after the two address words, in this order */
#define SPOOR_CALLS_HAS_TIME 0x01u    /* u32 timestamp (DWT CYCCNT, or SysTick VAL counting down) */
#define SPOOR_CALLS_HAS_CONTEXT 0x02u /* u32 context id (IPSR, or the thread hook's value) */
#define SPOOR_CALLS_TIME_SYSTICK 0x04u /* the timestamp is SysTick VAL (24 bits, counts down) */

/* flags */
#define SPOOR_CALLS_FLAG_READY 0x1u   /* spoor_calls_init() set the ring up */
#define SPOOR_CALLS_FLAG_ENABLED 0x2u /* spoor_calls_enable(true) */
#define SPOOR_CALLS_FLAG_ITM 0x4u     /* records also go to an ITM stimulus port */
#define SPOOR_CALLS_FLAG_FROZEN 0x8u  /* the fault handler stopped recording */

/* Record, (format & 0xFF) bytes, little-endian u32 words:
 *   +0 function: the entered function's address (this_fn) with bit 0 replaced by the kind:
 *      1 enter, 0 exit. (Thumb code addresses always have bit 0 set, so it carries nothing.)
 *   +4 call site: the return address into the caller (LR at the function's entry, bit 0 set),
 *      or an EXC_RETURN value (0xF0000000 and up) when the function is an exception handler.
 *      0 marks a slot never written (the ring is zeroed at init).
 *   +8 timestamp (SPOOR_CALLS_HAS_TIME), then the context id (SPOOR_CALLS_HAS_CONTEXT).
 * Slots are written in index order, wrapping at capacity. The slot next names (layout 1: the
 * slot at address next, index (next - ring) / record size; layout 0: index next): when it is
 * written (call site != 0) the ring has wrapped and that slot is the oldest record; otherwise
 * the records are the slots before it, from slot 0. */
#define SPOOR_CALLS_REC_FUNCTION 0u
#define SPOOR_CALLS_REC_SITE 4u
#define SPOOR_CALLS_REC_EXTRA 8u
#define SPOOR_CALLS_REC_SIZE 8u /* the default record: no timestamp, no context */
#define SPOOR_CALLS_KIND_ENTER 0x1u

#endif
