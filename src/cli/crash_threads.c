/* spoor crash --threads (crash_threads.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_frames.h"
#include "crash_stacks.h"
#include "crash_threads.h"
#include "spoor/error.h"
#include "spoor/rtos.h"
#include "spoor/stack_usage.h"

#define MAX_THREADS 256
#define MAX_FRAMES 64
#define MAX_INLINE 16

struct thread_view {
    spoor_rtos_thread t;
    bool read_ok;
    spoor_rtos_state st; /* the state, in the common vocabulary and the kernel's words */
    bool current;
    bool unlisted; /* the current-thread pointer at a TCB on no list: not read as a thread */
    spoor_frame frames[MAX_FRAMES];
    size_t nframes;
    spoor_unwind_stop stop;
    bool past_top; /* frames above the thread's stack top were dropped: the walk went past it */
    char why[160]; /* why there is no backtrace, or "" */
};

struct threads {
    spoor_rtos *rtos;
    char error[200];
    struct thread_view *v;
    size_t n;
    spoor_rtos_walk walk; /* what the lists did not give */
    bool fills;           /* the build fills its stacks (spoor_stack_usage_rtos_fills) */
};

/* Whether the walk ended where the thread started: its root function or its task function
 * (with the task-exit hook as its return address). */
static bool root_reached(spoor_unwind_stop stop)
{
    return stop == SPOOR_STOP_THREAD_ROOT || stop == SPOOR_STOP_TASK_ENTRY;
}

/* A walk of a thread that ended elsewhere than its root may have gone past the top of the
 * thread's stack into memory above it: those frames are not the thread's and are dropped. */
static void cut_at_stack_top(struct thread_view *v, const spoor_rtos *r, const spoor_snapshot *snap)
{
    spoor_stack_usage u;
    if (root_reached(v->stop) || !v->nframes ||
        !spoor_stack_usage_thread(r, spoor_mem_reader, snap->mem, &v->t, false, 0, false, &u) ||
        !u.has_high)
        return;
    for (size_t i = 0; i < v->nframes; i++)
        if (v->frames[i].kind == SPOOR_FRAME_CALL && v->frames[i].sp > u.high) {
            v->nframes = i;
            v->past_top = true;
            return;
        }
}

static const char *stop_text(const struct thread_view *v)
{
    return v->past_top ? "stack top" : spoor_unwind_stop_name(v->stop);
}

