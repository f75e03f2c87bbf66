/* spoor top's console table: columns as wide as their longest cell, busy threads first, the
 * idle threads under a separator, then the totals line and the warnings. */
#include <stdlib.h>
#include <string.h>

#include "spoor/unwind.h"
#include "top_cli.h"

#define THREAD_COLS 13 /* 9, and 4 with --stack */
#define STATE_WIDTH 24 /* the State column: longer states are cut */
#define EXC_COLS 9
#define CELL 64

double top_ms(const top_view *v, uint64_t cycles)
{
    return v->cpu_hz ? (double)cycles * 1000.0 / (double)v->cpu_hz : 0.0;
}

void top_exception_label(unsigned number, char *buf, size_t cap)
{
    const char *name = spoor_exception_name((int)number);
    if (number >= 16)
        snprintf(buf, cap, "%u (IRQ %u)", number, number - 16);
    else
        snprintf(buf, cap, "%u (%s)", number, name ? name : "reserved");
}

typedef char row_cells[THREAD_COLS > EXC_COLS ? THREAD_COLS : EXC_COLS][CELL];

static void rule(outbuf *o, const size_t *w, int ncols)
{
    for (int c = 0; c < ncols; c++) {
        ob_char(o, '|');
        for (size_t i = 0; i < w[c] + 2; i++)
            ob_char(o, '-');
    }
    ob_str(o, "|\n");
}

/* left: the columns aligned left (text); the others are right-aligned (numbers) */
static void row(outbuf *o, const size_t *w, int ncols, row_cells cells, unsigned left)
{
    for (int c = 0; c < ncols; c++) {
        if (left >> c & 1)
            ob_printf(o, "| %-*s ", (int)w[c], cells[c]);
        else
            ob_printf(o, "| %*s ", (int)w[c], cells[c]);
    }
    ob_str(o, "|\n");
}

static void widen(size_t *w, int ncols, row_cells cells)
{
    for (int c = 0; c < ncols; c++)
        if (strlen(cells[c]) > w[c])
            w[c] = strlen(cells[c]);
}

/* The State column, compact: "ready", "sleeping", "blocked sem sem_ready" (the kind of object
 * shortened, then the object), cut at STATE_WIDTH; "unlisted" for a TCB on no thread list, "?"
 * for a TCB that could not be read, empty without an RTOS. */
static void state_cell(const top_thread_info *info, char *cell)
{
    static const char *const kinds[] = {
        [SPOOR_WAIT_SEMAPHORE] = "sem",     [SPOOR_WAIT_MUTEX] = "mutex",
        [SPOOR_WAIT_QUEUE] = "queue",       [SPOOR_WAIT_QUEUE_SEND] = "queue-send",
        [SPOOR_WAIT_EVENT_FLAGS] = "flags", [SPOOR_WAIT_THREAD_FLAGS] = "thread-flags",
        [SPOOR_WAIT_JOIN] = "join",         [SPOOR_WAIT_MEMORY] = "memory",
        [SPOOR_WAIT_OTHER] = "other"};
    const spoor_rtos_state *s = &info->state;
    char text[160];
    if (info->unlisted)
        snprintf(text, sizeof text, "unlisted");
    else if (!info->read_ok)
        snprintf(text, sizeof text, "%s", info->tcb && info->name[0] == '?' ? "?" : "");
    else if (s->state != SPOOR_THREAD_BLOCKED)
        snprintf(text, sizeof text, "%s", spoor_thread_state_name(s->state));
    else {
        const char *kind = (size_t)s->wait < sizeof kinds / sizeof *kinds ? kinds[s->wait] : NULL;
        char object[16] = "";
        if (!s->object_name[0] && s->object)
            snprintf(object, sizeof object, "0x%08x", s->object);
        snprintf(text, sizeof text, "blocked%s%s%s%s", kind ? " " : "", kind ? kind : "",
                 s->object_name[0] || object[0] ? " " : "",
                 s->object_name[0] ? s->object_name : object);
    }
    snprintf(cell, CELL, "%.*s", STATE_WIDTH, text);
}

static void thread_cells(const top_view *v, const spoor_top_thread_stats *t, row_cells cells)
{
    const top_thread_info *info = v->thread(v->ctx, t->tcb);
    snprintf(cells[0], CELL, "%s", info->name);
    snprintf(cells[1], CELL, "0x%08x", t->tcb);
    snprintf(cells[2], CELL, "%s", info->func ? info->func : "");
    if (info->prio_name)
        snprintf(cells[3], CELL, "%s", info->prio_name);
    else if (info->has_prio)
        snprintf(cells[3], CELL, "%d", (int)info->prio);
    else
        cells[3][0] = '\0';
    state_cell(info, cells[4]);
    snprintf(cells[5], CELL, "%.3f", top_ms(v, t->cycles));
    snprintf(cells[6], CELL, "%.3f", t->pct);
    snprintf(cells[7], CELL, "%.3f", t->max_pct);
    snprintf(cells[8], CELL, "%llu", (unsigned long long)t->switches);
}

