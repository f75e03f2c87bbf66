/* Fleet triage (spoor/triage.h): dumps read and signed on worker threads, folded into buckets
 * by signature id; bucket and per-dump lines of earlier runs merged in the same way. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_walk.h"
#include "base/hash_index.h"
#include "base/set_error.h"
#include "triage/triage_internal.h"
#include "util/grow.h"

struct spoor_triage {
    spoor_elf_dir *dir;
    unsigned k;
    spoor_triage_bucket *buckets;
    size_t nbuckets, bucket_cap;
    spoor_hash_index index; /* of the buckets by id */
    spoor_triage_dump *dumps;
    size_t ndumps, dump_cap;
    bool buckets_sorted, dumps_sorted;
    char **warnings; /* spoor_triage_warnings */
    size_t nwarnings, warning_cap;
    struct shard *shards; /* spoor_triage_shards */
    size_t nshards, shard_cap;
};

struct shard {
    char id[17];
    char *from;   /* the file it was merged from; NULL: signed in this run */
    size_t order; /* of adding */
};

static bool add_shard(spoor_triage *t, const char *id, const char *from)
{
    if (spoor_grow((void **)&t->shards, &t->shard_cap, t->nshards + 1, sizeof *t->shards))
        return false;
    struct shard *s = &t->shards[t->nshards];
    memcpy(s->id, id, sizeof s->id);
    s->order = t->nshards;
    if (from && !(s->from = strdup(from)))
        return false;
    if (!from)
        s->from = NULL;
    t->nshards++;
    return true;
}

static int cmp_shard(const void *a, const void *b)
{
    const struct shard *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

size_t spoor_triage_shards(spoor_triage *t, const char *ids[])
{
    if (t->nshards)
        qsort(t->shards, t->nshards, sizeof *t->shards, cmp_shard);
    for (size_t i = 0; ids && i < t->nshards; i++)
        ids[i] = t->shards[i].id;
    return t->nshards;
}

/* A warning line, once (out of memory: left out). */
static void add_warning(spoor_triage *t, const char *line)
{
    for (size_t i = 0; i < t->nwarnings; i++)
        if (!strcmp(t->warnings[i], line))
            return;
    char *copy = strdup(line);
    if (copy &&
        !spoor_grow((void **)&t->warnings, &t->warning_cap, t->nwarnings + 1, sizeof *t->warnings))
        t->warnings[t->nwarnings++] = copy;
    else
        free(copy);
}

size_t spoor_triage_warnings(spoor_triage *t, const char *const **list)
{
    *list = (const char *const *)t->warnings;
    return t->nwarnings;
}

spoor_triage *spoor_triage_new(spoor_elf_dir *dir, unsigned k)
{
    spoor_triage *t = calloc(1, sizeof *t);
    if (!t) {
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
        return NULL;
    }
    t->dir = dir;
    t->k = k ? k : SPOOR_TRIAGE_DEFAULT_K;
    const char *const *w;
    for (size_t i = 0, n = dir ? spoor_elf_dir_warnings(dir, &w) : 0; i < n; i++)
        add_warning(t, w[i]);
    return t;
}

void spoor_triage_free(spoor_triage *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nbuckets; i++)
        spoor_triage_bucket_clear(&t->buckets[i]);
    for (size_t i = 0; i < t->ndumps; i++)
        spoor_triage_dump_clear(&t->dumps[i]);
    free(t->buckets);
    spoor_hash_free(&t->index);
    free(t->dumps);
    for (size_t i = 0; i < t->nwarnings; i++)
        free(t->warnings[i]);
    free(t->warnings);
    for (size_t i = 0; i < t->nshards; i++)
        free(t->shards[i].from);
    free(t->shards);
    free(t);
}

struct file_list {
    spoor_triage *t;
    char ***paths;
    size_t *n, cap;
};

static int skipped(const char *path, const char *why, void *ctx)
{
    struct file_list *l = ctx;
    char line[4200];
    snprintf(line, sizeof line, "%s: skipped: %s", path, why);
    add_warning(l->t, line);
    return 0;
}

