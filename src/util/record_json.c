/* The JSON of shared records (record_json.h). */
#include "util/record_json.h"

#define MAX_INLINE 16

void frames_json(json_out *j, const spoor_elf *elf, const spoor_frame *frames, size_t n)
{
    json_array_begin(j, "backtrace");
    for (size_t i = 0; i < n; i++) {
        const spoor_frame *f = &frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            json_object_begin(j, NULL);
            json_hex32(j, "pc", f->pc);
            json_string(j, "kind", "exception");
            json_int(j, "exception", f->exception);
            json_string(j, "function", spoor_exception_name(f->exception));
            json_null(j, "file");
            json_null(j, "line");
            json_string(j, "method", "exception");
            json_object_end(j);
            continue;
        }
        spoor_location loc[MAX_INLINE];
        size_t nloc = spoor_elf_symbolize(elf, spoor_frame_lookup_pc(f), loc, MAX_INLINE);
        for (size_t k = 0; k < nloc; k++) {
            json_object_begin(j, NULL);
            json_hex32(j, "pc", f->pc);
            json_string(j, "kind", "frame");
            json_string(j, "function", loc[k].function);
            json_string(j, "file", loc[k].file);
            if (loc[k].file || loc[k].line) /* line 0: DWARF's "no line" in that file */
                json_uint(j, "line", loc[k].line);
            else
                json_null(j, "line");
            json_bool(j, "inlined", k + 1 < nloc);
            json_string(j, "method", spoor_unwind_method_name(f->method));
            json_bool(j, "tailcalls_possible", f->tailcalls_possible);
            json_object_end(j);
        }
    }
    json_array_end(j);
}

static void json_opt(json_out *j, const char *key, bool known, uint32_t v)
{
    if (known)
        json_uint(j, key, v);
    else
        json_null(j, key);
}

void stack_usage_json(json_out *j, const char *key, const spoor_stack_usage *u)
{
    if (!u->found) {
        json_null(j, key);
        return;
    }
    json_object_begin(j, key);
    json_hex32(j, "low", u->low);
    if (u->has_high)
        json_hex32(j, "high", u->high);
    else
        json_null(j, "high");
    json_opt(j, "size", u->has_high, u->size);
    json_opt(j, "used", u->has_sp && u->has_high, u->used);
    json_opt(j, "peak", u->filled && u->has_high, u->peak);
    json_opt(j, "free_min", u->filled, u->free_min);
    if (u->overflow_unknown)
        json_null(j, "overflowed");
    else
        json_bool(j, "overflowed", u->overflowed);
    json_bool(j, "nearly_full", u->nearly_full);
    json_string(j, "from", u->from);
    if (u->unreadable)
        json_hex32(j, "unreadable", u->unreadable_at);
    else
        json_null(j, "unreadable");
    json_object_end(j);
}

void mtb_packet_json(json_out *j, const spoor_mtb_packet *p)
{
    json_object_begin(j, NULL);
    json_key_hex32(j, JSON_KEY("src"), p->src);
    json_key_hex32(j, JSON_KEY("dst"), p->dst);
    json_key_uint(j, JSON_KEY("a"), p->a);
    json_key_uint(j, JSON_KEY("s"), p->s);
    json_key_string(j, JSON_KEY("kind"), spoor_mtb_kind_name(p->kind));
    json_object_end(j);
}
