/* Entry points for tests and benchmarks only: evaluate a LaunchCheck given as bytes by one
 * chosen path (the general evaluator alone, or the compiled fast path alone), and time
 * either. Not used by the interposition itself. */
#include <stdlib.h>
#include <time.h>

#include "shim.h"

enum { PATH_AUTO = 0, PATH_GENERAL = 1, PATH_FAST = 2 };

static int eval_path(const struct kc_check *c, int path, const unsigned char *params,
                     size_t psize, const uint32_t grid[3], const uint32_t block[3],
                     enum kc_rule *rule)
{
    if (path == PATH_GENERAL)
        return (int)kc_check_eval_general(c, params, psize, grid, block, NULL, rule);
    if (path == PATH_FAST) {
        if (!c->fast || c->not_proven || !grid[0] || !grid[1] || !grid[2] || !block[0] ||
            !block[1] || !block[2])
            return -2;
        int v = kc_fast_eval(c->fast, params, psize, grid, block, rule);
        return v < 0 ? -2 : v;
    }
    return (int)kc_check_eval(c, params, psize, grid, block, NULL, rule);
}

/* Verdict (0 idempotent, 1 not idempotent, 2 not proven) with the rule in *rule; -1 when
 * the blob does not decode; -2 when path 2 (fast only) gives up or has no compiled form.
 * path 0 is what the shim runs (fast path, general on give-up), 1 the general evaluator. */
KC_EXPORT int kc_test_eval_path(const void *blob, size_t size, const unsigned char *params,
                                size_t psize, const uint32_t grid[3], const uint32_t block[3],
                                int path, int *rule)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -1;
    enum kc_rule r = KC_RULE_INTERNAL;
    int v = eval_path(c, path, params, psize, grid, block, &r);
    *rule = (int)r;
    kc_check_free(c);
    return v;
}

/* Instructions the compiled fast path runs per launch (slots known before the launch in
 * *n_init); -1 when the blob does not decode, -2 when the check has no compiled form. */
KC_EXPORT long kc_test_fast_size(const void *blob, size_t size, uint32_t *n_init)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -1;
    long n = c->fast ? (long)kc_fast_size(c->fast, n_init) : -2;
    kc_check_free(c);
    return n;
}

/* Nanoseconds per evaluation by one path (the fastest of ten rounds of iterations / 10); -1 when the blob
 * does not decode, -2 when the fast path gives up on this instance. */
KC_EXPORT double kc_bench_eval_path(const void *blob, size_t size, const unsigned char *params,
                                    size_t psize, const uint32_t grid[3],
                                    const uint32_t block[3], int path, long iterations)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -1;
    enum kc_rule r;
    volatile int sink = 0;
    struct timespec t0, t1;
    if (eval_path(c, path, params, psize, grid, block, &r) == -2) {
        kc_check_free(c);
        return -2;
    }
    /* The fastest of ten rounds: other processes on the machine only ever add time. */
    double best = -1;
    long per_round = iterations / 10 > 0 ? iterations / 10 : 1;
    for (int round = 0; round < 10; round++) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long k = 0; k < per_round; k++)
            sink += eval_path(c, path, params, psize, grid, block, &r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                    (double)per_round;
        if (best < 0 || ns < best)
            best = ns;
    }
    kc_check_free(c);
    (void)sink;
    return best;
}

/* The compiled instructions' operation names (space-separated) in out; -1 when the blob
 * does not decode, -2 when the check has no compiled form, else the text's length. */
KC_EXPORT long kc_test_fast_describe(const void *blob, size_t size, char *out, size_t cap)
{
    struct kc_check *c = kc_check_decode(blob, size);
    if (!c)
        return -1;
    long n = c->fast ? (long)kc_fast_describe(c->fast, out, cap) : -2;
    kc_check_free(c);
    return n;
}
