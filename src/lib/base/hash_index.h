/* One open-addressing hash index (linear probing) over items kept in an array elsewhere, for
 * every libspoor module that finds items by key: a slot holds an item's position + 1 (0:
 * empty); the slot count is a power of two, kept at least twice the items. The caller gives a
 * 64-bit hash of each key (mixed here) and a test of whether an item has the key looked for.
 * Internal. */
#ifndef SPOOR_HASH_INDEX_H
#define SPOOR_HASH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct spoor_hash_index {
    size_t *slots;
    size_t cap; /* 0 until the first spoor_hash_reserve */
} spoor_hash_index;

/* The hash of item i, and whether item i has the key looked for. */
typedef uint64_t (*spoor_hash_of)(const void *items, size_t i);
typedef bool (*spoor_hash_is)(const void *items, size_t i, const void *key);

static inline size_t spoor_hash_first(uint64_t hash, size_t cap)
{
    uint64_t h = hash * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: keys that share low bits */
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* The slot of the item whose key is key (hash its hash), or the empty slot where it goes. The
 * index must have a slot (spoor_hash_reserve). */
static inline size_t *spoor_hash_slot(const spoor_hash_index *x, uint64_t hash, spoor_hash_is is,
                                      const void *items, const void *key)
{
    size_t s = spoor_hash_first(hash, x->cap);
    while (x->slots[s] && !is(items, x->slots[s] - 1, key))
        s = (s + 1) & (x->cap - 1);
    return &x->slots[s];
}

/* The index emptied and filled anew with items 0..n, in place (no allocation). */
static inline void spoor_hash_refill(spoor_hash_index *x, size_t n, spoor_hash_of hash_of,
                                     const void *items)
{
    for (size_t s = 0; s < x->cap; s++)
        x->slots[s] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t s = spoor_hash_first(hash_of(items, i), x->cap);
        while (x->slots[s])
            s = (s + 1) & (x->cap - 1);
        x->slots[s] = i + 1;
    }
}

/* Room in the index for one more item than the n it holds: the slots doubled (from 64) and
 * refilled when it would be more than half full. -1 without memory (the index as it was). */
static inline int spoor_hash_reserve(spoor_hash_index *x, size_t n, spoor_hash_of hash_of,
                                     const void *items)
{
    if ((n + 1) * 2 <= x->cap)
        return 0;
    size_t cap = x->cap ? x->cap * 2 : 64;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    size_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    free(x->slots);
    x->slots = slots;
    x->cap = cap;
    spoor_hash_refill(x, n, hash_of, items);
    return 0;
}

static inline void spoor_hash_free(spoor_hash_index *x)
{
    free(x->slots);
    x->slots = NULL;
    x->cap = 0;
}

#endif
