/* spoor top's live thread catalogue: the threads behind the TCBs of the stream's switches, read
 * from target memory through the RTOS layer the first time each is current, and read again on a
 * running target at the end of each interval (spoor/top_session.h says what is read when). It
 * also owns the target's connection state: a connection that failed stops the session, said
 * once instead of a warning per thread. */
#ifndef SPOOR_TOP_CATALOGUE_H
#define SPOOR_TOP_CATALOGUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/top_session.h"

#define SPOOR_TOP_CATALOGUE_REFS 512

typedef void (*spoor_top_notice_fn)(void *ctx, spoor_top_notice notice, const char *text);

typedef struct spoor_top_catalogue {
    const spoor_elf *elf;
    const spoor_rtos *rtos; /* NULL: a thread is its TCB address */
    spoor_mem *mem;         /* NULL: no target memory, no TCB is read */
    spoor_gdb *gdb;         /* a live target behind a GDB server, or NULL */
    spoor_openocd *openocd; /* ... behind OpenOCD, or NULL */
    spoor_top *stats;       /* where the idle thread is marked */
    bool stack;             /* read each thread's stack use */
    bool let_run;           /* a running target behind the GDB server: resumed after each batch */
    bool idle_pending; /* let_run: the idle thread is read with the first thread (RAM set up) */
    bool idle_unknown; /* the idle thread could not be read */
    int fills;         /* stack: the RTOS fills its stacks (1), not (0), not asked yet (-1) */
    spoor_top_thread_info *threads;
    size_t nthreads;
    spoor_top_thread_info unknown;                        /* a TCB beyond the table */
    spoor_rtos_thread_ref refs[SPOOR_TOP_CATALOGUE_REFS]; /* the lists, walked once per refresh */
    char lost[200]; /* why the live target's connection was lost; "" while it works */
    spoor_top_notice_fn notice;
    void *ctx;
} spoor_top_catalogue;

/* The catalogue of cfg's target; false when out of memory (error set). */
bool spoor_top_catalogue_init(spoor_top_catalogue *c, const spoor_top_session_config *cfg,
                              spoor_top *stats, spoor_top_notice_fn notice, void *ctx);
void spoor_top_catalogue_free(spoor_top_catalogue *c);

/* true when the live target's connection has failed (c->lost says why). */
bool spoor_top_catalogue_lost(spoor_top_catalogue *c);
/* A running target: resumed (each read halted it). */
void spoor_top_catalogue_let_run(spoor_top_catalogue *c);
/* Reads the RTOS's idle thread and marks it in the statistics; when it cannot be read, the
 * notice SPOOR_TOP_NOTICE_IDLE_UNKNOWN (its time then counts as busy). */
void spoor_top_catalogue_read_idle(spoor_top_catalogue *c);
/* The thread of a TCB: read the first time it is asked for. */
const spoor_top_thread_info *spoor_top_catalogue_thread(spoor_top_catalogue *c, uint32_t tcb);
/* A live target: the threads of report r read again (those that ran in full, the others'
 * states and priorities). */
void spoor_top_catalogue_refresh(spoor_top_catalogue *c, const spoor_top_report *r);

#endif