static int add_path(const char *path, void *ctx)
{
    struct file_list *l = ctx;
    if (spoor_grow((void **)l->paths, &l->cap, *l->n + 1, sizeof **l->paths) ||
        !((*l->paths)[*l->n] = strdup(path)))
        return -1;
    ++*l->n;
    return 0;
}

bool spoor_triage_list_files(spoor_triage *t, const char *path, char ***paths, size_t *n)
{
    struct file_list l = {t, paths, n, 0};
    return spoor_walk_files(path, add_path, skipped, &l) == 0;
}

static uint64_t id_of(const char *id)
{
    return strtoull(id, NULL, 16);
}

static uint64_t bucket_hash(const void *buckets, size_t i)
{
    return id_of(((const spoor_triage_bucket *)buckets)[i].sig.id);
}

static bool bucket_is(const void *buckets, size_t i, const void *id)
{
    return !strcmp(((const spoor_triage_bucket *)buckets)[i].sig.id, id);
}

static int cmp_version(const void *a, const void *b)
{
    return strcmp(((const spoor_triage_version *)a)->build_id,
                  ((const spoor_triage_version *)b)->build_id);
}

/* Folds src (taken over) into dst: counts add, versions join, first/last widen, the example is
 * the earliest dump (equal times: the smaller path). Associative and commutative. */
static bool fold(spoor_triage_bucket *dst, spoor_triage_bucket *src)
{
    spoor_triage_version *v = realloc(dst->versions, (dst->nversions + src->nversions) * sizeof *v);
    if (!v)
        return false;
    dst->versions = v;
    for (size_t i = 0; i < src->nversions; i++) {
        spoor_triage_version *s = &src->versions[i], *same = NULL;
        for (size_t j = 0; j < dst->nversions && !same; j++)
            if (!strcmp(v[j].build_id, s->build_id))
                same = &v[j];
        if (same) {
            same->count += s->count;
            if (!same->version && s->version) {
                same->version = s->version;
                s->version = NULL;
            }
            free(s->build_id);
            free(s->version);
        } else {
            v[dst->nversions++] = *s;
        }
    }
    src->nversions = 0;
    qsort(v, dst->nversions, sizeof *v, cmp_version);
    dst->count += src->count;
    if (src->first < dst->first ||
        (src->first == dst->first && strcmp(src->example, dst->example) < 0)) {
        char *e = dst->example;
        dst->example = src->example;
        src->example = e;
    }
    dst->first = src->first < dst->first ? src->first : dst->first;
    dst->last = src->last > dst->last ? src->last : dst->last;
    spoor_triage_bucket_clear(src);
    return true;
}

/* Adds a bucket (taken over, cleared in every case). */
static bool add_bucket(spoor_triage *t, spoor_triage_bucket *b)
{
    if (spoor_hash_reserve(&t->index, t->nbuckets, bucket_hash, t->buckets))
        goto nomem;
    size_t *slot = spoor_hash_slot(&t->index, id_of(b->sig.id), bucket_is, t->buckets, b->sig.id);
    if (*slot && t->buckets[*slot - 1].count > TRIAGE_MAX_COUNT - b->count) {
        spoor_set_error(SPOOR_ERR_FORMAT, "bucket %s: counts add up to more than 2^53", b->sig.id);
        spoor_triage_bucket_clear(b);
        return false;
    }
    if (*slot)
        return fold(&t->buckets[*slot - 1], b) || (spoor_triage_bucket_clear(b), false);
    if (spoor_grow((void **)&t->buckets, &t->bucket_cap, t->nbuckets + 1, sizeof *t->buckets))
        goto nomem;
    t->buckets[t->nbuckets++] = *b;
    *slot = t->nbuckets;
    t->buckets_sorted = false;
    return true;
nomem:
    spoor_triage_bucket_clear(b);
    spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
    return false;
}

