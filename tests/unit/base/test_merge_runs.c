/* spoor_merge_runs (base/merge_runs.h) against libc's qsort with the original position as the
 * last key (so qsort's answer is the one stable order): random arrays, arrays of a few ordered
 * runs (as DWARF's rows and ranges come), runs that barely interleave, many equal keys; in place
 * and handing out the sorted array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/merge_runs.h"

struct item {
    uint32_t key, pos; /* pos: where it was before sorting */
};

static bool key_before(const void *a, const void *b)
{
    return ((const struct item *)a)->key < ((const struct item *)b)->key;
}

static int cmp_stable(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A small deterministic generator (xorshift32), so that a failure can be replayed. */
static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* n items of the given shape: 0 random keys below range, 1 a few ascending runs, 2 two runs
 * that overlap only at their ends, 3 descending (one run per item). */
static void fill(struct item *v, size_t n, int shape, uint32_t range, uint32_t *seed)
{
    size_t cut = n ? next(seed) % n : 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k;
        switch (shape) {
        case 0: k = next(seed) % range; break;
        case 1: k = (uint32_t)(i % (n / 4 + 1)) * 3 + next(seed) % 2; break;
        case 2: k = i < cut ? (uint32_t)(i + n / 2) : (uint32_t)(i - cut); break;
        default: k = (uint32_t)(n - i); break;
        }
        v[i] = (struct item){k, (uint32_t)i};
    }
}

static void check_shapes(bool in_place)
{
    uint32_t seed = 2463534242u;
    for (int round = 0; round < 4000; round++) {
        size_t n = next(&seed) % 300;
        int shape = round % 4;
        uint32_t range = 1 + next(&seed) % 40;
        struct item *v = malloc((n ? n : 1) * sizeof *v), *want = malloc((n ? n : 1) * sizeof *v);
        assert_non_null(v);
        assert_non_null(want);
        fill(v, n, shape, range, &seed);
        memcpy(want, v, n * sizeof *v);
        qsort(want, n, sizeof *want, cmp_stable);
        struct item *got = v;
        if (in_place) {
            assert_int_equal(spoor_merge_runs(v, n, sizeof *v, key_before, NULL), 0);
        } else {
            void *out = NULL;
            assert_int_equal(spoor_merge_runs(v, n, sizeof *v, key_before, &out), 0);
            got = out; /* v is taken over */
        }
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(got[i].key, want[i].key);
            assert_int_equal(got[i].pos, want[i].pos); /* equal keys in their order */
        }
        free(got);
        free(want);
    }
}

static void sorts_in_place(void **state)
{
    (void)state;
    check_shapes(true);
}

static void hands_out_the_sorted_array(void **state)
{
    (void)state;
    check_shapes(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sorts_in_place),
        cmocka_unit_test(hands_out_the_sorted_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
