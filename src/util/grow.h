/* Growing an array by doubling, for every libspoor module that collects items of unknown count.
 * Internal. */
#ifndef SPOOR_GROW_H
#define SPOOR_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* Grows *p (of *cap elements of size bytes) to hold at least need: the capacity doubles from
 * 256 elements. -1 without memory (*p and *cap as they were). */
static inline int spoor_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

#endif