/* --stack: size, used, peak, and a word when it overflowed or nearly did; "?" unknown */
static void bytes_cell(char *cell, bool known, uint32_t bytes)
{
    if (known)
        snprintf(cell, CELL, "%u", bytes);
    else
        snprintf(cell, CELL, "?");
}

static void stack_cells(const top_thread_info *info, row_cells cells)
{
    const spoor_stack_usage *u = &info->stack;
    for (int c = 9; c < 13; c++)
        cells[c][0] = '\0';
    if (!info->has_stack)
        return;
    if (!u->found) { /* the TCB records no stack */
        snprintf(cells[9], CELL, "?");
        return;
    }
    bytes_cell(cells[9], u->has_high, u->size);
    bytes_cell(cells[10], u->has_sp && u->has_high, u->used);
    bytes_cell(cells[11], u->filled && u->has_high, u->peak);
    snprintf(cells[12], CELL, "%s",
             u->overflowed         ? "OVERFLOWED"
             : u->overflow_unknown ? "?"
             : u->nearly_full      ? "NEARLY FULL"
                                   : "");
}

static int by_time(const void *a, const void *b)
{
    const spoor_top_thread_stats *x = *(const spoor_top_thread_stats *const *)a;
    const spoor_top_thread_stats *y = *(const spoor_top_thread_stats *const *)b;
    if (x->idle != y->idle)
        return x->idle ? 1 : -1;
    if (x->cycles != y->cycles)
        return x->cycles > y->cycles ? -1 : 1;
    return x->tcb < y->tcb ? -1 : x->tcb > y->tcb;
}

static void thread_table(outbuf *o, const top_view *v, const spoor_top_report *r)
{
    static const char *const head[THREAD_COLS] = {
        "Thread Name", "Address",  "Function", "Priority", "State", "Time(ms)",   "CPU%",
        "Max%",        "Switches", "Stack",    "Used",     "Peak",  "Stack check"};
    const int ncols = v->stack ? THREAD_COLS : 9;
    const spoor_top_thread_stats **order = malloc((r->nthreads + 1) * sizeof *order);
    row_cells *cells = malloc((r->nthreads + 1) * sizeof *cells);
    if (!order || !cells) {
        free(order);
        free(cells);
        return;
    }
    for (size_t i = 0; i < r->nthreads; i++)
        order[i] = &r->threads[i];
    qsort(order, r->nthreads, sizeof *order, by_time);
    size_t w[THREAD_COLS] = {0};
    row_cells header;
    for (int c = 0; c < ncols; c++)
        snprintf(header[c], CELL, "%s", head[c]);
    widen(w, ncols, header);
    for (size_t i = 0; i < r->nthreads; i++) {
        thread_cells(v, order[i], cells[i]);
        if (v->stack)
            stack_cells(v->thread(v->ctx, order[i]->tcb), cells[i]);
        widen(w, ncols, cells[i]);
    }
    const unsigned left = 0x101F; /* name, address, function, priority, state, stack check */
    rule(o, w, ncols);
    row(o, w, ncols, header, left);
    rule(o, w, ncols);
    bool separated = false;
    for (size_t i = 0; i < r->nthreads; i++) {
        if (order[i]->idle && !separated) {
            rule(o, w, ncols);
            separated = true;
        }
        row(o, w, ncols, cells[i], left);
    }
    rule(o, w, ncols);
    free(order);
    free(cells);
}

static void exception_table(outbuf *o, const top_view *v, const spoor_top_report *r)
{
    (void)v;
    static const char *const head[EXC_COLS] = {"Exception",  "Count",    "MaxD",
                                               "TotalTicks", "%",        "AveTicks",
                                               "minTicks",   "maxTicks", "maxWall"};
    row_cells *cells = malloc((r->nexceptions + 1) * sizeof *cells);
    if (!cells)
        return;
    size_t w[EXC_COLS] = {0};
    row_cells header;
    for (int c = 0; c < EXC_COLS; c++)
        snprintf(header[c], CELL, "%s", head[c]);
    widen(w, EXC_COLS, header);
    for (size_t i = 0; i < r->nexceptions; i++) {
        const spoor_top_exc_stats *e = &r->exceptions[i];
        top_exception_label(e->number, cells[i][0], CELL);
        snprintf(cells[i][1], CELL, "%llu", (unsigned long long)e->count);
        snprintf(cells[i][2], CELL, "%u", e->maxd);
        snprintf(cells[i][3], CELL, "%llu", (unsigned long long)e->total);
        snprintf(cells[i][4], CELL, "%.1f", e->pct);
        if (e->completed) {
            snprintf(cells[i][5], CELL, "%llu",
                     (unsigned long long)(e->completed_own / e->completed));
            snprintf(cells[i][6], CELL, "%llu", (unsigned long long)e->min);
            snprintf(cells[i][7], CELL, "%llu", (unsigned long long)e->max);
            snprintf(cells[i][8], CELL, "%llu", (unsigned long long)e->maxwall);
        } else {
            for (int c = 5; c < 9; c++)
                snprintf(cells[i][c], CELL, "-");
        }
        widen(w, EXC_COLS, cells[i]);
    }
    ob_str(o, "=== Exception Statistics ===\n");
    rule(o, w, EXC_COLS);
    row(o, w, EXC_COLS, header, 1);
    rule(o, w, EXC_COLS);
    for (size_t i = 0; i < r->nexceptions; i++)
        row(o, w, EXC_COLS, cells[i], 1);
    rule(o, w, EXC_COLS);
    free(cells);
}

