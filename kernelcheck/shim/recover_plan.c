/* What to save before a launch under recovery: the shim's twin of
 * kernelcheck.recovery.policy.plan_launch, computed in C from the instance verdict.
 *
 *  - idempotent: nothing;
 *  - not idempotent with known clobbered ranges: exactly those bytes (kc_check_ranges, each
 *    range clipped to the allocations it lies in);
 *  - not proven, or not idempotent with ranges unknown: the allocations the instance may
 *    write (those its written accesses' base pointers point into), or nothing and the
 *    instance is unrecoverable, as configured;
 *  - window saves: when earlier launches of the stream are not yet verified by a successful
 *    synchronize, also the bytes this instance may write that they may read, so that the
 *    whole window re-executes from its start once every snapshot is restored (newest
 *    first).
 *
 * Soundness: every range is a superset of what it stands for. A byte set that is unknown,
 * unbounded, or not inside allocations of the table makes the fallback apply (never fewer
 * bytes). The written allocations assume, as the evaluator does for indirect accesses,
 * that an access stays inside the allocation its base pointer points into; where a written
 * access has no base pointer parameter, or one tied to it only under a launch-time
 * condition (rebase_slot), every live allocation is saved (-1, unrecoverable, when they do
 * not fit in a plan). */
#include <string.h>

#include "recover.h"
#include "shim.h"

/* Clip ranges in place to the allocations they lie in; 0 when a byte lies in none. */
static int clip(uint64_t (*r)[2], int *n)
{
    uint64_t out[KC_PLAN_MAX][2];
    int m = 0;
    for (int k = 0; k < *n; k++)
        for (uint64_t x = r[k][0]; x < r[k][1];) {
            uint64_t base, size;
            if (!kc_alloc_lookup(x, &base, &size))
                return 0;
            uint64_t end = base + size < r[k][1] ? base + size : r[k][1];
            kc_ranges_add(out, &m, KC_PLAN_MAX, x, end);
            x = end;
        }
    /* kc_ranges_add may join two ranges across a gap when full: check again */
    for (int k = 0; k < m; k++) {
        uint64_t base, size;
        if (!kc_alloc_lookup(out[k][0], &base, &size) || out[k][1] - base > size)
            return 0;
    }
    memcpy(r, out, (size_t)m * sizeof out[0]);
    *n = m;
    return 1;
}

static int ranges(const struct kc_decided *d, const uint32_t grid[3], const uint32_t block[3],
                  enum kc_range_set which, uint64_t (*out)[2])
{
    if (!d->ld || !d->buf || d->size < d->ld->param_size)
        return -1;
    return kc_check_ranges(d->ld->check, d->buf, d->size, grid, block, kc_alloc_lookup, which,
                           out, KC_PLAN_MAX);
}

/* The allocations the instance's written accesses point into; every live allocation when
 * that is unknown (a not-proven kernel without access records, a base pointer outside every
 * allocation); -1 when even that does not fit in a plan. */
static int written_allocations(const struct kc_decided *d, uint64_t (*out)[2])
{
    const struct kc_check *c = d->ld ? d->ld->check : NULL;
    if (!c || c->not_proven || !d->buf || d->size < d->ld->param_size)
        return kc_alloc_all(out, KC_PLAN_MAX);
    int n = 0;
    for (uint32_t k = 0; k < c->n_accesses; k++) {
        const struct kc_access *a = &c->accesses[k];
        if (a->kind == 0)
            continue;
        /* a base tied to the access only under a launch-time condition (rebase_slot),
         * which the unknown bytes may have failed, names no allocation */
        if (a->base_offset < 0 || a->rebase_slot >= 0 ||
            (uint64_t)a->base_offset + (uint64_t)a->base_size > d->size)
            return kc_alloc_all(out, KC_PLAN_MAX);
        uint64_t ptr = 0, base, size;
        for (int64_t j = a->base_size - 1; j >= 0; j--)
            ptr = ptr << 8 | d->buf[a->base_offset + j];
        if (!kc_alloc_lookup(ptr, &base, &size))
            return kc_alloc_all(out, KC_PLAN_MAX);
        if (n == KC_PLAN_MAX)
            return -1;
        kc_ranges_add(out, &n, KC_PLAN_MAX, base, base + size);
    }
    return n;
}

/* What the instance may write, clipped; -1 when unknown. */
static int writes(const struct kc_decided *d, const uint32_t grid[3], const uint32_t block[3],
                  uint64_t (*out)[2])
{
    int n = ranges(d, grid, block, KC_RANGES_WRITES, out);
    if (n >= 0 && clip(out, &n))
        return n;
    return written_allocations(d, out);
}

void kc_recover_plan(const struct kc_decided *d, const uint32_t grid[3],
                     const uint32_t block[3], int save_not_proven,
                     const uint64_t (*pending)[2], int n_pending, struct kc_plan *plan)
{
    uint64_t tmp[KC_PLAN_MAX][2];
    int n;
    plan->n = 0;
    plan->own_ok = plan->window_ok = 0;
    if (d->v == KC_IDEMPOTENT) {
        plan->own_ok = 1;
    } else {
        n = d->v == KC_NOT_IDEMPOTENT ? ranges(d, grid, block, KC_RANGES_CLOBBERED, tmp) : -1;
        if (n >= 0 && clip(tmp, &n))
            plan->own_ok = 1;
        else if (save_not_proven && (n = written_allocations(d, tmp)) >= 0)
            plan->own_ok = 1;
        for (int k = 0; plan->own_ok && k < n; k++)
            kc_ranges_add(plan->ranges, &plan->n, KC_PLAN_MAX, tmp[k][0], tmp[k][1]);
    }
    plan->window_ok = plan->own_ok;
    if (n_pending != 0 && plan->own_ok) {
        n = writes(d, grid, block, tmp);
        if (n < 0) {
            plan->window_ok = 0;
        } else {
            for (int k = 0; k < n; k++) {
                if (n_pending < 0) {
                    kc_ranges_add(plan->ranges, &plan->n, KC_PLAN_MAX, tmp[k][0], tmp[k][1]);
                    continue;
                }
                for (int j = 0; j < n_pending; j++) {
                    uint64_t lo = tmp[k][0] > pending[j][0] ? tmp[k][0] : pending[j][0];
                    uint64_t hi = tmp[k][1] < pending[j][1] ? tmp[k][1] : pending[j][1];
                    if (lo < hi)
                        kc_ranges_add(plan->ranges, &plan->n, KC_PLAN_MAX, lo, hi);
                }
            }
        }
    }
    if (plan->n && !clip(plan->ranges, &plan->n)) /* joined hulls may span a gap */
        plan->own_ok = plan->window_ok = 0;
    plan->n_reads = d->v == KC_IDEMPOTENT || d->ld ? ranges(d, grid, block, KC_RANGES_READS,
                                                            plan->reads) : -1;
}