static void collect(struct threads *ts, const spoor_elf *elf, const spoor_snapshot *snap,
                    const spoor_frame *cur, size_t ncur, spoor_unwind_stop cur_stop)
{
    memset(ts, 0, sizeof *ts);
    ts->rtos = spoor_rtos_open(elf, "auto");
    if (!ts->rtos) {
        snprintf(ts->error, sizeof ts->error, "%s", spoor_last_error());
        return;
    }
    static spoor_rtos_thread_ref refs[MAX_THREADS];
    size_t n =
        spoor_rtos_threads(ts->rtos, spoor_mem_reader, snap->mem, refs, MAX_THREADS, &ts->walk);
    ts->v = calloc(n ? n : 1, sizeof *ts->v);
    if (!ts->v) {
        snprintf(ts->error, sizeof ts->error, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct thread_view *v = &ts->v[ts->n++];
        v->unlisted = refs[i].state == SPOOR_THREAD_UNLISTED;
        v->current = v->unlisted || refs[i].state == SPOOR_THREAD_RUNNING;
        v->read_ok = !v->unlisted && spoor_rtos_read_thread(ts->rtos, spoor_mem_reader, snap->mem,
                                                            refs[i].tcb, &v->t);
        v->t.tcb = refs[i].tcb;
        spoor_rtos_state_of(ts->rtos, spoor_mem_reader, snap->mem, &refs[i], &v->t, &v->st);
        if (v->unlisted) { /* what runs is the CPU's: its registers' backtrace */
            v->nframes = ncur < MAX_FRAMES ? ncur : MAX_FRAMES;
            memcpy(v->frames, cur, v->nframes * sizeof *cur);
            v->stop = ncur > MAX_FRAMES ? SPOOR_STOP_FRAME_LIMIT : cur_stop;
            continue;
        }
        if (!v->read_ok) {
            snprintf(v->why, sizeof v->why, "%s", spoor_last_error());
            continue;
        }
        if (!ts->fills) /* as spoor_stack_usage_rtos_fills, from the threads read here */
            ts->fills =
                spoor_stack_usage_thread_filled(ts->rtos, spoor_mem_reader, snap->mem, &v->t);
        if (v->current) { /* the registers of the snapshot */
            v->nframes = ncur < MAX_FRAMES ? ncur : MAX_FRAMES;
            memcpy(v->frames, cur, v->nframes * sizeof *cur);
            v->stop = ncur > MAX_FRAMES ? SPOOR_STOP_FRAME_LIMIT : cur_stop;
            cut_at_stack_top(v, ts->rtos, snap);
            continue;
        }
        spoor_regs regs;
        if (!spoor_rtos_saved_regs(ts->rtos, spoor_mem_reader, snap->mem, &v->t, &regs)) {
            snprintf(v->why, sizeof v->why, "%s", spoor_last_error());
            continue;
        }
        v->nframes = spoor_unwind(elf, &regs, spoor_mem_reader, snap->mem, NULL, v->frames,
                                  MAX_FRAMES, &v->stop);
        cut_at_stack_top(v, ts->rtos, snap);
    }
}

static void release(struct threads *ts)
{
    free(ts->v);
    spoor_rtos_close(ts->rtos);
}

static void text_frames(outbuf *o, const spoor_elf *elf, const spoor_rtos *r,
                        const struct thread_view *v)
{
    for (size_t i = 0; i < v->nframes; i++) {
        const spoor_frame *f = &v->frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            const char *name = spoor_exception_name(f->exception);
            ob_printf(o, "        <exception %d: %s>\n", f->exception, name ? name : "?");
            continue;
        }
        spoor_location loc[MAX_INLINE];
        size_t n = spoor_frame_symbolize(elf, f, loc, MAX_INLINE);
        for (size_t k = 0; k < n; k++) {
            if (k == 0)
                ob_printf(o, "    #%-2zu 0x%08x ", i, f->pc);
            else
                ob_printf(o, "        inlined in ");
            ob_text(o, loc[k].function ? loc[k].function : "??");
            if (k + 1 == n && loc[0].has_offset) /* the offset into the real function */
                ob_printf(o, "+0x%x", spoor_frame_function_offset(elf, f, &loc[0]));
            if (loc[k].file) {
                ob_str(o, " at ");
                ob_text(o, loc[k].file);
                ob_printf(o, ":%u", loc[k].line);
            }
            if (k == 0)
                ob_printf(o, "  [%s]", spoor_unwind_method_name(f->method));
            ob_char(o, '\n');
        }
    }
    if (!v->nframes)
        return;
    ob_printf(o, "    (stopped: %s", stop_text(v));
    if (!root_reached(v->stop) && !v->unlisted &&
        spoor_rtos_kind_of(r) != SPOOR_RTOS_SCHED) { /* the example scheduler has no root */
        const char *root = spoor_rtos_thread_root(r);
        ob_printf(o, "; the thread's root%s%s not reached", root ? " " : "", root ? root : "");
    }
    ob_str(o, ")\n");
}

