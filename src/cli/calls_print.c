/* One call-recorder record as text or JSON (calls_print.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "calls_print.h"

const char *calls_name_at(const spoor_elf *elf, uint32_t addr, uint32_t *offset)
{
    const char *name;
    uint32_t start, size;
    if (!spoor_elf_function(elf, addr, &name, &start, &size) || !name)
        return NULL;
    *offset = addr - start;
    return name;
}

static void put_function(outbuf *ob, const spoor_elf *elf, uint32_t fn)
{
    uint32_t off;
    const char *name = calls_name_at(elf, fn, &off);
    if (!name) {
        ob_str(ob, "???");
        return;
    }
    ob_text(ob, name); /* an ELF's string: escaped for the terminal */
    if (off)
        ob_printf(ob, ":0x%04" PRIX32, off);
}

static void put_site(outbuf *ob, const spoor_elf *elf, uint32_t site)
{
    const char *exc = spoor_calls_exc_return_text(site);
    if (exc) {
        ob_printf(ob, "<exception from %s>", exc);
        return;
    }
    uint32_t off;
    const char *name = calls_name_at(elf, site, &off);
    if (name) {
        ob_text(ob, name);
        ob_printf(ob, ":0x%04" PRIX32, off);
    } else {
        ob_str(ob, "???");
    }
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

const char *calls_context_label(const calls_view *v, const spoor_call_context *ctx, char *id_buf,
                                size_t id_len)
{
    if (!ctx->handler)
        return "thread";
    if (v->has_context) {
        snprintf(id_buf, id_len, "ctx %" PRIu32, ctx->id);
        return id_buf;
    }
    uint32_t off;
    const char *label = calls_name_at(v->elf, ctx->id, &off);
    return label ? label : "handler";
}

void calls_view_of_trace(calls_view *v, const spoor_elf *elf, const spoor_call_trace *t)
{
    v->elf = elf;
    v->has_time = t->has_time;
    v->has_context = t->has_context;
    v->many = t->context_count > 1;
    v->label_width = 0;
    for (size_t i = 0; i < t->context_count; i++) {
        char buf[24];
        int w = (int)strlen(calls_context_label(v, &t->contexts[i], buf, sizeof buf));
        if (w > v->label_width)
            v->label_width = w;
    }
}

void calls_record_text(outbuf *ob, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx)
{
    char buf[24];
    if (v->many)
        ob_printf(ob, "%-*s| ", v->label_width, calls_context_label(v, ctx, buf, sizeof buf));
    for (int d = 0; d < r->depth; d++)
        ob_char(ob, ' ');
    bool enter = r->kind == SPOOR_CALL_ENTER;
    ob_printf(ob, "%c %08" PRIX32 "%s%08" PRIX32 "  ", enter ? '{' : '}', r->site,
              enter ? "->" : "<-", r->function);
    put_site(ob, v->elf, r->site);
    ob_str(ob, enter ? "->" : "<-");
    put_function(ob, v->elf, r->function);
    if (v->has_time)
        ob_printf(ob, "  @%" PRIu64, r->time_ticks);
    ob_char(ob, '\n');
}

void calls_record_json(json_out *j, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx)
{
    char fbuf[512], sbuf[512], label[24];
    json_object_begin(j, NULL);
    json_string(j, "kind", r->kind == SPOOR_CALL_ENTER ? "enter" : "exit");
    json_hex32(j, "fn", r->function);
    json_hex32(j, "site", r->site);
    json_string(j, "function", calls_json_name(v->elf, r->function, false, fbuf, sizeof fbuf));
    json_string(j, "caller", calls_json_name(v->elf, r->site, true, sbuf, sizeof sbuf));
    json_int(j, "depth", r->depth);
    if (v->has_time)
        json_uint(j, "time", r->time_ticks);
    if (v->has_context)
        json_uint(j, "context", r->context_id);
    else if (ctx->handler)
        json_string(j, "handler", calls_context_label(v, ctx, label, sizeof label));
    if (r->after_gap)
        json_bool(j, "after_gap", true);
    json_object_end(j);
}
