/* The records of a triage (spoor/triage.h): freeing buckets and dumps, times as text. */
#define _DEFAULT_SOURCE /* timegm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "triage/triage_internal.h"

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