/* The report as plain lines. */
static void report_lines(outbuf *o, const top_view *v, const spoor_top_report *r)
{
    if (r->summary)
        ob_printf(o, "=== Whole run (%s): %llu intervals, %.3f ms ===\n", v->rtos_name,
                  (unsigned long long)r->index, top_ms(v, r->end - r->start));
    else if (r->quiet)
        ob_printf(o,
                  "=== RTOS Thread Statistics (%s) === intervals %llu-%llu: %.3f-%.3f ms: %llu "
                  "intervals with no activity (times below: their sum)\n",
                  v->rtos_name, (unsigned long long)r->index,
                  (unsigned long long)(r->index + r->quiet - 1), top_ms(v, r->start),
                  top_ms(v, r->end), (unsigned long long)r->quiet);
    else
        ob_printf(o, "=== RTOS Thread Statistics (%s) === interval %llu: %.3f-%.3f ms%s\n",
                  v->rtos_name, (unsigned long long)r->index, top_ms(v, r->start),
                  top_ms(v, r->end), r->partial ? " (cut short by the end of the input)" : "");
    thread_table(o, v, r);
    ob_printf(o, "Interval: %.3f ms, CPU Usage: %.3f%%,  Max: %.3f%%, CPU Freq: %lluHz",
              top_ms(v, (r->end - r->start) / (r->quiet ? r->quiet : 1)), r->cpu_usage, r->cpu_max,
              (unsigned long long)v->cpu_hz);
    if (v->idle_unknown)
        ob_str(o, " [idle thread unknown: CPU Usage includes its time]");
    if (r->overflows)
        ob_printf(o, " [ITM OVERFLOW DETECTED! %llu overflow packets: switches may be missing]",
                  (unsigned long long)r->overflows);
    if (r->lost_bytes)
        ob_printf(o, " [LOST PACKETS: %llu bytes of the stream could not be decoded]",
                  (unsigned long long)r->lost_bytes);
    if (r->unknown_cycles)
        ob_printf(o, " [%.3f ms with no known current thread]", top_ms(v, r->unknown_cycles));
    if (r->dropped_threads)
        ob_printf(o, " [more than %d threads: %llu switches not counted]", SPOOR_TOP_MAX_THREADS,
                  (unsigned long long)r->dropped_threads);
    ob_char(o, '\n');
    if (v->exceptions && r->nexceptions)
        exception_table(o, v, r);
    ob_char(o, '\n');
}

/* In place on a terminal, as top does: the cursor home, each line cut at the terminal's width
 * (a wrapped line would push the table's top off the screen) and the rest of it erased, then
 * the rest of the screen erased; no clearing of the whole screen (no flicker). */
static void report_in_place(outbuf *o, const top_view *v, const spoor_top_report *r)
{
    static outbuf text; /* the report is rendered here first: never flushed (fd -1) */
    ob_init(&text, -1);
    report_lines(&text, v, r);
    if (text.failed) { /* more than the buffer (a thousand threads): plain lines after a clear */
        ob_str(o, "\033[H\033[J");
        report_lines(o, v, r);
        return;
    }
    ob_str(o, "\033[H");
    for (size_t at = 0; at < text.len;) {
        const char *line = text.buf + at;
        const char *nl = memchr(line, '\n', text.len - at);
        size_t n = nl ? (size_t)(nl - line) : text.len - at;
        at += n + 1;
        ob_write(o, line, v->cols && n > v->cols ? v->cols : n);
        ob_str(o, "\033[K\n");
    }
    ob_str(o, "\033[J");
}

void top_console_report(outbuf *o, const top_view *v, const spoor_top_report *r, bool refresh)
{
    if (refresh && !r->summary)
        report_in_place(o, v, r);
    else
        report_lines(o, v, r);
}
