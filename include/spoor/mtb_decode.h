/* The Micro Trace Buffer (CoreSight MTB-M0+ and MTB-M33), host side: where the circular buffer
 * lies and which packet is the oldest (from the register block), the packets oldest first,
 * and the instructions executed between them. Sans-I/O: the caller reads the registers and the
 * buffer (from a crash dump, --mem images or a live target) and hands the bytes in.
 *
 * The packet format (CoreSight MTB-M33 and MTB-M0+ TRMs, "Trace packet format"; KL27 reference
 * manual 43.3.1): two little-endian words per packet, the source word at the even word, the
 * destination word at the odd word. Source bits[31:1] and the A-bit in bit 0 (1: the PC changed
 * because of an exception or in Debug state; the source is then the exception's preferred
 * return address); destination bits[31:1] and the S-bit in bit 0 (1: the first packet after
 * tracing started). An exception return writes two packets: (return instruction -> EXC_RETURN,
 * A=0), then (EXC_RETURN -> where execution continues, A=1). docs/mtb.md has the details. */
#ifndef SPOOR_MTB_DECODE_H
#define SPOOR_MTB_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/cortexm_facts.h"
#include "spoor/dump.h"
#include "spoor/error.h"
#include "spoor/gdb_rsp.h"
#include "spoor/memory.h"
#include "spoor/read.h"
#include "spoor/snapshot.h"

/* The MTB-M33's register block (Cortex-M33 private peripheral bus); MTB-M0+ blocks sit
 * wherever the vendor put them. */
#define SPOOR_MTB_M33_REGISTERS 0xE0043000u
/* The largest buffer spoor accepts (MASTER.MASK 20): real MTBs have at most a few KiB. */
#define SPOOR_MTB_MAX_SIZE (16u << 20)

/* The registers that say where the trace is: offsets 0x0, 0x4, 0x8, 0xC of the block. */
typedef struct spoor_mtb_regs {
    uint32_t position; /* POINTER [31:3] (byte offset of the next write), WRAP [2] */
    uint32_t master;   /* EN [31], ..., MASK [4:0]: the buffer holds 2^(MASK+4) bytes */
    uint32_t flow;     /* WATERMARK [31:3], AUTOHALT [1], AUTOSTOP [0] */
    uint32_t base;     /* the SRAM address POSITION counts from */
} spoor_mtb_regs;

/* The circular buffer the registers describe. */
typedef struct spoor_mtb_layout {
    uint32_t address; /* target address of the buffer's first byte: BASE + the POINTER bits
                         above MASK */
    uint32_t size;    /* 2^(MASK+4) bytes */
    uint32_t write;   /* offset of the next packet to be written (the oldest when wrapped) */
    bool wrapped;     /* POSITION.WRAP: every slot holds a packet */
    bool enabled;     /* MASTER.EN at the time the registers were read */
} spoor_mtb_layout;

/* The layout of the registers' buffer. False with the error set for a BASE that is not 8-byte
 * aligned or a MASK beyond SPOOR_MTB_MAX_SIZE; an address range past 4 GiB. */
bool spoor_mtb_layout_get(const spoor_mtb_regs *regs, spoor_mtb_layout *out);

typedef enum spoor_mtb_kind {
    SPOOR_MTB_BRANCH,           /* A=0, an ordinary change of flow */
    SPOOR_MTB_EXCEPTION_ENTRY,  /* A=1: source is the preferred return address */
    SPOOR_MTB_EXCEPTION_RETURN, /* to EXC_RETURN (A=0), or from EXC_RETURN (A=1) */
} spoor_mtb_kind;

typedef struct spoor_mtb_packet {
    uint32_t src, dst; /* bit 0 cleared (it holds the A- and S-bits) */
    bool a, s;
    spoor_mtb_kind kind;
    uint32_t offset; /* byte offset of the packet in the buffer */
} spoor_mtb_packet;

/* "branch", "exception_entry", "exception_return". */
const char *spoor_mtb_kind_name(spoor_mtb_kind kind);

/* True for the EXC_RETURN values (spoor/cortexm_facts.h); bit 0 of addr, which the packet
 * uses for the A- or S-bit, does not matter. */
static inline bool spoor_mtb_is_exc_return(uint32_t addr)
{
    return spoor_cortexm_is_exc_return(addr);
}

