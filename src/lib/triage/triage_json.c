/* Reading back one line of a triage's JSON Lines output (triage_internal.h): the line read
 * into a tree by the one JSON reader (base/json_tree.h), and the mapping of a bucket or per-dump
 * object onto the records. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_tree.h"
#include "base/set_error.h"
#include "spoor/fault.h"
#include "triage/triage_internal.h"
#include "util/number.h"

#define MAX_DEPTH 4 /* a bucket line: object > versions > object */
#define MAX_ITEMS 4096
#define MAX_SHARDS (1u << 20) /* the ids of a shard line: a merge of that many shards */
#define MAX_KEYS 32           /* a line's objects have a dozen members */

struct reader {
    char error[160];
};

static bool fail(struct reader *r, const char *fmt, ...)
{
    if (!r->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->error, sizeof r->error, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* A string member (nullable: null or absent gives *out NULL). */
static bool get_string(struct reader *r, const spoor_json_value *o, const char *key, bool nullable,
                       char **out)
{
    const spoor_json_value *v = spoor_json_member(o, key);
    *out = NULL;
    if (!v || v->type == SPOOR_JSON_NULL)
        return nullable || fail(r, "\"%s\": missing", key);
    if (v->type != SPOOR_JSON_STRING)
        return fail(r, "\"%s\": expected a string", key);
    if (!(*out = strdup(v->text)))
        return fail(r, "out of memory");
    return true;
}

static bool get_count(struct reader *r, const spoor_json_value *o, const char *key, uint64_t *out)
{
    const spoor_json_value *v = spoor_json_member(o, key);
    long long n;
    if (!spoor_json_integer(v, &n) || n < 1 || (unsigned long long)n > TRIAGE_MAX_COUNT)
        return fail(r, "\"%s\": expected a count of 1 to 2^53", key);
    *out = (uint64_t)n;
    return true;
}

static bool get_time(struct reader *r, const spoor_json_value *o, const char *key, int64_t *out)
{
    const spoor_json_value *v = spoor_json_member(o, key);
    if (!v || v->type != SPOOR_JSON_STRING || !spoor_triage_time_parse(v->text, out))
        return fail(r, "\"%s\": expected a time YYYY-MM-DDTHH:MM:SSZ", key);
    return true;
}

static bool get_strings(struct reader *r, const spoor_json_value *o, const char *key, size_t max,
                        char ***out, size_t *n)
{
    const spoor_json_value *v = spoor_json_member(o, key);
    if (!v || v->type != SPOOR_JSON_ARRAY || v->n > max)
        return fail(r, "\"%s\": expected an array of at most %zu strings", key, max);
    if (v->n && !(*out = calloc(v->n, sizeof **out)))
        return fail(r, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != SPOOR_JSON_STRING)
            return fail(r, "\"%s\": expected an array of strings", key);
        if (!((*out)[i] = strdup(v->items[i].text)))
            return fail(r, "out of memory");
        (*n)++;
    }
    return true;
}

static bool is_id(const char *s)
{
    if (!s || strlen(s) != 16)
        return false;
    for (const char *p = s; *p; p++)
        if (spoor_hex_digit((unsigned char)*p) < 0 || (*p >= 'A' && *p <= 'F'))
            return false;
    return true;
}

static bool to_bucket(struct reader *r, const spoor_json_value *o, spoor_triage_bucket *b)
{
    char *id = NULL, *signature = NULL;
    spoor_triage_sig *s = &b->sig;
    bool ok = get_string(r, o, "bucket", false, &id) && get_count(r, o, "count", &b->count) &&
              get_string(r, o, "signature", false, &signature) &&
              get_string(r, o, "reason", false, &s->reason) &&
              get_string(r, o, "fault", true, &s->fault) &&
              get_strings(r, o, "bits", SPOOR_FAULT_MAX_BITS, &s->bits, &s->nbits) &&
              get_string(r, o, "assert", true, &s->assert_at) &&
              get_strings(r, o, "frames", SPOOR_TRIAGE_MAX_K, &s->frames, &s->nframes) &&
              get_time(r, o, "first", &b->first) && get_time(r, o, "last", &b->last) &&
              get_string(r, o, "example", false, &b->example);
    if (ok && b->first > b->last)
        ok = fail(r, "\"first\" is after \"last\"");
    if (ok && !spoor_triage_sig_finish(s))
        ok = fail(r, "out of memory");
    if (ok && (!is_id(id) || strcmp(id, s->id) || strcmp(signature, s->text)))
        ok = fail(r, "bucket %s: its id and signature do not match its parts (expected %s: %s)", id,
                  s->id, s->text);
    free(id);
    free(signature);
    const spoor_json_value *versions = spoor_json_member(o, "versions");
    if (ok && (!versions || versions->type != SPOOR_JSON_ARRAY || !versions->n ||
               versions->n > MAX_ITEMS))
        ok = fail(r, "\"versions\": expected an array of objects");
    if (ok && !(b->versions = calloc(versions->n, sizeof *b->versions)))
        ok = fail(r, "out of memory");
    uint64_t total = 0;
    for (size_t i = 0; ok && i < versions->n; i++) {
        const spoor_json_value *v = &versions->items[i];
        spoor_triage_version *out = &b->versions[b->nversions];
        if (v->type != SPOOR_JSON_OBJECT)
            ok = fail(r, "\"versions\": expected an array of objects");
        else if ((ok = get_string(r, v, "build_id", false, &out->build_id) &&
                       get_string(r, v, "version", true, &out->version) &&
                       get_count(r, v, "count", &out->count)))
            b->nversions++;
        else {
            free(out->build_id);
            free(out->version);
        }
        for (size_t j = 0; ok && j + 1 < b->nversions; j++)
            if (strcmp(b->versions[j].build_id, out->build_id) >= 0)
                ok = fail(r, "\"versions\": not sorted by build_id, or one twice");
        total += ok ? out->count : 0;
    }
    if (ok && total != b->count) /* (each count at most 2^53: the sum cannot wrap) */
        ok = fail(r, "\"count\" %llu is not the sum of the versions' counts (%llu)",
                  (unsigned long long)b->count, (unsigned long long)total);
    if (!ok)
        spoor_triage_bucket_clear(b);
    return ok;
}

static bool to_dump(struct reader *r, const spoor_json_value *o, spoor_triage_dump *d)
{
    char *bucket = NULL;
    bool ok =
        get_string(r, o, "dump", false, &d->path) && get_string(r, o, "error", true, &d->error);
    if (ok && !d->error) {
        ok = get_string(r, o, "bucket", false, &bucket) &&
             get_string(r, o, "build_id", true, &d->build_id) && get_time(r, o, "time", &d->time);
        if (ok && !is_id(bucket))
            ok = fail(r, "\"bucket\": expected 16 lowercase hex digits");
        if (ok)
            memcpy(d->bucket, bucket, sizeof d->bucket);
    }
    free(bucket);
    if (!ok)
        spoor_triage_dump_clear(d);
    return ok;
}

/* A key twice in one object (a hand-edited line: which one counts?), anywhere in v; "" for
 * an object of more than MAX_KEYS members. */
static const char *duplicate_key(const spoor_json_value *v)
{
    if (v->type != SPOOR_JSON_OBJECT && v->type != SPOOR_JSON_ARRAY)
        return NULL;
    if (v->type == SPOOR_JSON_OBJECT && v->n > MAX_KEYS)
        return "";
    for (size_t i = 0; i < v->n; i++) {
        for (size_t k = 0; v->type == SPOOR_JSON_OBJECT && k < i; k++)
            if (!strcmp(v->keys[i], v->keys[k]))
                return v->keys[i];
        const char *d = duplicate_key(&v->items[i]);
        if (d)
            return d;
    }
    return NULL;
}

/* The shard line: {"spoor_triage": VERSION, "shards": [ID, ...]}. */
static bool to_shard(struct reader *r, const spoor_json_value *o, struct triage_line *out)
{
    long long version;
    const spoor_json_value *ids = spoor_json_member(o, "shards");
    if (!spoor_json_integer(spoor_json_member(o, "spoor_triage"), &version) ||
        version != TRIAGE_SHARD_VERSION)
        return fail(r, "shard format version %s, this spoor reads version %d",
                    spoor_json_member(o, "spoor_triage")->text
                        ? spoor_json_member(o, "spoor_triage")->text
                        : "?",
                    TRIAGE_SHARD_VERSION);
    if (!ids || ids->type != SPOOR_JSON_ARRAY || !ids->n)
        return fail(r, "\"shards\": expected an array of shard ids");
    if (!(out->shards = calloc(ids->n, sizeof *out->shards)))
        return fail(r, "out of memory");
    for (size_t i = 0; i < ids->n; i++) {
        if (ids->items[i].type != SPOOR_JSON_STRING || !is_id(ids->items[i].text)) {
            free(out->shards);
            out->shards = NULL;
            return fail(r, "\"shards\": expected ids of 16 lowercase hex digits");
        }
        memcpy(out->shards[i], ids->items[i].text, 17);
    }
    out->nshards = ids->n;
    return true;
}

bool spoor_triage_line_parse(const char *text, size_t len, struct triage_line *out)
{
    struct reader r = {{0}};
    spoor_json_value v;
    spoor_json_error err;
    memset(out, 0, sizeof *out);
    bool ok = spoor_json_parse(text, len, MAX_DEPTH, MAX_SHARDS, &v, &err);
    if (!ok)
        fail(&r, "%s", err.message);
    if (ok && v.type != SPOOR_JSON_OBJECT)
        ok = fail(&r, "expected a JSON object");
    const char *twice = ok ? duplicate_key(&v) : NULL;
    if (twice)
        ok = twice[0] ? fail(&r, "the key \"%s\" twice in one object", twice)
                      : fail(&r, "an object of more than %d members", MAX_KEYS);
    if (ok) {
        out->kind = spoor_json_member(&v, "spoor_triage") ? TRIAGE_LINE_SHARD
                    : spoor_json_member(&v, "dump")       ? TRIAGE_LINE_DUMP
                                                          : TRIAGE_LINE_BUCKET;
        ok = out->kind == TRIAGE_LINE_SHARD  ? to_shard(&r, &v, out)
             : out->kind == TRIAGE_LINE_DUMP ? to_dump(&r, &v, &out->dump)
                                             : to_bucket(&r, &v, &out->bucket);
    }
    spoor_json_value_free(&v);
    if (!ok)
        spoor_set_error(SPOOR_ERR_FORMAT, "%s", r.error);
    return ok;
}
