/* A stopped target as spoor sees it: registers, fault status and a view of its memory, from
 * one of the inputs every command that reads target memory takes:
 *   - a crash dump written by the target library (DUMP),
 *   - raw debugger output: --regs regs.json and --mem ADDR:FILE images,
 *   - a live target behind a GDB server (--gdb HOST:PORT), with --mem images on top if given,
 *   - memory only: a live target behind OpenOCD's telnet or Tcl RPC server, and for a
 *     memory-only snapshot any of these together (a DUMP, --mem images, one live target).
 * The memory view stacks, first match wins: the dump's regions, then the images, then the ELF's
 * read-only contents, and last the live target (it can answer any address). */
#ifndef SPOOR_SNAPSHOT_H
#define SPOOR_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump.h"
#include "spoor/dump_formats.h"
#include "spoor/elf.h"
#include "spoor/gdb_remote.h"
#include "spoor/memory.h"
#include "spoor/openocd.h"
#include "spoor/regs.h"

typedef struct spoor_snapshot_source {
    const char *dump_path; /* a crash dump, or NULL */
    const char *regs_path; /* regs.json, or NULL */
    const char *gdb;       /* "HOST:PORT" of a GDB server, or NULL */
    const spoor_raw_memory *mems;
    size_t nmems;
    unsigned gdb_timeout_ms; /* the live target's (GDB server's or OpenOCD's) timeout; 0: 5000 */
    /* A memory-only snapshot, for a caller that reads target memory and needs no registers
     * (a trace buffer, a ring): --mem images alone need no regs.json, a dump no REGISTERS
     * record, and a live target's registers are not read. The snapshot's registers are then
     * zero and its fault status unknown unless a dump holds them. */
    bool memory_only;
    /* The DUMP's format (spoor/dump_formats.h): 0, SPOOR_DUMP_FORMAT_AUTO, finds it from the
     * content. */
    spoor_dump_format format;
    /* OpenOCD's telnet server "[HOST:]PORT" (4444) or its Tcl RPC server "tcl:[HOST:]PORT"
     * (6666), or NULL: a live memory layer read while the target runs (spoor/openocd.h). Memory
     * only: no registers are read over it. */
    const char *openocd;
} spoor_snapshot_source;

/* Where a snapshot's fault status came from (spoor_fault_source_name: "dump", "registers
 * file", "memory (System Control Space)", "live target (System Control Space)"). */
typedef enum spoor_fault_source {
    SPOOR_FAULT_FROM_NONE,     /* no fault status known */
    SPOOR_FAULT_FROM_DUMP,     /* the dump's fault record */
    SPOOR_FAULT_FROM_REGS,     /* the registers file (--regs) */
    SPOOR_FAULT_FROM_MEMORY,   /* a memory image that covers the System Control Space */
    SPOOR_FAULT_FROM_LIVE_SCS, /* a live target's System Control Space */
} spoor_fault_source;

/* The words for a fault source; NULL for SPOOR_FAULT_FROM_NONE. */
const char *spoor_fault_source_name(spoor_fault_source from);

typedef struct spoor_snapshot {
    spoor_regs regs;
    spoor_fault_status fault;      /* valid == 0: no fault status known */
    spoor_fault_source fault_from; /* where the fault status came from */
    /* The exception the fault handler ran for (3 HardFault .. 7 SecureFault), from the dump's
     * reason or the IPSR of a state taken inside a fault handler; -1 unknown. */
    int exception;
    spoor_dump *dump; /* the crash dump, or the dump assembled from --regs/--mem; NULL live */
    spoor_gdb *gdb;   /* the live connection, or NULL */
    spoor_mem *mem;
    /* Register groups the input did not give, e.g. "msp/psp/control" ("" when none). */
    char missing[64];
    const char *input; /* names the input for messages: the DUMP path, the regs path, HOST:PORT,
                          "--mem" */
    bool memory_only;  /* opened with spoor_snapshot_source.memory_only */
    spoor_openocd *openocd; /* the live OpenOCD connection, or NULL */
} spoor_snapshot;

/* Opens the input (exactly one of dump_path, regs_path/mems, gdb; --mem may be added to gdb;
 * memory_only: any of dump_path, mems and one of gdb and openocd). NULL with the error set
 * (spoor_last_error): "give either a DUMP, --regs/--mem or --gdb",
 * "FILE: no registers in the dump", and the errors of the readers. elf (borrowed) supplies
 * the read-only memory layer. */
spoor_snapshot *spoor_snapshot_open(const spoor_snapshot_source *src, const spoor_elf *elf);
void spoor_snapshot_close(spoor_snapshot *s);

/* The snapshot of a dump already parsed (spoor_dump_parse/spoor_dump_load), which it takes
 * over: freed by spoor_snapshot_close, or here when the open fails. name names the input in
 * messages (borrowed). NULL with the error set: "NAME: no registers in the dump". */
spoor_snapshot *spoor_snapshot_from_dump(spoor_dump *dump, const char *name, const spoor_elf *elf);

/* The signal a GDB stop reply reports for this state: 11 (SIGSEGV) for a fault, 5 (SIGTRAP)
 * otherwise. */
int spoor_snapshot_signal(const spoor_snapshot *s);

struct spoor_rsp_target;
/* The GDB remote server's target (spoor/gdb_rsp.h) for a snapshot: its registers, its memory
 * view, the signal for its stop reason; fp when the ELF is hard-float or the snapshot holds FP
 * state. */
void spoor_rsp_target_from_snapshot(struct spoor_rsp_target *t, const spoor_snapshot *s,
                                    bool hard_float);

#endif
