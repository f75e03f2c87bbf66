/* What a stopped target did, as objects: every RTOS thread of a snapshot with its registers,
 * state, backtrace and stack use (spoor_threads_read: spoor crash --threads, spoor report, spoor
 * gdbserver --threads, any program that walks threads to registers, such as an ELF core writer),
 * and the crash report of a snapshot and its ELF (spoor_crash_open: the fault, the backtrace, the
 * threads, the MTB's last branches, the call recorder's last calls, stack use) with the one
 * writer of its JSON (docs/crash.md's schema) and of spoor report's page of it (spoor_crash_html,
 * docs/report.md). Layer analysis (docs/architecture.md): above
 * rtos, unwind, flow and snapshot. */
#ifndef SPOOR_ANALYSIS_H
#define SPOOR_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/calls_decode.h"
#include "spoor/elf.h"
#include "spoor/fault.h"
#include "spoor/mtb_decode.h"
#include "spoor/regs.h"
#include "spoor/rtos.h"
#include "spoor/snapshot.h"
#include "spoor/stack_usage.h"
#include "spoor/unwind.h"

#define SPOOR_THREADS_MAX 256      /* threads read; more are counted in walk.not_shown */
#define SPOOR_THREAD_MAX_FRAMES 64 /* frames of a thread's backtrace */

/* One thread the RTOS knows. */
typedef struct spoor_thread {
    uint32_t tcb;
    bool current;  /* the thread that ran: its registers are the snapshot's */
    bool unlisted; /* the current-thread pointer at a TCB on no list: not read as a thread (its
                      registers and backtrace are the CPU's) */
    bool read_ok;  /* the TCB was read: info holds its name, priority, stack, ... */
    spoor_rtos_thread info;
    spoor_rtos_state state; /* in the common vocabulary and the kernel's words */
    bool has_regs;          /* regs: the snapshot's (current), else the context the RTOS saved */
    spoor_regs regs;
    /* SPOOR_THREADS_FRAMES: the backtrace from regs, cut at the thread's stack top when the
     * walk went past it (past_top) */
    spoor_frame frames[SPOOR_THREAD_MAX_FRAMES];
    size_t nframes;
    spoor_unwind_stop stop;
    bool past_top;
    /* SPOOR_THREADS_STACKS, read_ok: the stack's use (SP: the snapshot's for the current one) */
    spoor_stack_usage stack;
    char error[160]; /* why there are no registers (or no backtrace), or "" */
} spoor_thread;

/* Every thread of a snapshot, in the order the RTOS lists give them (the current one first). */
typedef struct spoor_threads {
    spoor_rtos *rtos; /* NULL: the ELF has no RTOS spoor reads (error says why), no threads */
    char error[200];
    spoor_thread *thread;
    size_t count;
    spoor_rtos_walk walk; /* what the lists did not give (threads not shown, lists cut) */
    bool fills;           /* the build fills its stacks (spoor_stack_usage_rtos_fills) */
} spoor_threads;

/* What spoor_threads_read reads besides the registers and the state. */
enum { SPOOR_THREADS_FRAMES = 1u, SPOOR_THREADS_STACKS = 2u };

/* The threads of the RTOS elf has, in snap's memory: each with its state and registers, and what
 * `what` asks for (SPOOR_THREADS_FRAMES, SPOOR_THREADS_STACKS; 0: registers and states only, as
 * a GDB server or a core writer needs them). current, ncurrent, current_stop: the backtrace of
 * the snapshot's registers when the caller has it (a crash report's), the current thread's
 * (at most SPOOR_THREAD_MAX_FRAMES of it); current NULL: unwound here when frames are asked for
 * (current_stop then unused). NULL only when memory runs out (the error set); an ELF without an
 * RTOS spoor reads gives threads with rtos NULL and error set. spoor_threads_free releases it. */
spoor_threads *spoor_threads_read(const spoor_elf *elf, const spoor_snapshot *snap, unsigned what,
                                  const spoor_frame *current, size_t ncurrent,
                                  spoor_unwind_stop current_stop);
void spoor_threads_free(spoor_threads *ts);

/* Whether the thread's walk ended where the thread started: its root function or its task
 * function (with the task-exit hook as its return address). */
bool spoor_thread_root_reached(const spoor_thread *t);
/* Whether root_reached says something: a backtrace of a listed thread of an RTOS with a root
 * (the example scheduler has none). */
bool spoor_thread_has_root(const spoor_threads *ts, const spoor_thread *t);
/* Why the thread's walk stopped, in words: "stack top" when it was cut there, else
 * spoor_unwind_stop_name. */
const char *spoor_thread_stop_name(const spoor_thread *t);

/* ---- the crash report ---------------------------------------------------------------------- */

#define SPOOR_CRASH_MAX_FRAMES 128 /* frames of the snapshot's backtrace */

/* What the report holds besides the fault, the registers, the backtrace and the main stack. */
typedef struct spoor_crash_options {
    bool threads;        /* every RTOS thread (spoor crash --threads) */
    unsigned nbranches;  /* the newest N branches of the MTB (0: no branches section) */
    unsigned ncalls;     /* the newest N records of the call ring (0: no calls section) */
    uint32_t mtb_regs;   /* the MTB register block read when the input has no MTB record */
    bool mtb_regs_given; /* an MTB is at mtb_regs: its section says why it cannot be read */
} spoor_crash_options;

