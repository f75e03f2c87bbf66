/* Call-recorder records named and written as JSON (calls_view.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "spoor/rtos.h"
#include "util/calls_view.h"

const char *calls_name_at(const spoor_elf *elf, uint32_t addr, uint32_t *offset)
{
    const char *name;
    uint32_t start, size;
    if (!spoor_elf_function(elf, addr, &name, &start, &size) || !name)
        return NULL;
    *offset = addr - start;
    return name;
}

const char *calls_json_name(const spoor_elf *elf, uint32_t addr, bool site, char *buf, size_t len)
{
    const char *exc = site ? spoor_calls_exc_return_text(addr) : NULL;
    if (exc) {
        snprintf(buf, len, "<exception from %s>", exc);
        return buf;
    }
    uint32_t off;
    const char *name = calls_name_at(elf, addr, &off);
    if (!name)
        return NULL;
    if (!off)
        return name;
    snprintf(buf, len, "%s+0x%" PRIx32, name, off);
    return buf;
}

/* Ids below this are exception numbers (IPSR, the recorder's default context), printed in
 * decimal; the others (an application's spoor_calls_context(), e.g. the current TCB) in hex. */
#define CALLS_SMALL_ID 0x200u

/* The thread name of a recorded context id (calls_view_of_trace), NULL when it has none. */
static const char *calls_context_name(const calls_view *v, uint32_t id)
{
    for (size_t i = 0; i < v->nnamed; i++)
        if (v->named[i].id == id)
            return v->named[i].name;
    return NULL;
}

const char *calls_context_label(const calls_view *v, const spoor_call_context *ctx, char *id_buf,
                                size_t id_len)
{
    if (!ctx->handler)
        return "thread";
    if (v->has_context) {
        const char *name = calls_context_name(v, ctx->id);
        if (ctx->id < CALLS_SMALL_ID)
            snprintf(id_buf, id_len, "ctx %" PRIu32, ctx->id);
        else if (name)
            snprintf(id_buf, id_len, "ctx 0x%08" PRIx32 " (%s)", ctx->id, name);
        else
            snprintf(id_buf, id_len, "ctx 0x%08" PRIx32, ctx->id);
        return id_buf;
    }
    uint32_t off;
    const char *label = calls_name_at(v->elf, ctx->id, &off);
    return label ? label : "handler";
}

/* Names the recorded context ids that are TCBs of the RTOS the ELF has (read-only: the RTOS
 * layer reads each TCB through read). */
static void name_contexts(calls_view *v, const spoor_call_trace *t, spoor_read_fn read,
                          void *read_ctx)
{
    v->nnamed = 0;
    if (!read || !t->has_context)
        return;
    spoor_rtos_kind kind;
    if (!spoor_rtos_detect(v->elf, &kind))
        return;
    spoor_rtos *rtos = spoor_rtos_open(v->elf, spoor_rtos_kind_name(kind));
    for (size_t i = 0; rtos && i < t->context_count && v->nnamed < CALLS_NAMED_MAX; i++) {
        const spoor_call_context *c = &t->contexts[i];
        spoor_rtos_thread th;
        if (!c->handler || c->id < CALLS_SMALL_ID ||
            !spoor_rtos_read_thread(rtos, read, read_ctx, c->id, &th) || !th.name[0])
            continue;
        struct calls_named *n = &v->named[v->nnamed++];
        n->id = c->id;
        snprintf(n->name, sizeof n->name, "%s", th.name);
    }
    spoor_rtos_close(rtos);
}

void calls_view_of_trace(calls_view *v, const spoor_elf *elf, const spoor_call_trace *t,
                         spoor_read_fn read, void *read_ctx)
{
    v->elf = elf;
    v->has_time = t->has_time;
    v->has_context = t->has_context;
    v->many = t->context_count > 1;
    v->label_width = 0;
    name_contexts(v, t, read, read_ctx);
    for (size_t i = 0; i < t->context_count; i++) {
        char buf[CALLS_LABEL_MAX];
        int w = (int)strlen(calls_context_label(v, &t->contexts[i], buf, sizeof buf));
        if (w > v->label_width)
            v->label_width = w;
    }
}

void calls_record_json(json_out *j, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx)
{
    char fbuf[512], sbuf[512], label[CALLS_LABEL_MAX];
    json_object_begin(j, NULL);
    json_string(j, "kind", r->kind == SPOOR_CALL_ENTER ? "enter" : "exit");
    json_hex32(j, "fn", r->function);
    json_hex32(j, "site", r->site);
    json_string(j, "function", calls_json_name(v->elf, r->function, false, fbuf, sizeof fbuf));
    json_string(j, "caller", calls_json_name(v->elf, r->site, true, sbuf, sizeof sbuf));
    json_int(j, "depth", r->depth);
    if (v->has_time)
        json_uint(j, "time", r->time_ticks);
    if (v->has_context) {
        json_uint(j, "context", r->context_id);
        const char *thread = calls_context_name(v, r->context_id);
        if (thread)
            json_string(j, "thread", thread);
    } else if (ctx->handler)
        json_string(j, "handler", calls_context_label(v, ctx, label, sizeof label));
    if (r->after_gap)
        json_bool(j, "after_gap", true);
    json_object_end(j);
}
