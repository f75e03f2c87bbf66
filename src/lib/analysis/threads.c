/* Every RTOS thread of a snapshot with its registers, state, backtrace and stack use
 * (spoor/analysis.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/analysis.h"

#define SNAPSHOT_FRAMES 128 /* the snapshot's own walk, when the caller gives none */

bool spoor_thread_root_reached(const spoor_thread *t)
{
    return t->stop == SPOOR_STOP_THREAD_ROOT || t->stop == SPOOR_STOP_TASK_ENTRY;
}

bool spoor_thread_has_root(const spoor_threads *ts, const spoor_thread *t)
{
    return t->nframes && !t->unlisted && ts->rtos &&
           spoor_rtos_kind_of(ts->rtos) != SPOOR_RTOS_SCHED;
}

const char *spoor_thread_stop_name(const spoor_thread *t)
{
    return t->past_top ? "stack top" : spoor_unwind_stop_name(t->stop);
}

/* A walk of a thread that ended elsewhere than its root may have gone past the top of the
 * thread's stack into memory above it: those frames are not the thread's and are dropped. */
static void cut_at_stack_top(spoor_thread *v, const spoor_rtos *r, const spoor_snapshot *snap)
{
    spoor_stack_usage u;
    if (spoor_thread_root_reached(v) || !v->nframes ||
        !spoor_stack_usage_thread(r, spoor_mem_reader, snap->mem, &v->info, false, 0, false, &u) ||
        !u.has_high)
        return;
    for (size_t i = 0; i < v->nframes; i++)
        if (v->frames[i].kind == SPOOR_FRAME_CALL && v->frames[i].sp > u.high) {
            v->nframes = i;
            v->past_top = true;
            return;
        }
}

/* The snapshot's backtrace as the current thread's: at most SPOOR_THREAD_MAX_FRAMES. */
static void take_current(spoor_thread *v, const spoor_frame *cur, size_t ncur,
                         spoor_unwind_stop cur_stop)
{
    v->nframes = ncur < SPOOR_THREAD_MAX_FRAMES ? ncur : SPOOR_THREAD_MAX_FRAMES;
    memcpy(v->frames, cur, v->nframes * sizeof *cur);
    v->stop = ncur > SPOOR_THREAD_MAX_FRAMES ? SPOOR_STOP_FRAME_LIMIT : cur_stop;
}

/* A thread's SP for its stack use: the snapshot's for the running thread (PSP, or SP in thread
 * mode), the saved one for the others. */
static void stack_of(spoor_thread *v, const spoor_threads *ts, const spoor_snapshot *snap)
{
    const spoor_regs *r = &snap->regs;
    bool has_sp = v->info.has_sp;
    uint32_t sp = v->info.sp;
    if (v->current) {
        has_sp = (r->have & SPOOR_HAVE_BANKED_SP) || (r->xpsr & 0x1FFu) == 0;
        sp = (r->have & SPOOR_HAVE_BANKED_SP) ? r->psp : r->r[13];
    }
    spoor_stack_usage_thread(ts->rtos, spoor_mem_reader, snap->mem, &v->info, has_sp, sp, ts->fills,
                             &v->stack);
}

