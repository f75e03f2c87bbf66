/* One crash report, shared by spoor crash and spoor report: the snapshot and the ELF opened,
 * the fault decoded, the backtrace unwound (crash_open.c), and the JSON document both commands
 * print (crash_json.c; the schema is docs/crash.md's), so the page and the CLI cannot disagree. */
#ifndef SPOOR_CRASH_REPORT_H
#define SPOOR_CRASH_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "crash_sections.h"
#include "outbuf.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/fault.h"
#include "spoor/snapshot.h"
#include "spoor/unwind.h"
#include "target_input.h"

#define MAX_FRAMES 128

struct crash {
    spoor_elf *elf;
    spoor_snapshot *snap;
    const spoor_dump *dump; /* snap->dump: NULL for a live target */
    int json, stats, threads;
    crash_sections_config sections; /* --branches, --calls, --mtb-regs */
    spoor_fault_info fault;
    spoor_frame frames[MAX_FRAMES];
    size_t nframes;
    spoor_unwind_stop stop;
    char build_id_warning[512];
    outbuf out;
};

/* Opens the ELF (elf_path) and the target input (in, with the positional arguments args), says
 * on stderr ("spoor CMD: WARNING: ...") what does not fit (build-id) or cannot be read in the
 * ELF, decodes the fault and unwinds the backtrace. Returns SPOOR_EXIT_OK, or SPOOR_EXIT_USAGE
 * after a one-line error; crash_close(c) in both cases. */
int crash_open(struct crash *c, const char *cmd, const char *elf_path, target_input *in,
               char **args, int nargs);
void crash_close(struct crash *c);

/* The JSON document of the report (docs/crash.md) onto c->out. */
void crash_print_json(struct crash *c);

/* The fault status registers in the order of spoor_fault_status.valid's bits. */
extern const char *const crash_fault_names[8];
uint32_t crash_fault_value(const spoor_fault_status *f, int i);

/* The task-exit hook a walk that stopped at a task's entry ended at (its name), else NULL. */
const char *crash_task_exit_hook(const struct crash *c);

#endif
