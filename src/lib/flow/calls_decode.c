/* The call recorder's state object and ring to records oldest first, with contexts and
 * depths (spoor/calls_decode.h). */
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "base/set_error.h"
#include "spoor/calls_decode.h"
#include "spoor/cortexm_facts.h"

bool spoor_calls_parse_state(const uint8_t *bytes, size_t len, spoor_calls_info *out)
{
    memset(out, 0, sizeof *out);
    if (!bytes || len < SPOOR_CALLS_STATE_SIZE)
        return spoor_set_error(SPOOR_ERR_TRUNCATED,
                               "call recorder state truncated: %zu of %u bytes", bytes ? len : 0,
                               SPOOR_CALLS_STATE_SIZE),
               false;
    uint32_t magic = spoor_le32(bytes + SPOOR_CALLS_ST_MAGIC);
    uint32_t format = spoor_le32(bytes + SPOOR_CALLS_ST_FORMAT);
    out->ring = spoor_le32(bytes + SPOOR_CALLS_ST_RING);
    out->capacity = spoor_le32(bytes + SPOOR_CALLS_ST_CAPACITY);
    out->next = spoor_le32(bytes + SPOOR_CALLS_ST_NEXT);
    out->flags = spoor_le32(bytes + SPOOR_CALLS_ST_FLAGS);
    if (magic == 0)
        return spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                               "call recorder not initialised (spoor_calls_init was not called)"),
               false;
    if (magic != SPOOR_CALLS_MAGIC)
        return spoor_set_error(SPOOR_ERR_FORMAT,
                               "call recorder state is corrupt: magic 0x%08x, expected 0x%08x",
                               magic, SPOOR_CALLS_MAGIC),
               false;
    unsigned optional = (format >> 8) & 0xFFu;
    out->has_time = (optional & SPOOR_CALLS_HAS_TIME) != 0;
    out->has_context = (optional & SPOOR_CALLS_HAS_CONTEXT) != 0;
    out->time_systick = (optional & SPOOR_CALLS_TIME_SYSTICK) != 0;
    out->record_size = format & 0xFFu;
    out->layout = (format >> 16) & 0xFFu;
    unsigned expect = SPOOR_CALLS_REC_SIZE + 4u * (out->has_time + out->has_context);
    if (out->record_size != expect || (format >> 24) != 0 ||
        out->layout > SPOOR_CALLS_LAYOUT_ADDRESS ||
        (optional & ~(SPOOR_CALLS_HAS_TIME | SPOOR_CALLS_HAS_CONTEXT | SPOOR_CALLS_TIME_SYSTICK)))
        return spoor_set_error(SPOOR_ERR_FORMAT,
                               "call recorder state is corrupt: record format 0x%08x", format),
               false;
    if (out->capacity < 2 || (uint64_t)out->capacity * out->record_size > SPOOR_CALLS_MAX_RING)
        return spoor_set_error(SPOOR_ERR_FORMAT,
                               "call recorder state is corrupt: capacity %u records of %u bytes",
                               out->capacity, out->record_size),
               false;
    if (out->layout == SPOOR_CALLS_LAYOUT_INDEX && out->next >= out->capacity)
        return spoor_set_error(SPOOR_ERR_FORMAT,
                               "call recorder state is corrupt: next index %u, capacity %u",
                               out->next, out->capacity),
               false;
    if ((out->ring & 3u) || (uint64_t)out->ring + spoor_calls_ring_bytes(out) > 0x100000000ull)
        return spoor_set_error(SPOOR_ERR_FORMAT,
                               "call recorder state is corrupt: ring at 0x%08x, %zu bytes",
                               out->ring, spoor_calls_ring_bytes(out)),
               false;
    if (out->layout == SPOOR_CALLS_LAYOUT_ADDRESS) {
        /* next holds the slot's address: a slot's start inside the ring */
        uint32_t offset = out->next - out->ring;
        if (out->next < out->ring || offset >= spoor_calls_ring_bytes(out) ||
            offset % out->record_size)
            return spoor_set_error(SPOOR_ERR_FORMAT,
                                   "call recorder state is corrupt: next slot at 0x%08x, ring at "
                                   "0x%08x, %u records of %u bytes",
                                   out->next, out->ring, out->capacity, out->record_size),
                   false;
        out->next = offset / out->record_size;
    }
    return true;
}