static bool add_dump(spoor_triage *t, spoor_triage_dump *d)
{
    if (spoor_grow((void **)&t->dumps, &t->dump_cap, t->ndumps + 1, sizeof *t->dumps)) {
        spoor_triage_dump_clear(d);
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
        return false;
    }
    t->dumps[t->ndumps++] = *d;
    t->dumps_sorted = false;
    return true;
}

/* ---- signing files on threads ---- */

struct result {
    spoor_triage_sig sig;
    char *error;
    char *build_id;
    int64_t time;
};

struct job {
    spoor_triage *t;
    struct triage_handles *handles;
    char *const *paths;
    size_t n;
    atomic_size_t next;
    struct result *results;
};

static char *dup_error(void)
{
    const char *e = spoor_last_error();
    return strdup(e[0] ? e : "cannot be read");
}

static void sign_one(spoor_triage *t, struct triage_handles *handles, const char *path,
                     struct result *r)
{
    struct stat st;
    r->time = stat(path, &st) == 0 ? (int64_t)st.st_mtime : 0;
    spoor_dump *dump = spoor_dump_load(path);
    if (!dump) {
        r->error = dup_error();
        return;
    }
    if (!dump->build_id) {
        spoor_dump_free(dump);
        r->error =
            strdup("no build-id in the dump: its ELF cannot be found (spoor crash -e FW.elf)");
        return;
    }
    char hex[130];
    r->build_id = strdup(spoor_build_id_hex(dump->build_id, dump->build_id_len, hex));
    spoor_elf *elf = spoor_elf_dir_open(t->dir, dump->build_id, dump->build_id_len);
    if (!elf) {
        spoor_dump_free(dump);
        r->error = dup_error();
        return;
    }
    spoor_elf *handle = spoor_triage_handle_take(handles, elf);
    if (!handle) {
        spoor_dump_free(dump);
        r->error = strdup("triage: out of memory");
        return;
    }
    bool ok = spoor_triage_sign(handle, dump, path, t->k, &r->sig);
    spoor_triage_handle_give(handles, elf, handle);
    if (!ok)
        r->error = dup_error();
}

static void *worker(void *arg)
{
    struct job *j = arg;
    size_t i;
    while ((i = atomic_fetch_add(&j->next, 1)) < j->n)
        sign_one(j->t, j->handles, j->paths[i], &j->results[i]);
    return NULL;
}

/* One signed file as a bucket of one, and its per-dump record. */
static bool add_result(spoor_triage *t, const char *path, struct result *r)
{
    spoor_triage_dump d = {.time = r->time, .error = r->error, .build_id = r->build_id};
    r->error = r->build_id = NULL;
    if (!(d.path = strdup(path)))
        goto nomem;
    if (!d.error) {
        spoor_triage_bucket b = {.sig = r->sig, .count = 1, .first = r->time, .last = r->time};
        memset(&r->sig, 0, sizeof r->sig);
        memcpy(d.bucket, b.sig.id, sizeof d.bucket);
        b.versions = calloc(1, sizeof *b.versions);
        b.example = strdup(path);
        if (b.versions) {
            b.nversions = 1;
            b.versions[0].count = 1;
            b.versions[0].build_id = strdup(d.build_id ? d.build_id : "");
        }
        if (!b.versions || !b.example || !b.versions[0].build_id) {
            spoor_triage_bucket_clear(&b);
            goto nomem;
        }
        if (!add_bucket(t, &b))
            goto nomem;
    }
    return add_dump(t, &d);
nomem:
    spoor_triage_dump_clear(&d);
    spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
    return false;
}

/* What an ELF that signed dumps could not read (a damaged .debug_frame, a DWARF unit): said,
 * since it can move dumps to other buckets. */
static void elf_warnings(const spoor_elf *elf, void *ctx)
{
    const char *const *w;
    for (size_t i = 0, n = spoor_elf_warnings(elf, &w); i < n; i++)
        add_warning(ctx, w[i]);
}

