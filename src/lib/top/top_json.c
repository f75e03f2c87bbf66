/* spoor top's JSON lines (top/top_json.h): one object per interval with the fields orbtop-rtos
 * users know (threads[] with tcb name func prio time_ms cpu max switches; interval_ms cpu_usage
 * cpu_max cpu_freq overflow; exceptions[] with num name count maxd total pct ave min max
 * maxwall) and spoor's own (docs/top.md, "JSON"). */
#include <stdio.h>
#include <stdlib.h>

#include "base/set_error.h"
#include "spoor/unwind.h"
#include "top/top_json.h"
#include "util/json_write.h"
#include "util/record_json.h"

static double ms(uint64_t cycles, uint64_t cpu_hz)
{
    return cpu_hz ? (double)cycles * 1000.0 / (double)cpu_hz : 0.0;
}

static void exception_fields(json_out *j, const spoor_top_exc_stats *e)
{
    char name[48]; /* the console's label without its number: "SysTick", "IRQ 3" */
    const char *known = spoor_exception_name((int)e->number);
    if (e->number >= 16)
        snprintf(name, sizeof name, "IRQ %u", e->number - 16);
    else
        snprintf(name, sizeof name, "%s", known ? known : "reserved");
    json_uint(j, "num", e->number);
    json_string(j, "name", name);
    json_uint(j, "count", e->count);
    json_uint(j, "maxd", e->maxd);
    json_uint(j, "total", e->total);
    json_fixed(j, "pct", e->pct, 3);
    if (e->completed) {
        json_uint(j, "ave", e->completed_own / e->completed);
        json_uint(j, "min", e->min);
        json_uint(j, "max", e->max);
        json_uint(j, "maxwall", e->maxwall);
    } else { /* no activation ended in the interval */
        json_null(j, "ave");
        json_null(j, "min");
        json_null(j, "max");
        json_null(j, "maxwall");
    }
    json_uint(j, "completed", e->completed);
}

static void thread_json(json_out *j, const spoor_top_thread_stats *t,
                        const spoor_top_thread_info *info, uint64_t cpu_hz, bool stack)
{
    json_object_begin(j, NULL);
    json_hex32(j, "tcb", t->tcb);
    json_string(j, "name", info->name);
    json_string(j, "func", info->func);
    if (info->has_prio)
        json_int(j, "prio", info->prio);
    else
        json_null(j, "prio");
    json_string(j, "prio_name", info->prio_name);
    if (info->unlisted)
        json_string(j, "state", "unlisted");
    else if (info->read_ok) {
        char state[200];
        spoor_rtos_state_text(&info->state, state, sizeof state);
        json_string(j, "state", state);
    } else
        json_null(j, "state");
    json_fixed(j, "time_ms", ms(t->cycles, cpu_hz), 3);
    json_fixed(j, "cpu", t->pct, 3);
    json_fixed(j, "max", t->max_pct, 3);
    json_uint(j, "switches", t->switches);
    json_uint(j, "cycles", t->cycles);
    json_bool(j, "idle", t->idle);
    if (stack && info->has_stack)
        stack_usage_json(j, "stack", &info->stack);
    else if (stack)
        json_null(j, "stack");
    json_object_end(j);
}

char *spoor_top_json_report(spoor_top_catalogue *threads, const spoor_top_report *r, unsigned flags,
                            uint64_t cpu_hz, bool stack, size_t *len)
{
    outbuf *ob = malloc(sizeof *ob);
    if (!ob) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    ob_init_memory(ob);
    bool exceptions = flags & SPOOR_TOP_JSON_EXCEPTIONS;
    bool lines = flags & SPOOR_TOP_JSON_EXCEPTION_LINES;
    json_out j;
    json_init(&j, ob);
    json_object_begin(&j, NULL);
    json_array_begin(&j, "threads");
    for (size_t i = 0; i < r->nthreads; i++)
        thread_json(&j, &r->threads[i], spoor_top_catalogue_thread(threads, r->threads[i].tcb),
                    cpu_hz, stack);
    json_array_end(&j);
    json_uint(&j, "interval", r->index);
    json_bool(&j, "summary", r->summary);
    json_bool(&j, "partial", r->partial);
    json_uint(&j, "quiet_intervals", r->quiet);
    json_fixed(&j, "start_ms", ms(r->start, cpu_hz), 3);
    json_fixed(&j, "interval_ms", ms(r->end - r->start, cpu_hz), 3);
    json_fixed(&j, "cpu_usage", r->cpu_usage, 3);
    json_fixed(&j, "cpu_max", r->cpu_max, 3);
    json_bool(&j, "idle_known", !threads->idle_unknown);
    json_uint(&j, "cpu_freq", cpu_hz);
    json_bool(&j, "overflow", r->overflows != 0);
    json_uint(&j, "overflows", r->overflows);
    json_uint(&j, "lost_bytes", r->lost_bytes);
    json_fixed(&j, "unknown_ms", ms(r->unknown_cycles, cpu_hz), 3);
    if (exceptions && !lines) {
        json_array_begin(&j, "exceptions");
        for (size_t i = 0; i < r->nexceptions; i++) {
            json_object_begin(&j, NULL);
            exception_fields(&j, &r->exceptions[i]);
            json_object_end(&j);
        }
        json_array_end(&j);
    }
    json_object_end(&j);
    json_finish(&j);
    for (size_t i = 0; exceptions && lines && i < r->nexceptions; i++) {
        json_init(&j, ob);
        json_object_begin(&j, NULL);
        json_uint(&j, "ex", 1);
        exception_fields(&j, &r->exceptions[i]);
        json_object_end(&j);
        json_finish(&j);
    }
    char *text = ob_take(ob, len);
    free(ob);
    if (!text)
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    return text;
}