/* Decodes the buffer of layout (bytes[0] is the byte at layout->address, len at least
 * layout->size) into out, oldest first: from the write offset round to it when wrapped, from
 * offset 0 up to it otherwise. out must hold layout->size / 8 packets; *count gets how many
 * were written. False with the error set when len is smaller than the buffer, when the trace
 * is empty (POSITION 0, not wrapped) or when every packet word is zero (the MTB never wrote
 * there). */
bool spoor_mtb_decode(const spoor_mtb_layout *layout, const uint8_t *bytes, size_t len,
                      spoor_mtb_packet *out, size_t *count);

/* ---- the trace in target memory ------------------------------------------------------------
 * The register block and the buffer it describes, from a crash dump's MTB record or read from
 * a memory view (--mem images, a live target). input names the input at the start of every
 * error. */

typedef struct spoor_mtb_trace {
    spoor_mtb_regs regs;
    spoor_mtb_layout layout;
    const uint8_t *bytes; /* layout.size bytes: the buffer, layout.address first */
    uint8_t *owned;       /* bytes when read from memory (spoor_mtb_trace_free) */
} spoor_mtb_trace;

/* The MTB as a dump's MTB record holds it (the fault handler froze it). false with the error
 * set: "INPUT: no MTB record in the dump (...)", the layout's errors, "INPUT: the MTB registers
 * place the N-byte buffer at 0x..., the dump's MTB record holds 0x...0x...". */
bool spoor_mtb_from_dump(const spoor_dump *dump, const char *input, spoor_mtb_trace *out);

/* Stopping a live MTB while it is read: MASTER as found, and whether it was written. */
typedef struct spoor_mtb_frozen {
    uint32_t master_at; /* the register block + 4 */
    uint32_t master;    /* MASTER as found: the trace is decoded with it */
    bool written;       /* EN or TSTARTEN was set and MASTER was written with them clear */
} spoor_mtb_frozen;

/* Reads the register block at regs_addr, then the buffer it describes, through mem; with
 * frozen (spoor_mtb_freeze() before) MASTER is taken as found before the stop. Free out with
 * spoor_mtb_trace_free (also after a failure). false with the error set: "INPUT: cannot read
 * the MTB registers at 0x...", the layout's errors, "INPUT: cannot read the N-byte trace
 * buffer at 0x... (MTB_BASE ..., MTB_POSITION ...; give it with --mem ADDR:FILE)"; when a
 * live target's connection broke, "INPUT: cannot read the trace buffer at 0x...: WHY". */
bool spoor_mtb_read(spoor_mem *mem, uint32_t regs_addr, const spoor_mtb_frozen *frozen,
                    const char *input, spoor_mtb_trace *out);
void spoor_mtb_trace_free(spoor_mtb_trace *t);

/* The MTB of a snapshot: its dump's MTB record when the dump has one (spoor_mtb_from_dump),
 * else the register block at regs_addr and its buffer in the snapshot's memory (spoor_mtb_read,
 * frozen as there). *from: "dump" or "memory". Free out with spoor_mtb_trace_free. */
bool spoor_mtb_open(const spoor_snapshot *snap, uint32_t regs_addr, const spoor_mtb_frozen *frozen,
                    spoor_mtb_trace *out, const char **from);

/* Stops the MTB of a live target: reads MASTER (regs_addr + 4) and writes it back with EN [31]
 * and TSTARTEN [5] clear (so that a DWT match cannot start it again; a stopped MTB needs no
 * write), then forgets what mem cached. false with the error set: "INPUT: --freeze: cannot
 * read MTB_MASTER at 0x...: ..." (nothing written), "INPUT: --freeze: cannot stop the MTB: ..."
 * (the target refused the write: the MTB was left as found), "INPUT: --freeze: the stop
 * (MTB_MASTER 0x... -> 0x...) got no answer: the MTB may be stopped, and cannot be restarted:
 * ..." (the connection broke after the write was sent). */
bool spoor_mtb_freeze(spoor_mem *mem, uint32_t regs_addr, const char *input, spoor_mtb_frozen *out);

/* Writes MASTER back as spoor_mtb_freeze() found it (nothing when it wrote nothing). false with
 * the error set: "INPUT: --freeze: cannot write MTB_MASTER 0x... back, the MTB stays stopped:
 * ...". */