size_t spoor_calls_ring_bytes(const spoor_calls_info *st)
{
    return (size_t)st->capacity * st->record_size;
}

const char *spoor_calls_exc_return_text(uint32_t v)
{
    if (!spoor_cortexm_is_exc_return(v))
        return NULL;
    static const char *const text[8] = {
        "handler, FP", "handler, FP", "thread, MSP, FP", "thread, PSP, FP",
        "handler",     "handler",     "thread, MSP",     "thread, PSP",
    };
    unsigned mode = (v >> 3) & 1u, spsel = (v >> 2) & 1u, basic = (v >> 4) & 1u;
    return text[basic * 4u + mode * 2u + spsel];
}

static bool add_context(spoor_call_trace *t, size_t *cap, bool handler, uint32_t id,
                        uint32_t exc_return, size_t first, unsigned *index)
{
    if (t->context_count == *cap) {
        size_t n = *cap ? *cap * 2 : 8;
        spoor_call_context *c = realloc(t->contexts, n * sizeof *c);
        if (!c)
            return spoor_set_error(SPOOR_ERR_NOMEM, "out of memory"), false;
        t->contexts = c;
        *cap = n;
    }
    t->contexts[t->context_count] = (spoor_call_context){
        .handler = handler, .id = id, .exc_return = exc_return, .first = first};
    *index = (unsigned)t->context_count++;
    return true;
}

/* Contexts from recorded ids: one context per distinct id, 0 (thread mode's IPSR) first. */
static bool contexts_from_ids(spoor_call_trace *t, size_t *cap)
{
    unsigned thread;
    if (!add_context(t, cap, false, 0, 0, 0, &thread))
        return false;
    for (size_t i = 0; i < t->count; i++) {
        spoor_call_record *r = &t->records[i];
        size_t c = 0;
        while (c < t->context_count && t->contexts[c].id != r->context_id)
            c++;
        if (c == t->context_count) {
            unsigned idx;
            if (!add_context(t, cap, true, r->context_id, 0, i, &idx))
                return false;
        }
        r->context = (unsigned)c;
    }
    return true;
}

/* Contexts from EXC_RETURN call sites: an enter with such a site opens a handler invocation,
 * its exit closes it. An exit with such a site while no handler is open means the ring starts
 * inside that handler: the thread-context records since the last such point were its own. */
#define MAX_NEST 64
static bool contexts_from_exc_return(spoor_call_trace *t, size_t *cap)
{
    unsigned open[MAX_NEST];
    size_t nopen = 0, retro_start = 0;
    unsigned thread;
    if (!add_context(t, cap, false, 0, 0, 0, &thread))
        return false;
    for (size_t i = 0; i < t->count; i++) {
        spoor_call_record *r = &t->records[i];
        bool exc = spoor_cortexm_is_exc_return(r->site);
        if (exc && r->kind == SPOOR_CALL_ENTER && nopen < MAX_NEST) {
            unsigned idx;
            if (!add_context(t, cap, true, r->function, r->site, i, &idx))
                return false;
            open[nopen++] = idx;
            r->context = idx;
            continue;
        }
        r->context = nopen ? open[nopen - 1] : thread;
        if (!exc || r->kind != SPOOR_CALL_EXIT)
            continue;
        if (nopen) {
            nopen--;
            continue;
        }
        unsigned idx;
        if (!add_context(t, cap, true, r->function, r->site, retro_start, &idx))
            return false;
        for (size_t j = retro_start; j <= i; j++)
            if (t->records[j].context == thread)
                t->records[j].context = idx;
        retro_start = i + 1;
    }
    /* contexts[].first: the first record that ended up in each */
    for (size_t c = 0; c < t->context_count; c++)
        t->contexts[c].first = t->count;
    for (size_t i = t->count; i-- > 0;)
        t->contexts[t->records[i].context].first = i;
    return true;
}

/* Depths per context: enter at d then d+1, exit back to d. A context whose records begin
 * inside calls (the ring was cut) goes below 0: shift it so that its lowest depth is 0. */