bool spoor_triage_add_files(spoor_triage *t, char *const *paths, size_t n, unsigned threads)
{
    if (!t->dir) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "triage: no ELF folder (--elf-dir) to find ELFs in");
        return false;
    }
    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (threads > n)
        threads = n ? (unsigned)n : 1;
    struct job j = {.t = t,
                    .handles = spoor_triage_handles_new(),
                    .paths = paths,
                    .n = n,
                    .results = calloc(n ? n : 1, sizeof *j.results)};
    pthread_t *ids = calloc(threads, sizeof *ids);
    if (!j.results || !ids || !j.handles) {
        free(j.results);
        free(ids);
        spoor_triage_handles_free(j.handles, NULL, NULL);
        spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
        return false;
    }
    atomic_init(&j.next, 0);
    unsigned started = 0;
    for (; started + 1 < threads; started++) /* this thread is the last worker */
        if (pthread_create(&ids[started], NULL, worker, &j) != 0)
            break;
    worker(&j);
    for (unsigned i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    free(ids);
    spoor_triage_handles_free(j.handles, elf_warnings, t);
    /* this run's shard id: of every dump's path, time and bucket or error, in any order */
    uint64_t id = n;
    for (size_t i = 0; i < n; i++) {
        const struct result *r = &j.results[i];
        char time[24];
        snprintf(time, sizeof time, "%lld", (long long)r->time);
        uint64_t h = spoor_triage_fnv(TRIAGE_FNV_START, paths[i], strlen(paths[i]) + 1);
        h = spoor_triage_fnv(h, time, strlen(time) + 1);
        h = r->error ? spoor_triage_fnv(h, r->error, strlen(r->error))
                     : spoor_triage_fnv(h, r->sig.id, 16);
        id += h;
    }
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
    bool ok = add_shard(t, hex, NULL);
    for (size_t i = 0; i < n; i++) {
        if (ok)
            ok = add_result(t, paths[i], &j.results[i]);
        spoor_triage_sig_clear(&j.results[i].sig);
        free(j.results[i].error);
        free(j.results[i].build_id);
    }
    free(j.results);
    return ok;
}

/* ---- merging earlier output ---- */

static int cmp_id17(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* One shard's bucket lines name each bucket once (its lines were made from one table): a
 * bucket twice is a hand-edited or concatenated shard, whose counts would add up twice. */
static bool bucket_once(char (*ids)[17], size_t n, const char *name)
{
    if (n)
        qsort(ids, n, sizeof *ids, cmp_id17);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(ids[i - 1], ids[i])) {
            spoor_set_error(SPOOR_ERR_FORMAT, "%s: bucket %s twice in one shard", name, ids[i]);
            return false;
        }
    return true;
}

/* Every shard merged once: the same shard twice (one file given twice, a merged output with
 * one of its shards again) would count its dumps twice. */
static bool shards_once(spoor_triage *t, const char *name)
{
    spoor_triage_shards(t, NULL);
    for (size_t i = 1; i < t->nshards; i++)
        if (!strcmp(t->shards[i - 1].id, t->shards[i].id)) {
            const char *a = t->shards[i - 1].from, *b = t->shards[i].from;
            spoor_set_error(SPOOR_ERR_FORMAT, "%s: shard %s is merged twice (from %s and %s)", name,
                            t->shards[i].id, a ? a : "this run", b ? b : "this run");
            return false;
        }
    return true;
}

