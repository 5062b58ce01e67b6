/* Entry points for tests and benchmarks only: evaluate a LaunchCheck given as bytes, with
 * an allocation table given as (base, size) pairs, and time the evaluation. Not used by the
 * interposition itself. */
#include <stdlib.h>
#include <time.h>

#include "shim.h"

static const uint64_t *test_allocs;
static int test_n_allocs;

static int test_lookup(uint64_t addr, uint64_t *base, uint64_t *size)
{
    for (int k = 0; k < test_n_allocs; k++)
        if (addr - test_allocs[2 * k] < test_allocs[2 * k + 1]) {
            *base = test_allocs[2 * k];
            *size = test_allocs[2 * k + 1];
            return 1;
        }
    return 0;
}

/* Verdict (0 idempotent, 1 not idempotent, 2 not proven) with the rule in *rule; -1 when
 * the blob does not decode. allocs == NULL means no allocation table. */
KC_EXPORT int kc_test_eval(const void *blob, size_t size, const unsigned char *params,
                           size_t psize, const uint32_t grid[3], const uint32_t block[3],
                           const uint64_t *allocs, int n_allocs, int *rule)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -1;
    test_allocs = allocs;
    test_n_allocs = n_allocs;
    enum kc_rule r;
    enum kc_verdict v = kc_check_eval(c, params, psize, grid, block,
                                      allocs ? test_lookup : NULL, &r);
    *rule = (int)r;
    kc_check_free(c);
    return (int)v;
}

/* Median-free mean: nanoseconds per evaluation over `iterations` evaluations. */
KC_EXPORT double kc_bench_eval(const void *blob, size_t size, const unsigned char *params,
                               size_t psize, const uint32_t grid[3], const uint32_t block[3],
                               long iterations)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -1;
    enum kc_rule r;
    volatile int sink = 0;
    struct timespec t0, t1;
    kc_check_eval(c, params, psize, grid, block, NULL, &r);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < iterations; k++)
        sink += kc_check_eval(c, params, psize, grid, block, NULL, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    kc_check_free(c);
    (void)sink;
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
           (double)iterations;
}

/* kc_check_ranges on a LaunchCheck given as bytes (which: 0 clobbered, 1 writes, 2 reads),
 * with an allocation table as for kc_test_eval: the number of ranges stored in out (2 x
 * uint64 each), -1 when unknown, -2 when the blob does not decode. */
KC_EXPORT int kc_test_ranges(const void *blob, size_t size, const unsigned char *params,
                             size_t psize, const uint32_t grid[3], const uint32_t block[3],
                             const uint64_t *allocs, int n_allocs, int which, uint64_t *out,
                             int max)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -2;
    test_allocs = allocs;
    test_n_allocs = n_allocs;
    int n = kc_check_ranges(c, params, psize, grid, block, allocs ? test_lookup : NULL,
                            (enum kc_range_set)which, (uint64_t (*)[2])out, max);
    kc_check_free(c);
    return n;
}
