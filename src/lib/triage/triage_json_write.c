/* A triage's JSON Lines output and its buckets as JSON (spoor/triage.h), the writer beside the
 * reader of triage_json.c: what one writes, the other merges back. docs/triage.md. */
#include <stdlib.h>

#include "base/set_error.h"
#include "spoor/triage.h"
#include "util/json_write.h"

static void sig_json(json_out *j, const spoor_triage_sig *s)
{
    json_string(j, "signature", s->text);
    json_string(j, "reason", s->reason);
    json_string(j, "fault", s->fault);
    json_array_begin(j, "bits");
    for (size_t i = 0; i < s->nbits; i++)
        json_string(j, NULL, s->bits[i]);
    json_array_end(j);
    json_string(j, "assert", s->assert_at);
    json_array_begin(j, "frames");
    for (size_t i = 0; i < s->nframes; i++)
        json_string(j, NULL, s->frames[i]);
    json_array_end(j);
}

static void bucket_json(json_out *j, const spoor_triage_bucket *b)
{
    char when[32];
    json_object_begin(j, NULL);
    json_string(j, "bucket", b->sig.id);
    json_uint(j, "count", b->count);
    sig_json(j, &b->sig);
    json_array_begin(j, "versions");
    for (size_t v = 0; v < b->nversions; v++) {
        json_object_begin(j, NULL);
        json_string(j, "build_id", b->versions[v].build_id);
        json_string(j, "version", b->versions[v].version);
        json_uint(j, "count", b->versions[v].count);
        json_object_end(j);
    }
    json_array_end(j);
    json_string(j, "first", spoor_triage_time_text(b->first, when));
    json_string(j, "last", spoor_triage_time_text(b->last, when));
    json_string(j, "example", b->example);
    json_object_end(j);
}

/* The text an outbuf in memory collected, or NULL (the error set) when memory ran out. */
static char *take(outbuf *ob, size_t *len)
{
    char *text = ob_take(ob, len);
    free(ob);
    if (!text)
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
    return text;
}

static outbuf *memory_outbuf(void)
{
    outbuf *ob = malloc(sizeof *ob);
    if (ob)
        ob_init_memory(ob);
    else
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
    return ob;
}

char *spoor_triage_bucket_json(const spoor_triage_bucket *b, size_t *len)
{
    outbuf *ob = memory_outbuf();
    if (!ob)
        return NULL;
    json_out j;
    json_init(&j, ob);
    bucket_json(&j, b);
    return take(ob, len);
}

char *spoor_triage_json(spoor_triage *t, bool per_dump, size_t *len)
{
    json_out j;
    const spoor_triage_bucket *b;
    size_t nb = spoor_triage_buckets(t, &b);
    char when[32];
    /* the shard line first: the format's version, the shards these lines count */
    size_t ns = spoor_triage_shards(t, NULL);
    const char **ids = malloc((ns ? ns : 1) * sizeof *ids);
    outbuf *ob = ids ? memory_outbuf() : NULL;
    if (!ob) {
        free(ids);
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
        return NULL;
    }
    spoor_triage_shards(t, ids);
    json_init(&j, ob);
    json_object_begin(&j, NULL);
    json_uint(&j, "spoor_triage", SPOOR_TRIAGE_SHARD_VERSION);
    json_array_begin(&j, "shards");
    for (size_t i = 0; i < ns; i++)
        json_string(&j, NULL, ids[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    free(ids);
    for (size_t i = 0; i < nb; i++) {
        json_init(&j, ob);
        bucket_json(&j, &b[i]);
        json_finish(&j);
    }
    const spoor_triage_dump *d;
    size_t nd = spoor_triage_dumps(t, &d);
    for (size_t i = 0; i < nd; i++) {
        if (!d[i].error && !per_dump)
            continue;
        json_init(&j, ob);
        json_object_begin(&j, NULL);
        json_string(&j, "dump", d[i].path);
        if (d[i].error) {
            json_string(&j, "error", d[i].error);
        } else {
            json_string(&j, "bucket", d[i].bucket);
            json_string(&j, "build_id", d[i].build_id);
            json_string(&j, "time", spoor_triage_time_text(d[i].time, when));
        }
        json_object_end(&j);
        json_finish(&j);
    }
    return take(ob, len);
}
