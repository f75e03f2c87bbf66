/* The JSON document of a crash report (spoor/analysis.h spoor_crash_json; the schema is
 * docs/crash.md's): what spoor crash --json prints and spoor report's page holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/analysis.h"
#include "util/calls_view.h"
#include "util/json_write.h"
#include "util/record_json.h"

static void threads_json(json_out *j, spoor_crash *c)
{
    const spoor_threads *ts = spoor_crash_threads(c);
    if (!ts) {
        json_string(j, "threads_error", spoor_last_error());
        return;
    }
    json_string(j, "rtos", ts->rtos ? spoor_rtos_display_name(spoor_rtos_kind_of(ts->rtos)) : NULL);
    json_string(j, "states_layout", ts->rtos ? spoor_rtos_layout(ts->rtos) : NULL);
    json_array_begin(j, "threads");
    for (size_t i = 0; i < ts->count; i++) {
        const spoor_thread *v = &ts->thread[i];
        json_object_begin(j, NULL);
        json_hex32(j, "tcb", v->tcb);
        json_string(j, "name", v->read_ok ? v->info.name : NULL);
        json_string(j, "state", spoor_thread_state_name(v->state.state));
        json_string(j, "kernel_state", v->state.kernel[0] ? v->state.kernel : NULL);
        if (v->state.state == SPOOR_THREAD_BLOCKED) {
            json_object_begin(j, "wait");
            json_string(j, "kind", spoor_thread_wait_name(v->state.wait));
            if (v->state.object)
                json_hex32(j, "object", v->state.object);
            else
                json_null(j, "object");
            json_string(j, "name", v->state.object_name[0] ? v->state.object_name : NULL);
            json_object_end(j);
        } else
            json_null(j, "wait");
        if (v->info.has_prio)
            json_int(j, "prio", v->info.prio);
        else
            json_null(j, "prio");
        json_bool(j, "current", v->current);
        if (v->read_ok)
            stack_usage_json(j, "stack", &v->stack);
        else
            json_null(j, "stack");
        frames_json(j, c->elf, v->frames, v->nframes);
        json_string(j, "stop", v->nframes ? spoor_thread_stop_name(v) : NULL);
        if (spoor_thread_has_root(ts, v))
            json_bool(j, "root_reached", spoor_thread_root_reached(v));
        else
            json_null(j, "root_reached");
        json_string(j, "error", v->error[0] ? v->error : NULL);
        json_object_end(j);
    }
    json_array_end(j);
    if (ts->rtos)
        json_uint(j, "threads_not_shown", ts->walk.not_shown);
    else
        json_null(j, "threads_not_shown");
    json_string(j, "threads_partial", ts->walk.lists_cut ? ts->walk.why : NULL);
    if (!ts->rtos)
        json_string(j, "threads_error", ts->error);
}

static size_t first_shown(size_t count, unsigned newest)
{
    return count > newest ? count - newest : 0;
}

/* "branches", "branches_info", "calls", "calls_info", each pair only when the input has that
 * trace. */
static void sections_json(json_out *j, spoor_crash *c)
{
    const spoor_crash_options *o = &c->options;
    const spoor_crash_mtb *b = o->nbranches ? spoor_crash_branches(c) : NULL;
    if (b && b->present) {
        size_t first = first_shown(b->count, o->nbranches);
        json_array_begin(j, "branches");
        for (size_t i = first; i < b->count; i++)
            mtb_packet_json(j, &b->packets[i]);
        json_array_end(j);
        json_object_begin(j, "branches_info");
        json_string(j, "from", b->from);
        json_uint(j, "total", b->count);
        json_bool(j, "wrapped", b->wrapped);
        json_string(j, "error", b->error[0] ? b->error : NULL);
        json_object_end(j);
    }
    const spoor_crash_ring *k = o->ncalls ? spoor_crash_calls(c) : NULL;
    if (k && k->present) {
        calls_view view;
        const spoor_call_trace *t = &k->trace;
        memset(&view, 0, sizeof view);
        if (!k->error[0])
            calls_view_of_trace(&view, c->elf, t, spoor_mem_reader, c->snap->mem);
        size_t first = k->error[0] ? t->count : first_shown(t->count, o->ncalls);
        json_array_begin(j, "calls");
        for (size_t i = first; i < t->count; i++)
            calls_record_json(j, &view, &t->records[i], &t->contexts[t->records[i].context]);
        json_array_end(j);
        json_object_begin(j, "calls_info");
        json_uint(j, "total", k->error[0] ? 0 : t->count);
        json_bool(j, "wrapped", !k->error[0] && t->wrapped);
        json_uint(j, "empty_slots", k->error[0] ? 0 : t->empty_slots);
        json_string(j, "error", k->error[0] ? k->error : NULL);
        json_object_end(j);
    }
}

