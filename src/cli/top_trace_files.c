/* spoor top's trace files for viewers.
 *
 * --ftrace: the text the Linux ftrace "trace" file has (Documentation/trace/ftrace.rst, "Output
 * format"; the sched_switch and irq_handler_entry/exit event formats of the kernel's
 * include/trace/events/sched.h and irq.h), which Eclipse Trace Compass imports. One CPU. A
 * thread is the task "name|function" (spaces made '_'), its TCB address the PID, its RTOS
 * priority the prio. The task column of an event is the task that was running when it happened
 * (for sched_switch: the previous task, as the kernel writes it).
 *
 * --chrome: the Trace Event Format's JSON object form ({"traceEvents": [...]}): a complete
 * event ("ph":"X") per stretch a thread ran, on a track (tid) per thread named by a thread_name
 * metadata event; exceptions as complete events on a track of their own (tid 0), nested as they
 * nested. Times in microseconds. */
#include <inttypes.h>
#include <string.h>

#include "top_cli.h"

/* ---- ftrace --------------------------------------------------------------------------------- */

/* "no known thread" (before the first switch, or a switch to no TCB) is one task everywhere:
 * "<unknown>", PID 0, prio 0 */
static void task_name(const top_view *v, uint32_t tcb, bool known, char *buf, size_t cap)
{
    if (!known || !tcb) {
        snprintf(buf, cap, "<unknown>");
        return;
    }
    const top_thread_info *info = v->thread(v->ctx, tcb);
    snprintf(buf, cap, "%s|%s", info->name[0] ? info->name : "?", info->func ? info->func : "?");
    for (char *p = buf; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '=')
            *p = '_';
}

static int task_prio(const top_view *v, uint32_t tcb, bool known)
{
    if (!known || !tcb)
        return 0;
    const top_thread_info *info = v->thread(v->ctx, tcb);
    return info->has_prio ? (int)info->prio : 0;
}

/* seconds.microseconds of a cycle count, exactly (no floating point) */
static void timestamp(const top_view *v, uint64_t cycles, char *buf, size_t cap)
{
    uint64_t hz = v->cpu_hz ? v->cpu_hz : 1;
    uint64_t s = cycles / hz, rem = cycles % hz;
    snprintf(buf, cap, "%5" PRIu64 ".%06" PRIu64, s, rem * 1000000u / hz);
}

bool top_ftrace_open(top_ftrace *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->f = fopen(path, "w");
    if (!t->f)
        return false;
    fputs("# tracer: nop\n#\n", t->f);
    t->count_at = ftell(t->f);
    /* rewritten with the counts at the end: fixed width */
    fprintf(t->f, "# entries-in-buffer/entries-written: %10u/%-10u   #P:1\n", 0u, 0u);
    fputs("#\n"
          "#                                _-----=> irqs-off\n"
          "#                               / _----=> need-resched\n"
          "#                              | / _---=> hardirq/softirq\n"
          "#                              || / _--=> preempt-depth\n"
          "#                              ||| /     delay\n"
          "#           TASK-PID     CPU#  ||||   TIMESTAMP  FUNCTION\n"
          "#              | |         |   ||||      |         |\n",
          t->f);
    return true;
}

void top_ftrace_switch(top_ftrace *t, const top_view *v, uint64_t time, uint32_t prev,
                       bool prev_known, uint32_t next)
{
    char pn[128], nn[128], ts[48];
    task_name(v, prev, prev_known, pn, sizeof pn);
    task_name(v, next, true, nn, sizeof nn);
    timestamp(v, time, ts, sizeof ts);
    fprintf(t->f,
            "%16s-%-7" PRIu32 " [000] .... %s: sched_switch: prev_comm=%s prev_pid=%" PRIu32
            " prev_prio=%d prev_state=S ==> next_comm=%s next_pid=%" PRIu32 " next_prio=%d\n",
            pn, prev_known ? prev : 0, ts, pn, prev_known ? prev : 0,
            task_prio(v, prev, prev_known), nn, next, task_prio(v, next, true));
    t->entries++;
}

void top_ftrace_exception(top_ftrace *t, const top_view *v, uint64_t time, unsigned number,
                          bool entry, bool running_known, uint32_t running)
{
    char tn[128], ts[48], label[48];
    if (!running_known)
        running = 0;
    task_name(v, running, running_known, tn, sizeof tn);
    timestamp(v, time, ts, sizeof ts);
    top_exception_label(number, label, sizeof label);
    char *name = strchr(label, '(');
    name = name ? name + 1 : label;
    name[strcspn(name, ")")] = '\0';
    for (char *p = name; *p; p++)
        if (*p == ' ')
            *p = '_';
    if (entry)
        fprintf(t->f, "%16s-%-7" PRIu32 " [000] d.h. %s: irq_handler_entry: irq=%u name=%s\n", tn,
                running, ts, number, name);
    else
        fprintf(t->f, "%16s-%-7" PRIu32 " [000] d.h. %s: irq_handler_exit: irq=%u ret=handled\n",
                tn, running, ts, number);
    t->entries++;
}

