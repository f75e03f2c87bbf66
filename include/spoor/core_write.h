/* An ELF core file of a stopped target, for `gdb-multiarch FW.elf FW.core` (spoor core): a
 * PT_LOAD segment per memory range the snapshot holds, one NT_PRSTATUS note per thread (every
 * RTOS thread with its registers when asked; else the snapshot's registers alone), NT_ARM_VFP
 * for a thread whose FP registers are known, the target description GDB reads (NT_GDB_TDESC),
 * and spoor's own notes (docs/core.md): the registers GDB's core format has no place for (MSP,
 * PSP, CONTROL, EXC_RETURN), the fault status registers, the dump's reason and build-id, and
 * each thread's TCB and name. spoor reads the file back as a dump (spoor/dump_formats.h). Layer
 * analysis (docs/architecture.md). */
#ifndef SPOOR_CORE_WRITE_H
#define SPOOR_CORE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"
#include "spoor/snapshot.h"

/* A memory range to put in the core besides what the snapshot holds (read through the
 * snapshot's memory view: for a live target, its memory). */
typedef struct spoor_core_range {
    uint32_t addr, size;
} spoor_core_range;

typedef struct spoor_core_options {
    bool threads;                   /* one NT_PRSTATUS per RTOS thread (spoor_threads_read) */
    const spoor_core_range *ranges; /* more memory to read (live targets) */
    size_t nranges;
} spoor_core_options;

/* What a written core holds, and what was left out. */
typedef struct spoor_core_summary {
    size_t threads;        /* NT_PRSTATUS notes */
    size_t threads_left;   /* RTOS threads without registers, left out */
    size_t segments;       /* PT_LOAD segments */
    uint64_t bytes;        /* memory bytes in them */
    size_t ranges_missing; /* ranges asked for (or a live target's RAM) that could not be read */
    bool fp;               /* the target description has the FP registers */
    char note[240];        /* why --threads gave the snapshot's registers alone, or "" */
} spoor_core_summary;

/* Writes the core of snap (with elf: the RTOS's threads, a live target's RAM sections) to path:
 * into a file beside it first, renamed to path when complete, so that a failure leaves no
 * partial file. For a live target the memory is the ELF's RAM sections (spoor_elf_ram_ranges),
 * a window above each stack pointer, and options->ranges; for a dump or --regs/--mem, the memory
 * the input holds (and options->ranges). False with the error set; summary (may be NULL) says
 * what was written. */
bool spoor_core_write(const spoor_elf *elf, spoor_snapshot *snap, const spoor_core_options *options,
                      const char *path, spoor_core_summary *summary);

#endif
