/* Demangling with GNU libiberty (Debian's libiberty-dev), as binutils' addr2line -C does:
 * cplus_demangle() with DMGL_PARAMS | DMGL_ANSI tries Rust (legacy, which looks like an
 * Itanium name ending in a hash, and v0) first, then the Itanium C++ ABI. The callback
 * forms of the two demanglers are used so that libiberty allocates nothing itself (its
 * xmalloc would exit the process when memory runs out). */
#include "elf/demangle.h"

#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEMANGLE_OPTIONS (DMGL_PARAMS | DMGL_ANSI)

struct text {
    char *s;
    size_t len, cap;
    int failed;
};

static void append(const char *piece, size_t n, void *opaque)
{
    struct text *t = opaque;
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    memcpy(t->s + t->len, piece, n);
    t->len += n;
    t->s[t->len] = 0;
}

char *spoor_demangle(const char *name)
{
    if (!name || !spoor_may_be_mangled(name))
        return NULL;
    struct text t = {0};
    int ok = rust_demangle_callback(name, DEMANGLE_OPTIONS, append, &t);
    if (!ok && !t.failed) {
        t.len = 0;
        ok = cplus_demangle_v3_callback(name, DEMANGLE_OPTIONS, append, &t);
    }
    if (!ok || t.failed || !t.len) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

struct spoor_demangle_entry {
    const char *name;  /* the key: NULL for a free slot */
    const char *shown; /* a malloc'ed demangled string, or name itself */
};

static size_t slot_of(const char *name, size_t cap)
{
    return (size_t)(((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15u) >> 20) & (cap - 1);
}

/* Doubles the table (or makes the first one); false without memory. */
static int grow(struct spoor_demangle_cache *c)
{
    size_t cap = c->cap ? c->cap * 2 : 256;
    struct spoor_demangle_entry *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return 0;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->slots[i].name)
            continue;
        size_t k = slot_of(c->slots[i].name, cap);
        while (slots[k].name)
            k = (k + 1) & (cap - 1);
        slots[k] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return 1;
}

const char *spoor_demangle_cached(struct spoor_demangle_cache *c, const char *name)
{
    if (!name || !spoor_may_be_mangled(name))
        return name;
    if (c->cap) {
        for (size_t k = slot_of(name, c->cap);; k = (k + 1) & (c->cap - 1)) {
            if (c->slots[k].name == name)
                return c->slots[k].shown;
            if (!c->slots[k].name)
                break;
        }
    }
    if ((c->used + 1) * 2 > c->cap && !grow(c))
        return name; /* no memory for the cache: no demangling either */
    char *demangled = spoor_demangle(name);
    size_t k = slot_of(name, c->cap);
    while (c->slots[k].name)
        k = (k + 1) & (c->cap - 1);
    c->slots[k].name = name;
    c->slots[k].shown = demangled ? demangled : name;
    c->used++;
    return c->slots[k].shown;
}

void spoor_demangle_cache_free(struct spoor_demangle_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].shown != c->slots[i].name)
            free((char *)c->slots[i].shown);
    free(c->slots);
    c->slots = NULL;
    c->cap = c->used = 0;
}