bool spoor_mtb_thaw(spoor_mem *mem, const spoor_mtb_frozen *frozen, const char *input);

/* ---- the instructions between packets -------------------------------------------------- */

typedef enum spoor_mtb_step_kind {
    SPOOR_MTB_STEP_INSN,   /* an instruction executed (pc, size) */
    SPOOR_MTB_STEP_PACKET, /* the packet after the instructions before it (packet) */
    SPOOR_MTB_STEP_GAP,    /* the instructions from the previous destination to this source
                              are unknown: code not readable, or the source lies before the
                              destination or too far after it (pc: the destination) */
} spoor_mtb_step_kind;

typedef struct spoor_mtb_step {
    spoor_mtb_step_kind kind;
    uint32_t pc;
    unsigned size;                  /* 2 or 4 (SPOOR_MTB_STEP_INSN) */
    const uint8_t *code;            /* the instruction's bytes (SPOOR_MTB_STEP_INSN) */
    const spoor_mtb_packet *packet; /* SPOOR_MTB_STEP_PACKET */
    const char *why;                /* SPOOR_MTB_STEP_GAP */
} spoor_mtb_step;

/* Calls fn for every step of the flow, oldest first: for each packet after the first, the
 * instructions from the previous packet's destination up to its source (the source included
 * for a branch, excluded for an exception entry, whose source is the instruction that did not
 * run yet), then the packet itself. The first packet is reported alone (what ran before it was
 * overwritten); nothing is reported after the last destination. Code is read through read
 * (ctx). A run longer than max_run bytes (0: 64 KiB) is a gap. Stops early when fn returns
 * false; returns false then. */
typedef bool (*spoor_mtb_step_fn)(void *ctx, const spoor_mtb_step *step);
bool spoor_mtb_flow(const spoor_mtb_packet *packets, size_t count, spoor_read_fn read,
                    void *read_ctx, uint32_t max_run, spoor_mtb_step_fn fn, void *ctx);

/* ---- the flow as GDB branch trace -------------------------------------------------------
 * The history that led to a stop, as GDB's Branch Trace Store blocks (spoor/gdb_rsp.h), built
 * from the flow above: each block runs from a packet's destination to the next packet's source
 * (the branch instruction itself; for an exception entry, the instruction before the preferred
 * return address), Thumb bit clear. The window ends at the stop: at the newest exception entry
 * whose preferred return address is the stop pc (a fault: the fault handler's own branches
 * after it are not the stopped code's history), else after the newest packet, the last block
 * then running on to the stop pc. Where the flow does not know what ran (a wrapped buffer's
 * lost start, tracing restarted, code not readable, a stop pc no straight run reaches) the
 * blocks hold a gap, never invented instructions. */
typedef struct spoor_mtb_btrace {
    spoor_rsp_block *blocks; /* oldest first; the last one ends at the stop pc */
    size_t count;
    size_t gaps;    /* gap blocks among them */
    size_t packets; /* packets in the window (the rest came after the stop's exception entry) */
    size_t insns;   /* instructions in the history (the blocks', without the stop pc's) */
    bool at_entry;  /* the window ends at an exception entry at the stop pc */
} spoor_mtb_btrace;

/* The blocks of packets[0..count) (oldest first, as spoor_mtb_decode gives them; wrapped: the
 * buffer had wrapped, what ran before the oldest packet is a gap) up to stop_pc, code read
 * through read (ctx). count 0 (an empty MTB) gives the stop pc's block alone. False only out of
 * memory (the error set); free out with spoor_mtb_btrace_free. */
bool spoor_mtb_btrace_build(const spoor_mtb_packet *packets, size_t count, bool wrapped,
                            uint32_t stop_pc, spoor_read_fn read, void *read_ctx,
                            spoor_mtb_btrace *out);
void spoor_mtb_btrace_free(spoor_mtb_btrace *bt);

/* The trace's packets decoded (spoor_mtb_decode), then built as above. An empty MTB (nothing
 * written since it started) gives the stop pc's block alone. False with the error set for a
 * damaged trace (the decoder's errors) and out of memory. */
bool spoor_mtb_btrace_of(const spoor_mtb_trace *trace, uint32_t stop_pc, spoor_read_fn read,
                         void *read_ctx, spoor_mtb_btrace *out);

#endif