bool top_ftrace_close(top_ftrace *t)
{
    if (!t->f)
        return true;
    bool ok = !ferror(t->f);
    if (fseek(t->f, t->count_at, SEEK_SET) == 0)
        fprintf(t->f, "# entries-in-buffer/entries-written: %10" PRIu64 "/%-10" PRIu64, t->entries,
                t->entries);
    ok = fclose(t->f) == 0 && ok;
    t->f = NULL;
    return ok;
}

/* ---- Chrome trace-event JSON ---------------------------------------------------------------- */

static double us(const top_view *v, uint64_t cycles)
{
    return top_ms(v, cycles) * 1000.0;
}

bool top_chrome_open(top_chrome *c, const char *path)
{
    memset(c, 0, sizeof *c);
    return chrome_trace_open(&c->trace, path);
}

static void remember(top_chrome *c, uint32_t tcb)
{
    for (size_t i = 0; i < c->nseen; i++)
        if (c->seen[i] == tcb)
            return;
    if (c->nseen < SPOOR_TOP_MAX_THREADS)
        c->seen[c->nseen++] = tcb;
}

/* The thread track of a TCB: its address, but never 0 (the exceptions' track). */
static uint64_t track(uint32_t tcb)
{
    return tcb ? tcb : 0x100000000ull;
}

static void end_slice(top_chrome *c, const top_view *v, uint64_t time)
{
    if (!c->have_current || time < c->since)
        return;
    const top_thread_info *info = v->thread(v->ctx, c->current);
    json_out *j = chrome_trace_event_begin(&c->trace, info->name[0] ? info->name : "?", "X");
    json_string(j, "cat", "thread");
    json_fixed(j, "ts", us(v, c->since), 3);
    json_fixed(j, "dur", us(v, time) - us(v, c->since), 3);
    json_uint(j, "pid", 1);
    json_uint(j, "tid", track(c->current));
    chrome_trace_event_end(&c->trace);
}

void top_chrome_switch(top_chrome *c, const top_view *v, uint64_t time, uint32_t next)
{
    end_slice(c, v, time);
    c->have_current = true;
    c->current = next;
    c->since = time;
    remember(c, next);
}

void top_chrome_exception(top_chrome *c, const top_view *v, unsigned number, uint64_t enter,
                          uint64_t exit, unsigned depth)
{
    char label[48];
    top_exception_label(number, label, sizeof label);
    json_out *j = chrome_trace_event_begin(&c->trace, label, "X");
    json_string(j, "cat", "exception");
    json_fixed(j, "ts", us(v, enter), 3);
    json_fixed(j, "dur", us(v, exit) - us(v, enter), 3);
    json_uint(j, "pid", 1);
    json_uint(j, "tid", 0);
    json_object_begin(j, "args");
    json_uint(j, "depth", depth);
    json_object_end(j);
    chrome_trace_event_end(&c->trace);
}

bool top_chrome_close(top_chrome *c, const top_view *v, uint64_t end)
{
    if (!c->trace.ob)
        return true;
    end_slice(c, v, end);
    json_out *j = chrome_trace_event_begin(&c->trace, "process_name", "M");
    json_uint(j, "pid", 1);
    json_uint(j, "tid", 0);
    json_object_begin(j, "args");
    json_string(j, "name", v->rtos_name);
    json_object_end(j);
    chrome_trace_event_end(&c->trace);
    chrome_trace_track(&c->trace, 1, 0, "exceptions");
    for (size_t i = 0; i < c->nseen; i++) {
        const top_thread_info *info = v->thread(v->ctx, c->seen[i]);
        char name[128];
        snprintf(name, sizeof name, "%s (0x%08x)", info->name[0] ? info->name : "?", c->seen[i]);
        j = chrome_trace_event_begin(&c->trace, "thread_name", "M");
        json_uint(j, "pid", 1);
        json_uint(j, "tid", track(c->seen[i]));
        json_object_begin(j, "args");
        json_string(j, "name", name);
        json_object_end(j);
        chrome_trace_event_end(&c->trace);
    }
    return chrome_trace_close(&c->trace);
}