static void read_one(spoor_threads *ts, spoor_thread *v, const spoor_rtos_thread_ref *ref,
                     const spoor_elf *elf, const spoor_snapshot *snap, unsigned what,
                     const spoor_frame *cur, size_t ncur, spoor_unwind_stop cur_stop)
{
    v->unlisted = (ref->state == SPOOR_THREAD_UNLISTED);
    v->current = v->unlisted || (ref->state == SPOOR_THREAD_RUNNING);
    v->read_ok = !v->unlisted &&
                 spoor_rtos_read_thread(ts->rtos, spoor_mem_reader, snap->mem, ref->tcb, &v->info);
    if (!v->unlisted && !v->read_ok) /* before the state's reads can set another error */
        snprintf(v->error, sizeof v->error, "%s", spoor_last_error());
    v->tcb = v->info.tcb = ref->tcb;
    spoor_rtos_state_of(ts->rtos, spoor_mem_reader, snap->mem, ref, &v->info, &v->state);
    if (v->unlisted) { /* what runs is the CPU's: its registers and their backtrace */
        v->has_regs = true;
        v->regs = snap->regs;
        if (what & SPOOR_THREADS_FRAMES)
            take_current(v, cur, ncur, cur_stop);
        return;
    }
    if (!v->read_ok)
        return;
    if ((what & SPOOR_THREADS_STACKS) && !ts->fills) /* as spoor_stack_usage_rtos_fills */
        ts->fills =
            spoor_stack_usage_thread_filled(ts->rtos, spoor_mem_reader, snap->mem, &v->info);
    if (v->current) {
        v->has_regs = true;
        v->regs = snap->regs;
        if (what & SPOOR_THREADS_FRAMES) {
            take_current(v, cur, ncur, cur_stop);
            cut_at_stack_top(v, ts->rtos, snap);
        }
        return;
    }
    if (!spoor_rtos_saved_regs(ts->rtos, spoor_mem_reader, snap->mem, &v->info, &v->regs)) {
        snprintf(v->error, sizeof v->error, "%s", spoor_last_error());
        return;
    }
    v->has_regs = true;
    if (what & SPOOR_THREADS_FRAMES) {
        v->nframes = spoor_unwind(elf, &v->regs, spoor_mem_reader, snap->mem, NULL, v->frames,
                                  SPOOR_THREAD_MAX_FRAMES, &v->stop);
        cut_at_stack_top(v, ts->rtos, snap);
    }
}

spoor_threads *spoor_threads_read(const spoor_elf *elf, const spoor_snapshot *snap, unsigned what,
                                  const spoor_frame *cur, size_t ncur, spoor_unwind_stop cur_stop)
{
    spoor_threads *ts = calloc(1, sizeof *ts);
    spoor_rtos_thread_ref *refs = calloc(SPOOR_THREADS_MAX, sizeof *refs);
    spoor_frame *own = NULL;
    if (!ts || !refs)
        goto out_of_memory;
    ts->rtos = spoor_rtos_open(elf, "auto");
    if (!ts->rtos) {
        snprintf(ts->error, sizeof ts->error, "%s", spoor_last_error());
        free(refs);
        return ts;
    }
    if (!cur && (what & SPOOR_THREADS_FRAMES)) {
        if (!(own = calloc(SNAPSHOT_FRAMES, sizeof *own)))
            goto out_of_memory;
        ncur = spoor_unwind(elf, &snap->regs, spoor_mem_reader, snap->mem, NULL, own,
                            SNAPSHOT_FRAMES, &cur_stop);
        cur = own;
    }
    size_t n = spoor_rtos_threads(ts->rtos, spoor_mem_reader, snap->mem, refs, SPOOR_THREADS_MAX,
                                  &ts->walk);
    if (!(ts->thread = calloc(n ? n : 1, sizeof *ts->thread)))
        goto out_of_memory;
    for (size_t i = 0; i < n; i++)
        read_one(ts, &ts->thread[ts->count++], &refs[i], elf, snap, what, cur, ncur, cur_stop);
    if (what & SPOOR_THREADS_STACKS) /* once fills is known for them all */
        for (size_t i = 0; i < ts->count; i++)
            if (ts->thread[i].read_ok)
                stack_of(&ts->thread[i], ts, snap);
    free(own);
    free(refs);
    return ts;
out_of_memory:
    free(own);
    free(refs);
    spoor_threads_free(ts);
    spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    return NULL;
}

void spoor_threads_free(spoor_threads *ts)
{
    if (!ts)
        return;
    free(ts->thread);
    spoor_rtos_close(ts->rtos);
    free(ts);
}
