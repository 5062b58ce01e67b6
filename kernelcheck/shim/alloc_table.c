/* The allocation table: every live device allocation seen through the hooks, sorted by base
 * address, for allocation-aware bounds of indirect accesses. A lookup that finds nothing
 * leaves the access's range unknown (not_proven), so a missed allocation (VMM mappings,
 * memory allocated before the shim loaded, a failed insert) costs precision, never
 * soundness. Readers take a read lock only for checks with indirect accesses. */
#include <pthread.h>
#include <stdlib.h>

#include "shim.h"

struct range { uint64_t base, size; };

static struct range *table;
static size_t n_table, cap_table;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;

static size_t lower_bound(uint64_t addr) /* first index with base > addr */
{
    size_t lo = 0, hi = n_table;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (table[mid].base <= addr) lo = mid + 1; else hi = mid;
    }
    return lo;
}

void kc_alloc_add(uint64_t base, uint64_t size)
{
    if (!size)
        return;
    pthread_rwlock_wrlock(&lock);
    if (n_table == cap_table) {
        size_t cap = cap_table ? 2 * cap_table : 1024;
        struct range *grown = kc_fault("oom") ? NULL : realloc(table, cap * sizeof *grown);
        if (!grown) {
            pthread_rwlock_unlock(&lock);
            kc_warn_once("alloc", "out of memory in the allocation table: indirect accesses "
                         "into new allocations count as not proven");
            return;
        }
        table = grown, cap_table = cap;
    }
    size_t at = lower_bound(base);
    for (size_t k = n_table; k > at; k--)
        table[k] = table[k - 1];
    table[at].base = base, table[at].size = size;
    n_table++;
    pthread_rwlock_unlock(&lock);
}

void kc_alloc_remove(uint64_t base)
{
    pthread_rwlock_wrlock(&lock);
    size_t at = lower_bound(base);
    if (at > 0 && table[at - 1].base == base) {
        for (size_t k = at - 1; k + 1 < n_table; k++)
            table[k] = table[k + 1];
        n_table--;
    }
    pthread_rwlock_unlock(&lock);
}

int kc_alloc_lookup(uint64_t addr, uint64_t *base, uint64_t *size)
{
    int found = 0;
    pthread_rwlock_rdlock(&lock);
    size_t at = lower_bound(addr);
    if (at > 0 && addr - table[at - 1].base < table[at - 1].size) {
        *base = table[at - 1].base;
        *size = table[at - 1].size;
        found = 1;
    }
    pthread_rwlock_unlock(&lock);
    return found;
}

/* Every live allocation as [base, base + size) ranges into out; -1 when there are more than
 * max (the caller then treats the set as unknown). Used when an instance is not proven and
 * nothing narrower than "all device memory" is known to bound what it may write. */
int kc_alloc_all(uint64_t (*out)[2], int max)
{
    int n = -1;
    pthread_rwlock_rdlock(&lock);
    if (n_table <= (size_t)max) {
        for (size_t k = 0; k < n_table; k++) {
            out[k][0] = table[k].base;
            out[k][1] = table[k].base + table[k].size;
        }
        n = (int)n_table;
    }
    pthread_rwlock_unlock(&lock);
    return n;
}