static void fault_json(json_out *j, const spoor_crash *c)
{
    json_object_begin(j, "fault");
    json_string(j, "type", c->fault.type);
    json_bool(j, "escalated", c->fault.escalated);
    json_array_begin(j, "bits");
    for (size_t i = 0; i < c->fault.nbits; i++) {
        json_object_begin(j, NULL);
        json_string(j, "register", c->fault.bits[i].reg);
        json_string(j, "name", c->fault.bits[i].name);
        json_string(j, "meaning", c->fault.bits[i].meaning);
        json_object_end(j);
    }
    json_array_end(j);
    if (c->fault.has_address)
        json_hex32(j, "address", c->fault.address);
    else
        json_null(j, "address");
    json_bool(j, "stack_overflow", (c->snap->regs.flags & SPOOR_REGS_STACK_OVERFLOW) != 0);
    json_string(j, "status_from", spoor_fault_source_name(c->snap->fault_from));
    if (c->dump && c->dump->fault_words) /* another tool's dump: its own words for the fault */
        json_string(j, "dump_words", c->dump->fault_words);
    json_object_end(j);
}

static void registers_json(json_out *j, const spoor_crash *c)
{
    const spoor_regs *r = &c->snap->regs;
    const spoor_fault_status *fs = &c->snap->fault;
    json_object_begin(j, "registers");
    char name[8];
    for (int i = 0; i < 13; i++) {
        snprintf(name, sizeof name, "r%d", i);
        json_hex32(j, name, r->r[i]);
    }
    json_hex32(j, "sp", r->r[13]);
    json_hex32(j, "lr", r->r[14]);
    json_hex32(j, "pc", r->r[15]);
    json_hex32(j, "xpsr", r->xpsr);
    static const char *const banked[] = {"msp", "psp", "control"};
    const uint32_t banked_values[] = {r->msp, r->psp, r->control};
    for (int i = 0; i < 3; i++) /* unknown: null, never omitted */
        if (r->have & SPOOR_HAVE_BANKED_SP)
            json_hex32(j, banked[i], banked_values[i]);
        else
            json_null(j, banked[i]);
    if (r->have & (SPOOR_HAVE_EXC_RETURN | SPOOR_HAVE_BANKED_SP) &&
        !(c->dump && c->dump->exc_return_unknown))
        json_hex32(j, "exc_return", r->exc_return);
    else
        json_null(j, "exc_return");
    static const char *const lower[] = {"cfsr", "hfsr", "dfsr", "mmfar",
                                        "bfar", "afsr", "sfsr", "sfar"};
    for (int i = 0; i < 8; i++)
        if (fs->valid & (1u << i))
            json_hex32(j, lower[i], spoor_crash_fault_value(fs, i));
    json_object_end(j);
}

char *spoor_crash_json(spoor_crash *c, size_t *len)
{
    const spoor_dump *d = c->dump;
    outbuf *ob = malloc(sizeof *ob);
    if (!ob) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    ob_init_memory(ob);
    json_out j;
    json_init(&j, ob);
    json_object_begin(&j, NULL);
    json_string(&j, "reason", d && d->has_reason ? spoor_dump_reason_name(d->reason) : NULL);
    if (d && d->has_reason && d->reason == SPOOR_REASON_ASSERT) {
        json_object_begin(&j, "assert");
        json_string(&j, "file", d->file);
        json_uint(&j, "line", d->line);
        json_string(&j, "message", d->message);
        json_object_end(&j);
    }
    fault_json(&j, c);
    registers_json(&j, c);
    frames_json(&j, c->elf, c->frames, c->nframes);
    json_string(&j, "stop", spoor_unwind_stop_name(c->stop));
    json_string(&j, "task_exit_hook", spoor_crash_task_exit_hook(c));
    sections_json(&j, c);
    stack_usage_json(&j, "main_stack", spoor_crash_main_stack(c, NULL));
    if (c->options.threads)
        threads_json(&j, c);
    json_array_begin(&j, "warnings");
    if (c->build_id_warning[0])
        json_string(&j, NULL, c->build_id_warning);
    const char *const *elf_warnings;
    size_t nwarnings = spoor_elf_warnings(c->elf, &elf_warnings);
    for (size_t i = 0; i < nwarnings; i++)
        json_string(&j, NULL, elf_warnings[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    char *text = ob_take(ob, len);
    free(ob);
    if (!text)
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    return text;
}
