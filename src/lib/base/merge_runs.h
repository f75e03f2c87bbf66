/* The sort of libspoor for arrays that are mostly in order already (DWARF lists code and line
 * rows mostly by address): the ordered runs found, then merged pairwise until one is left,
 * O(n log runs) and no worse than O(n log n) on hostile input; stable. Internal. */
#ifndef SPOOR_MERGE_RUNS_H
#define SPOOR_MERGE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Sorts the n elements of size bytes at v by less(a, b) (whether *a comes strictly before *b),
 * elements that compare equal in their order: in place when out is NULL; else v must be from
 * malloc and is taken over, *out the sorted array (v, or another one, v freed). -1 without
 * memory (v then holds its elements in some order, and is not taken over). Always inlined: a
 * static less() and a constant size make it a sort of that type, without calls per comparison
 * or element. */
static inline __attribute__((always_inline)) int
spoor_merge_runs(void *v, size_t n, size_t size, bool (*less)(const void *a, const void *b),
                 void **out)
{
    char *a = v;
    size_t cap = 0, nruns = 0, *bounds = NULL; /* run k is [bounds[k], bounds[k + 1]) */
    for (size_t i = 1; i <= n; i++)
        if (i == n || less(a + i * size, a + (i - 1) * size)) {
            if (spoor_grow((void **)&bounds, &cap, nruns + 2, sizeof *bounds)) {
                free(bounds);
                return -1;
            }
            bounds[0] = 0;
            bounds[++nruns] = i;
        }
    char *tmp = nruns > 1 ? malloc(n * size) : NULL;
    if (nruns > 1 && !tmp) {
        free(bounds);
        return -1;
    }
    char *src = a, *dst = tmp;
    while (nruns > 1) {
        size_t out = 0;
        for (size_t k = 0; k < nruns; k += 2) {
            size_t i = bounds[k], mid = bounds[k + 1], end = k + 2 <= nruns ? bounds[k + 2] : mid;
            size_t j = mid, o = i, lo, hi, b_end = end;
            if (j < end) { /* runs that barely interleave: the parts that do not, as blocks */
                for (lo = i, hi = mid; lo < hi;) { /* the first of A after B's first */
                    size_t m = lo + (hi - lo) / 2;
                    if (less(src + mid * size, src + m * size))
                        hi = m;
                    else
                        lo = m + 1;
                }
                memcpy(dst + o * size, src + i * size, (lo - i) * size);
                o += lo - i;
                i = lo;
                for (lo = mid, hi = end; lo < hi;) { /* the first of B not before A's last */
                    size_t m = lo + (hi - lo) / 2;
                    if (less(src + m * size, src + (mid - 1) * size))
                        lo = m + 1;
                    else
                        hi = m;
                }
                b_end = lo; /* B from there on comes after all of A */
            }
            for (; i < mid && j < b_end; o++)
                memcpy(dst + o * size,
                       less(src + j * size, src + i * size) ? src + j++ * size : src + i++ * size,
                       size);
            memcpy(dst + o * size, src + i * size, (mid - i) * size);
            o += mid - i;
            memcpy(dst + o * size, src + j * size, (end - j) * size);
            bounds[out++] = bounds[k];
        }
        bounds[out] = n;
        nruns = out;
        char *t = src;
        src = dst;
        dst = t;
    }
    free(bounds);
    if (out) {
        *out = src;
        free(dst);
        return 0;
    }
    if (src != a)
        memcpy(a, src, n * size);
    free(tmp);
    return 0;
}

#endif