#define SPOOR_CRASH_OPTIONS_DEFAULT                                                                \
    {                                                                                              \
        false, 16, 16, SPOOR_MTB_M33_REGISTERS, false                                              \
    }

/* The MTB's branches of a report (spoor_crash_branches). */
typedef struct spoor_crash_mtb {
    bool present;    /* the input has an MTB (a record, or a register block that was set up) */
    char error[300]; /* it could not be read or decoded: why ("" when it was) */
    spoor_mtb_packet *packets;
    size_t count;     /* decoded, oldest first */
    bool wrapped;     /* older packets were overwritten */
    const char *from; /* "dump" or "memory" */
} spoor_crash_mtb;

/* The call recorder's ring of a report (spoor_crash_calls). */
typedef struct spoor_crash_ring {
    bool present;    /* the ELF has the recorder, and it ran (or may have) */
    char error[300]; /* the ring could not be read: why ("" when it was) */
    spoor_calls_info info;
    spoor_call_trace trace;
} spoor_crash_ring;

typedef struct spoor_crash_lazy spoor_crash_lazy;

/* A crash report: the snapshot and the ELF (borrowed: they outlive it), the fault decoded, the
 * backtrace unwound; the rest read on first use by the functions below, in the order a report
 * prints it. */
typedef struct spoor_crash {
    const spoor_elf *elf;
    spoor_snapshot *snap;
    const spoor_dump *dump; /* snap->dump: NULL for a live target or raw registers */
    spoor_crash_options options;
    spoor_fault_info fault;
    spoor_frame frames[SPOOR_CRASH_MAX_FRAMES];
    size_t nframes;
    spoor_unwind_stop stop;
    char build_id_warning[512]; /* the dump names another build: the warning; else "" */
    spoor_crash_lazy *lazy;
} spoor_crash;

/* Opens the report of snap and elf (options NULL: SPOOR_CRASH_OPTIONS_DEFAULT): checks the
 * dump's build-id against the ELF, decodes the fault, unwinds the snapshot's registers. NULL with
 * the error set only when memory runs out. The JSON's "warnings" list the parts of the ELF that
 * could not be read while it was written (spoor_elf_warnings). */
spoor_crash *spoor_crash_open(const spoor_elf *elf, spoor_snapshot *snap,
                              const spoor_crash_options *options);
void spoor_crash_close(spoor_crash *c);

/* The task-exit hook a walk that stopped at a task's entry ended at (its name, "??" when no
 * symbol names it), else NULL. */
const char *spoor_crash_task_exit_hook(const spoor_crash *c);
/* The fault status registers in the order of spoor_fault_status.valid's bits: "CFSR", "HFSR",
 * "DFSR", "MMFAR", "BFAR", "AFSR", "SFSR", "SFAR" (i 0 to 7), and the value of one. */
const char *spoor_crash_fault_register(int i);
uint32_t spoor_crash_fault_value(const spoor_fault_status *f, int i);

/* The main stack's use; *no_sp: why its SP is not known when the input lacks MSP, else NULL. */
const spoor_stack_usage *spoor_crash_main_stack(spoor_crash *c, const char **no_sp);
/* The threads (read with frames and stacks, the current one's backtrace the report's), NULL
 * when memory runs out. */
const spoor_threads *spoor_crash_threads(spoor_crash *c);
/* The MTB of the input (spoor_mtb_open: the dump's record, else options.mtb_regs in memory);
 * present false when it has none. */
const spoor_crash_mtb *spoor_crash_branches(spoor_crash *c);
/* The call recorder's ring; present false when the ELF has no recorder or it never ran. */
const spoor_crash_ring *spoor_crash_calls(spoor_crash *c);

/* The JSON document of the report (docs/crash.md), newline-terminated, in memory the caller
 * frees (*len: its length); NULL with the error set when memory runs out. */
char *spoor_crash_json(spoor_crash *c, size_t *len);

/* ---- the report page ------------------------------------------------------------------------ */

/* What spoor report's page takes besides the report. */
typedef struct spoor_report_options {
    /* How the page names the input (spoor report: the DUMP as given, "--regs FILE [--mem ...]",
     * "--gdb HOST:PORT"); NULL: none. */
    const char *input;
    /* Folders to look for the source files DWARF names in (--source-dir), after the name as
     * DWARF gives it, joined with each DW_AT_comp_dir and as it is; in each, the name as it is
     * and with its leading directories removed one by one. */
    const char *const *source_dirs;
    size_t nsource_dirs;
} spoor_report_options;

/* The page spoor report writes (docs/report.md): one self-contained HTML file holding the
 * report's JSON (spoor_crash_json), the source text around its lines and the disassembly around
 * its addresses, rendered by its own inline script (no network, no other files). options NULL:
 * no input named, no source folders. In memory the caller frees (*len: its length); NULL with
 * the error set when memory runs out or the live target's connection was lost while the report
 * was read. */
char *spoor_crash_html(spoor_crash *c, const spoor_report_options *options, size_t *len);
/* The same page of a report saved as JSON (spoor crash --json; report[0..report_len)) and the
 * ELF it was made with (spoor report --from-json). NULL with the error set: "not a spoor crash
 * --json report: byte N: ..." when the text is not one JSON object, or out of memory. */
char *spoor_crash_html_from_json(const spoor_elf *elf, const char *report, size_t report_len,
                                 const spoor_report_options *options, size_t *len);

#endif
