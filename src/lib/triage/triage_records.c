/* The records of a triage (spoor/triage.h): a signature's text and id, freeing signatures,
 * buckets and dumps, times as text. */
#define _DEFAULT_SOURCE /* timegm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/set_error.h"
#include "triage/triage_internal.h"

void spoor_triage_sig_clear(spoor_triage_sig *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbits; i++)
        free(s->bits[i]);
    for (size_t i = 0; i < s->nframes; i++)
        free(s->frames[i]);
    free(s->bits);
    free(s->frames);
    free(s->reason);
    free(s->fault);
    free(s->assert_at);
    free(s->text);
    memset(s, 0, sizeof *s);
}

static bool append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        size_t c = (*len + n + 1) * 2;
        char *grown = realloc(*buf, c);
        if (!grown)
            return false;
        *buf = grown;
        *cap = c;
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return true;
}

uint64_t spoor_triage_fnv(uint64_t h, const void *data, size_t n)
{
    for (const unsigned char *p = data, *end = p + n; p < end; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

bool spoor_triage_sig_finish(spoor_triage_sig *s)
{
    char *t = NULL;
    size_t len = 0, cap = 0;
    bool ok = append(&t, &len, &cap, s->reason ? s->reason : "unknown");
    if (s->fault)
        ok = ok && append(&t, &len, &cap, " ") && append(&t, &len, &cap, s->fault);
    for (size_t i = 0; i < s->nbits; i++)
        ok = ok && append(&t, &len, &cap, i ? "," : " ") && append(&t, &len, &cap, s->bits[i]);
    if (s->assert_at)
        ok = ok && append(&t, &len, &cap, " at ") && append(&t, &len, &cap, s->assert_at);
    ok = ok && append(&t, &len, &cap, " |");
    for (size_t i = 0; i < s->nframes; i++)
        ok = ok && append(&t, &len, &cap, i ? " < " : " ") && append(&t, &len, &cap, s->frames[i]);
    if (!ok) {
        free(t);
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
        return false;
    }
    uint64_t h = spoor_triage_fnv(TRIAGE_FNV_START, t, strlen(t));
    snprintf(s->id, sizeof s->id, "%016llx", (unsigned long long)h);
    free(s->text);
    s->text = t;
    return true;
}

void spoor_triage_bucket_clear(spoor_triage_bucket *b)
{
    spoor_triage_sig_clear(&b->sig);
    for (size_t i = 0; i < b->nversions; i++) {
        free(b->versions[i].build_id);
        free(b->versions[i].version);
    }
    free(b->versions);
    free(b->example);
    memset(b, 0, sizeof *b);
}

void spoor_triage_dump_clear(spoor_triage_dump *d)
{
    free(d->path);
    free(d->error);
    free(d->build_id);
    memset(d, 0, sizeof *d);
}

char *spoor_triage_time_text(int64_t t, char out[32])
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, 32, "%lld", (long long)t);
    return out;
}

bool spoor_triage_time_parse(const char *s, int64_t *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int used = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &used) != 6 ||
        used != (int)strlen(s) || used != 20)
        return false;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
        tm.tm_min > 59 || tm.tm_sec > 60)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *t = (int64_t)timegm(&tm);
    return true;
}
