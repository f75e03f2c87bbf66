/* Contexts and depths of call records as they arrive, for live records (spoor/calls_decode.h,
 * "Records one at a time"). */
#include <string.h>

#include "spoor/calls_decode.h"
#include "spoor/cortexm_facts.h"

void spoor_calls_stream_init(spoor_calls_stream *s)
{
    memset(s, 0, sizeof *s);
    s->contexts = 1; /* index 0: the thread */
}

void spoor_calls_stream_lose(spoor_calls_stream *s)
{
    s->nopen = 0;
    memset(s->depth, 0, sizeof s->depth);
}

static unsigned open_handler(spoor_calls_stream *s, unsigned level, const spoor_call_record *r)
{
    s->open[level] = (spoor_call_context){
        .handler = true, .id = r->function, .exc_return = r->site, .first = s->count};
    s->index[level] = s->contexts++;
    s->depth[level] = 0;
    return level;
}

void spoor_calls_stream_add(spoor_calls_stream *s, spoor_call_record *r,
                            const spoor_call_context **ctx)
{
    if (r->after_gap)
        spoor_calls_stream_lose(s);
    bool exc = spoor_cortexm_is_exc_return(r->site);
    unsigned level = s->nopen;
    if (exc && r->kind == SPOOR_CALL_ENTER && s->nopen < SPOOR_CALLS_STREAM_NEST)
        level = open_handler(s, ++s->nopen, r);
    else if (exc && r->kind == SPOOR_CALL_EXIT && s->nopen == 0)
        /* the stream began inside this handler: a context for its exit alone, one level up
         * (closed right away) */
        level = open_handler(s, 1, r);
    int *d = &s->depth[level];
    if (r->kind == SPOOR_CALL_ENTER)
        r->depth = (*d)++;
    else
        r->depth = *d > 0 ? --(*d) : 0;
    r->context = s->index[level];
    s->ctx = level ? s->open[level] : (spoor_call_context){.first = 0};
    *ctx = &s->ctx;
    if (exc && r->kind == SPOOR_CALL_EXIT && level > 0)
        s->nopen = level - 1;
    s->count++;
}