void crash_threads_text(outbuf *o, const spoor_elf *elf, const spoor_snapshot *snap,
                        const spoor_frame *cur, size_t ncur, spoor_unwind_stop cur_stop)
{
    struct threads ts;
    collect(&ts, elf, snap, cur, ncur, cur_stop);
    if (!ts.rtos) {
        ob_printf(o, "\nthreads: none (%s)\n", ts.error);
        release(&ts);
        return;
    }
    ob_printf(o, "\nthreads (%s, %zu):\n", spoor_rtos_display_name(spoor_rtos_kind_of(ts.rtos)),
              ts.n);
    if (spoor_rtos_layout(ts.rtos))
        ob_printf(o, "  (states: %s)\n", spoor_rtos_layout(ts.rtos));
    for (size_t i = 0; i < ts.n; i++) {
        const struct thread_view *v = &ts.v[i];
        char state[200];
        spoor_rtos_state_text(&v->st, state, sizeof state);
        ob_printf(o, "%c 0x%08x ", v->current ? '*' : ' ', v->t.tcb);
        if (v->unlisted)
            ob_str(o, "(start-up or deleted: on no thread list)");
        else
            ob_str(o, v->t.name[0] ? v->t.name : "?");
        ob_str(o, "  ");
        ob_text(o, state); /* names a wait object after an ELF symbol */
        if (v->st.kernel[0] && !v->unlisted) {
            ob_str(o, " (");
            ob_text(o, v->st.kernel);
            ob_char(o, ')');
        }
        if (v->t.has_prio) {
            const char *pn = spoor_rtos_priority_name(ts.rtos, v->t.prio);
            ob_printf(o, "  prio %d%s%s", (int)v->t.prio, pn ? " " : "", pn ? pn : "");
        }
        ob_char(o, '\n');
        if (v->read_ok)
            crash_stacks_thread_text(o, ts.rtos, snap, &v->t, v->current, ts.fills);
        if (v->why[0])
            ob_printf(o, "    (no backtrace: %s)\n", v->why);
        text_frames(o, elf, ts.rtos, v);
    }
    if (ts.walk.not_shown)
        ob_printf(o, "  ... %zu more threads not shown\n", ts.walk.not_shown);
    if (ts.walk.lists_cut)
        ob_printf(o, "  (partial: %u thread list%s not read to the end; %s)\n", ts.walk.lists_cut,
                  ts.walk.lists_cut == 1 ? "" : "s", ts.walk.why);
    release(&ts);
}

void crash_threads_json(json_out *j, const spoor_elf *elf, const spoor_snapshot *snap,
                        const spoor_frame *cur, size_t ncur, spoor_unwind_stop cur_stop)
{
    struct threads ts;
    collect(&ts, elf, snap, cur, ncur, cur_stop);
    json_string(j, "rtos", ts.rtos ? spoor_rtos_display_name(spoor_rtos_kind_of(ts.rtos)) : NULL);
    json_string(j, "states_layout", ts.rtos ? spoor_rtos_layout(ts.rtos) : NULL);
    json_array_begin(j, "threads");
    for (size_t i = 0; i < ts.n; i++) {
        const struct thread_view *v = &ts.v[i];
        json_object_begin(j, NULL);
        json_hex32(j, "tcb", v->t.tcb);
        json_string(j, "name", v->read_ok ? v->t.name : NULL);
        json_string(j, "state", spoor_thread_state_name(v->st.state));
        json_string(j, "kernel_state", v->st.kernel[0] ? v->st.kernel : NULL);
        if (v->st.state == SPOOR_THREAD_BLOCKED) {
            json_object_begin(j, "wait");
            json_string(j, "kind", spoor_thread_wait_name(v->st.wait));
            if (v->st.object)
                json_hex32(j, "object", v->st.object);
            else
                json_null(j, "object");
            json_string(j, "name", v->st.object_name[0] ? v->st.object_name : NULL);
            json_object_end(j);
        } else
            json_null(j, "wait");
        if (v->t.has_prio)
            json_int(j, "prio", v->t.prio);
        else
            json_null(j, "prio");
        json_bool(j, "current", v->current);
        if (v->read_ok)
            crash_stacks_thread_json(j, ts.rtos, snap, &v->t, v->current, ts.fills);
        else
            json_null(j, "stack");
        crash_frames_json(j, elf, v->frames, v->nframes);
        json_string(j, "stop", v->nframes ? stop_text(v) : NULL);
        if (v->nframes && !v->unlisted && spoor_rtos_kind_of(ts.rtos) != SPOOR_RTOS_SCHED)
            json_bool(j, "root_reached", root_reached(v->stop));
        else
            json_null(j, "root_reached");
        json_string(j, "error", v->why[0] ? v->why : NULL);
        json_object_end(j);
    }
    json_array_end(j);
    if (ts.rtos)
        json_uint(j, "threads_not_shown", ts.walk.not_shown);
    else
        json_null(j, "threads_not_shown");
    json_string(j, "threads_partial", ts.walk.lists_cut ? ts.walk.why : NULL);
    if (!ts.rtos)
        json_string(j, "threads_error", ts.error);
    release(&ts);
}
