/* spoor crash --threads (crash_threads.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_stacks.h"
#include "crash_threads.h"
#include "spoor/analysis.h"
#include "spoor/error.h"
#include "spoor/rtos.h"
#include "spoor/stack_usage.h"

#define MAX_INLINE 16

static void text_frames(outbuf *o, const spoor_elf *elf, const spoor_threads *ts,
                        const spoor_thread *v)
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
    ob_printf(o, "    (stopped: %s", spoor_thread_stop_name(v));
    if (spoor_thread_has_root(ts, v) && !spoor_thread_root_reached(v)) {
        const char *root = spoor_rtos_thread_root(ts->rtos);
        ob_printf(o, "; the thread's root%s%s not reached", root ? " " : "", root ? root : "");
    }
    ob_str(o, ")\n");
}

void crash_threads_text(outbuf *o, spoor_crash *c)
{
    const spoor_elf *elf = c->elf;
    const spoor_threads *ts = spoor_crash_threads(c);
    if (!ts || !ts->rtos) {
        ob_printf(o, "\nthreads: none (%s)\n", ts ? ts->error : spoor_last_error());
        return;
    }
    ob_printf(o, "\nthreads (%s, %zu):\n", spoor_rtos_display_name(spoor_rtos_kind_of(ts->rtos)),
              ts->count);
    if (spoor_rtos_layout(ts->rtos))
        ob_printf(o, "  (states: %s)\n", spoor_rtos_layout(ts->rtos));
    for (size_t i = 0; i < ts->count; i++) {
        const spoor_thread *v = &ts->thread[i];
        char state[200];
        spoor_rtos_state_text(&v->state, state, sizeof state);
        ob_printf(o, "%c 0x%08x ", v->current ? '*' : ' ', v->info.tcb);
        if (v->unlisted)
            ob_str(o, "(start-up or deleted: on no thread list)");
        else
            ob_str(o, v->info.name[0] ? v->info.name : "?");
        ob_str(o, "  ");
        ob_text(o, state); /* names a wait object after an ELF symbol */
        if (v->state.kernel[0] && !v->unlisted) {
            ob_str(o, " (");
            ob_text(o, v->state.kernel);
            ob_char(o, ')');
        }
        if (v->info.has_prio) {
            const char *pn = spoor_rtos_priority_name(ts->rtos, v->info.prio);
            ob_printf(o, "  prio %d%s%s", (int)v->info.prio, pn ? " " : "", pn ? pn : "");
        }
        ob_char(o, '\n');
        if (v->read_ok)
            crash_stacks_line_text(o, "    ", "stack", &v->stack, NULL);
        if (v->error[0])
            ob_printf(o, "    (no backtrace: %s)\n", v->error);
        text_frames(o, elf, ts, v);
    }
    if (ts->walk.not_shown)
        ob_printf(o, "  ... %zu more threads not shown\n", ts->walk.not_shown);
    if (ts->walk.lists_cut)
        ob_printf(o, "  (partial: %u thread list%s not read to the end; %s)\n", ts->walk.lists_cut,
                  ts->walk.lists_cut == 1 ? "" : "s", ts->walk.why);
}
