/* Handles of the ELFs of one signing run (triage_internal.h). An ELF's symbolizer and libdw's
 * call-frame tables are built lazily, without locks, so one handle serves one thread at a
 * time: a thread takes a handle no other thread holds (the ELF folder's own first, else a copy
 * opened from the same file when all are busy) and gives it back. As many copies are opened as
 * threads sign dumps of that ELF at once; none while the dumps' ELFs differ. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash_index.h"
#include "triage/triage_internal.h"
#include "util/grow.h"

struct pool {
    spoor_elf *shared; /* the folder's handle: handles[0], not ours to close */
    spoor_elf **handles;
    bool *busy;
    size_t n, cap;
    bool no_copy; /* a copy failed to open: wait for a handle instead */
};

struct triage_handles {
    pthread_mutex_t lock;
    pthread_cond_t given_back;
    struct pool *pools;
    size_t npools, pool_cap;
    spoor_hash_index index; /* of the pools by shared handle */
};

struct triage_handles *spoor_triage_handles_new(void)
{
    struct triage_handles *h = calloc(1, sizeof *h);
    if (h) {
        pthread_mutex_init(&h->lock, NULL);
        pthread_cond_init(&h->given_back, NULL);
    }
    return h;
}

void spoor_triage_handles_free(struct triage_handles *h,
                               void (*seen)(const spoor_elf *elf, void *ctx), void *ctx)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->npools; i++) {
        for (size_t j = 0; seen && j < h->pools[i].n; j++)
            seen(h->pools[i].handles[j], ctx);
        for (size_t j = 1; j < h->pools[i].n; j++)
            spoor_elf_close(h->pools[i].handles[j]);
        free(h->pools[i].handles);
        free(h->pools[i].busy);
    }
    free(h->pools);
    spoor_hash_free(&h->index);
    pthread_cond_destroy(&h->given_back);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

static uint64_t pool_hash(const void *pools, size_t i)
{
    return (uintptr_t)((const struct pool *)pools)[i].shared;
}

static bool pool_is(const void *pools, size_t i, const void *shared)
{
    return ((const struct pool *)pools)[i].shared == shared;
}

/* The pool of shared (made on first use, holding shared); NULL without memory. Under the lock. */
static struct pool *pool_of(struct triage_handles *h, spoor_elf *shared)
{
    if (spoor_hash_reserve(&h->index, h->npools, pool_hash, h->pools))
        return NULL;
    size_t *slot = spoor_hash_slot(&h->index, (uintptr_t)shared, pool_is, h->pools, shared);
    if (*slot)
        return &h->pools[*slot - 1];
    if (spoor_grow((void **)&h->pools, &h->pool_cap, h->npools + 1, sizeof *h->pools))
        return NULL;
    struct pool *p = &h->pools[h->npools];
    memset(p, 0, sizeof *p);
    p->shared = shared;
    *slot = ++h->npools;
    return p;
}

/* Room for one more handle in p, which takes handle busy. Under the lock. */
static bool add_handle(struct pool *p, spoor_elf *handle)
{
    size_t cap = p->cap;
    if (spoor_grow((void **)&p->handles, &p->cap, p->n + 1, sizeof *p->handles) ||
        spoor_grow((void **)&p->busy, &cap, p->n + 1, sizeof *p->busy))
        return false; /* busy grows with handles: the same capacities */
    p->handles[p->n] = handle;
    p->busy[p->n++] = true;
    return true;
}

spoor_elf *spoor_triage_handle_take(struct triage_handles *h, spoor_elf *shared)
{
    pthread_mutex_lock(&h->lock);
    struct pool *p = pool_of(h, shared);
    if (p && !p->n) {
        if (add_handle(p, shared))
            p->busy[0] = false; /* the folder's handle, free to take */
        else
            p = NULL;
    }
    spoor_elf *got = NULL;
    while (p) {
        for (size_t i = 0; i < p->n && !got; i++)
            if (!p->busy[i] && p->handles[i]) {
                p->busy[i] = true;
                got = p->handles[i];
            }
        if (got)
            break;
        if (p->no_copy) {
            pthread_cond_wait(&h->given_back, &h->lock);
            p = pool_of(h, shared); /* the pools may have moved */
            continue;
        }
        /* Every handle is busy: a copy, opened outside the lock (its slot held, empty). */
        size_t at = p->n, which = (size_t)(p - h->pools);
        if (!add_handle(p, NULL)) {
            p->no_copy = true;
            continue;
        }
        pthread_mutex_unlock(&h->lock);
        spoor_elf *copy = spoor_elf_open(spoor_elf_path(shared));
        pthread_mutex_lock(&h->lock);
        p = &h->pools[which];
        p->handles[at] = copy;
        if ((got = copy))
            break;
        p->no_copy = true; /* the slot stays empty and busy */
    }
    pthread_mutex_unlock(&h->lock);
    return got;
}

void spoor_triage_handle_give(struct triage_handles *h, spoor_elf *shared, spoor_elf *handle)
{
    pthread_mutex_lock(&h->lock);
    size_t *slot = h->index.cap
                       ? spoor_hash_slot(&h->index, (uintptr_t)shared, pool_is, h->pools, shared)
                       : NULL;
    if (slot && *slot) {
        struct pool *p = &h->pools[*slot - 1];
        for (size_t i = 0; i < p->n; i++)
            if (p->handles[i] == handle)
                p->busy[i] = false;
    }
    pthread_cond_broadcast(&h->given_back);
    pthread_mutex_unlock(&h->lock);
}