static bool assign_depths(spoor_call_trace *t)
{
    int *depth = calloc(t->context_count, sizeof *depth);
    int *low = calloc(t->context_count, sizeof *low);
    if (!depth || !low) {
        free(depth);
        free(low);
        return spoor_set_error(SPOOR_ERR_NOMEM, "out of memory"), false;
    }
    for (size_t i = 0; i < t->count; i++) {
        spoor_call_record *r = &t->records[i];
        int *d = &depth[r->context];
        if (r->kind == SPOOR_CALL_ENTER) {
            r->depth = (*d)++;
        } else {
            r->depth = --(*d);
            if (*d < low[r->context])
                low[r->context] = *d;
        }
    }
    for (size_t i = 0; i < t->count; i++)
        t->records[i].depth -= low[t->records[i].context];
    free(depth);
    free(low);
    return true;
}

static void unwrap_time(spoor_call_trace *t, bool systick)
{
    uint64_t acc = 0;
    for (size_t i = 1; i < t->count; i++) {
        uint32_t a = t->records[i - 1].time, b = t->records[i].time;
        /* SysTick VAL counts down in 24 bits; CYCCNT counts up in 32 */
        acc += systick ? ((a - b) & 0xFFFFFFu) : (uint32_t)(b - a);
        t->records[i].time_ticks = acc;
    }
}

bool spoor_calls_decode(const spoor_calls_info *st, const uint8_t *ring, size_t ring_len,
                        spoor_call_trace *out)
{
    memset(out, 0, sizeof *out);
    size_t need = spoor_calls_ring_bytes(st);
    if (!ring || ring_len < need)
        return spoor_set_error(SPOOR_ERR_TRUNCATED, "call ring truncated: %zu of %zu bytes",
                               ring ? ring_len : 0, need),
               false;
    const size_t size = st->record_size, cap = st->capacity;
    /* written when the call site word is not 0 (sites are odd or EXC_RETURN values) */
    bool wrapped = spoor_le32(ring + (size_t)st->next * size + SPOOR_CALLS_REC_SITE) != 0;
    size_t first = wrapped ? st->next : 0, n = wrapped ? cap : st->next;
    out->records = calloc(n ? n : 1, sizeof *out->records);
    if (!out->records)
        return spoor_set_error(SPOOR_ERR_NOMEM, "out of memory"), false;
    out->wrapped = wrapped;
    out->has_time = st->has_time;
    out->has_context = st->has_context;
    bool gap = wrapped;
    for (size_t k = 0; k < n; k++) {
        size_t slot = (first + k) % cap;
        const uint8_t *p = ring + slot * size;
        uint32_t fn = spoor_le32(p + SPOOR_CALLS_REC_FUNCTION);
        uint32_t site = spoor_le32(p + SPOOR_CALLS_REC_SITE);
        if (site == 0) { /* claimed but never written (a fault inside a hook) */
            out->empty_slots++;
            gap = true;
            continue;
        }
        if ((fn & ~1u) == 0 || (!(site & 1u) && !spoor_cortexm_is_exc_return(site))) {
            spoor_call_trace_free(out);
            return spoor_set_error(SPOOR_ERR_FORMAT,
                                   "call ring: record in slot %zu is corrupt: function 0x%08x, "
                                   "call site 0x%08x",
                                   slot, fn, site),
                   false;
        }
        spoor_call_record *r = &out->records[out->count++];
        r->kind = (fn & SPOOR_CALLS_KIND_ENTER) ? SPOOR_CALL_ENTER : SPOOR_CALL_EXIT;
        r->function = fn & ~1u;
        r->site = spoor_cortexm_is_exc_return(site) ? site : site & ~1u;
        size_t extra = SPOOR_CALLS_REC_EXTRA;
        if (st->has_time) {
            r->time = spoor_le32(p + extra);
            extra += 4;
        }
        if (st->has_context)
            r->context_id = spoor_le32(p + extra);
        r->after_gap = gap;
        gap = false;
    }
    if (st->has_time)
        unwrap_time(out, st->time_systick);
    size_t ccap = 0;
    bool ok =
        st->has_context ? contexts_from_ids(out, &ccap) : contexts_from_exc_return(out, &ccap);
    if (!ok || !assign_depths(out)) {
        spoor_call_trace_free(out);
        return false;
    }
    return true;
}

void spoor_call_trace_free(spoor_call_trace *t)
{
    if (!t)
        return;
    free(t->records);
    free(t->contexts);
    memset(t, 0, sizeof *t);
}