bool spoor_triage_merge_text(spoor_triage *t, const char *text, size_t len, const char *name)
{
    size_t line = 0, nseen = 0, seen_cap = 0;
    char(*seen)[17] = NULL; /* the buckets of the current shard */
    bool shard = false, ok = true;
    for (const char *p = text, *end = text + len; ok && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        line++;
        const char *q = p;
        while (q < stop && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        p = nl ? nl + 1 : end;
        if (q == stop)
            continue;
        struct triage_line l;
        char why[400];
        if (!spoor_triage_line_parse(q, (size_t)(stop - q), &l)) {
            snprintf(why, sizeof why, "%s", spoor_last_error());
            spoor_set_error(SPOOR_ERR_FORMAT, "%s: line %zu: %s", name, line, why);
            ok = false;
        } else if (l.kind == TRIAGE_LINE_SHARD) {
            ok = bucket_once(seen, nseen, name);
            nseen = 0;
            for (size_t i = 0; ok && i < l.nshards; i++)
                if (!add_shard(t, l.shards[i], name)) {
                    spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
                    ok = false;
                }
            free(l.shards);
            shard = true;
        } else if (!shard) {
            if (l.kind == TRIAGE_LINE_BUCKET)
                spoor_triage_bucket_clear(&l.bucket);
            else
                spoor_triage_dump_clear(&l.dump);
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "%s: line %zu: no shard line {\"spoor_triage\":%d,\"shards\":[...]} "
                            "before it: not spoor triage --json output of this format",
                            name, line, TRIAGE_SHARD_VERSION);
            ok = false;
        } else if (l.kind == TRIAGE_LINE_BUCKET) {
            if (spoor_grow((void **)&seen, &seen_cap, nseen + 1, sizeof *seen)) {
                spoor_triage_bucket_clear(&l.bucket);
                spoor_set_error(SPOOR_ERR_NOMEM, "triage: out of memory");
                ok = false;
            } else {
                memcpy(seen[nseen++], l.bucket.sig.id, 17);
                ok = add_bucket(t, &l.bucket);
                if (!ok && spoor_last_status() != SPOOR_ERR_NOMEM) {
                    snprintf(why, sizeof why, "%s", spoor_last_error());
                    spoor_set_error(SPOOR_ERR_FORMAT, "%s: line %zu: %s", name, line, why);
                }
            }
        } else {
            ok = add_dump(t, &l.dump);
        }
    }
    ok = ok && bucket_once(seen, nseen, name) && shards_once(t, name);
    free(seen);
    return ok;
}

bool spoor_triage_merge_file(spoor_triage *t, const char *path)
{
    uint8_t *text;
    size_t len;
    if (!spoor_dump_read_file(path, &text, &len))
        return false;
    bool ok = spoor_triage_merge_text(t, (const char *)text, len, path);
    free(text);
    return ok;
}

/* ---- results ---- */

static int cmp_bucket(const void *a, const void *b)
{
    const spoor_triage_bucket *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->sig.id, y->sig.id);
}

size_t spoor_triage_buckets(spoor_triage *t, const spoor_triage_bucket **out)
{
    if (!t->buckets_sorted) {
        if (t->nbuckets)
            qsort(t->buckets, t->nbuckets, sizeof *t->buckets, cmp_bucket);
        if (t->index.cap) /* the buckets moved: the same slots, no allocation */
            spoor_hash_refill(&t->index, t->nbuckets, bucket_hash, t->buckets);
        t->buckets_sorted = true;
    }
    *out = t->buckets;
    return t->nbuckets;
}

static int cmp_dump(const void *a, const void *b)
{
    const spoor_triage_dump *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c || (c = strcmp(x->bucket, y->bucket)))
        return c;
    return strcmp(x->error ? x->error : "", y->error ? y->error : "");
}

size_t spoor_triage_dumps(spoor_triage *t, const spoor_triage_dump **out)
{
    if (!t->dumps_sorted) {
        if (t->ndumps)
            qsort(t->dumps, t->ndumps, sizeof *t->dumps, cmp_dump);
        size_t kept = 0;
        for (size_t i = 0; i < t->ndumps; i++) {
            if (kept && !strcmp(t->dumps[kept - 1].path, t->dumps[i].path)) {
                spoor_triage_dump_clear(&t->dumps[i]); /* one path twice: the first line */
            } else {
                t->dumps[kept++] = t->dumps[i];
            }
        }
        t->ndumps = kept;
        t->dumps_sorted = true;
    }
    *out = t->dumps;
    return t->ndumps;
}
