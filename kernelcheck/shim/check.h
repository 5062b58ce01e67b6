/* LaunchCheck evaluation in C: the binary form of kernelcheck.launch.check (format 4),
 * decoded once into a flat record and evaluated per launch with no allocation and no lock. */
#ifndef KC_CHECK_H
#define KC_CHECK_H

#include <stddef.h>
#include <stdint.h>

enum kc_verdict { KC_IDEMPOTENT = 0, KC_NOT_IDEMPOTENT = 1, KC_NOT_PROVEN = 2 };

/* The rule that decided a verdict (kernelcheck.launch.evaluate's decided_by, plus the
 * shim's own reasons for not_proven). Keep in step with RULE_NAMES in kernelcheck/shim/_report.py. */
enum kc_rule {
    KC_RULE_NO_CLOBBER = 0,    /* idempotent: no (write, read) pair */
    KC_RULE_DISJOINT,          /* idempotent: every pair disjoint */
    KC_RULE_NO_THREADS,        /* idempotent: the launch has no threads */
    KC_RULE_ATOMIC,            /* not_idempotent: non-idempotent atomic */
    KC_RULE_OVERLAP,           /* not_idempotent: a pair may overlap */
    KC_RULE_UNMODELLED,        /* not_proven: the kernel uses what the analysis does not model */
    KC_RULE_UNKNOWN_RANGE,     /* not_proven: an access has no known byte range */
    KC_RULE_NO_ANALYSIS,       /* not_proven: no analysis of the kernel (yet) */
    KC_RULE_UNKNOWN_FUNCTION,  /* not_proven: a function handle the shim never saw */
    KC_RULE_NO_LAYOUT,         /* not_proven: parameter layout unknown or buffer too small */
    KC_RULE_INTERNAL,          /* not_proven: an internal failure of the shim */
    KC_RULE_COUNT
};

struct kc_access {
    int64_t kind, width, addr_slot, base_offset, base_size, indirect, const_slot, n_atoms;
    int64_t coef[4], atom[4];
    int64_t guard_slot;   /* the access's path conditions (CMP records), or -1 */
    int64_t residue_bits; /* the address is its affine form modulo 2**residue_bits (0: no claim) */
    int64_t expand_slot;  /* the TVAR slot of the block index it is expanded over, or -1 */
    int64_t rebase_slot;  /* the offset part that must keep the base in its allocation, or -1 */
};

/* An expansion: the TVAR slot of a block index, and the slots computed from it. */
struct kc_expand {
    int64_t slot;
    uint32_t n_cone;
    uint32_t *cone;
};

struct kc_check {
    uint32_t n_program, n_accesses, n_pairs, not_proven;
    int64_t (*program)[5];
    struct kc_access *accesses;
    int32_t (*pairs)[2];
    int has_indirect;
    uint32_t n_expand;         /* distinct expansions of the accesses */
    struct kc_expand *expand;
    struct kc_fast *fast;      /* the compiled fast path (check_fast.c), or NULL */
};

/* An allocation-table lookup: the [base, base + size) holding addr; 0 when none. */
typedef int (*kc_alloc_lookup_fn)(uint64_t addr, uint64_t *base, uint64_t *size);

/* Decode the binary form; NULL when it is malformed (bad magic or version, truncated, or a
 * slot reference that does not point to an earlier record). Free with kc_check_free. */
struct kc_check *kc_check_decode(const void *blob, size_t size);
void kc_check_free(struct kc_check *check);

/* Decide one instance. params holds param_size bytes; grid and block are 3 values each.
 * lookup may be NULL (indirect accesses are then of unknown range). Returns the verdict and
 * stores the deciding rule. Never allocates (a per-thread scratch buffer is allocated on a
 * thread's first call; if that fails, the verdict is not_proven with KC_RULE_INTERNAL). */
enum kc_verdict kc_check_eval(const struct kc_check *check, const unsigned char *params,
                              size_t param_size, const uint32_t grid[3],
                              const uint32_t block[3], kc_alloc_lookup_fn lookup,
                              enum kc_rule *rule);

/* The general evaluator alone (kc_check_eval runs the compiled fast path first and falls
 * back to it); same verdicts, for tests and benchmarks. */
enum kc_verdict kc_check_eval_general(const struct kc_check *check, const unsigned char *params,
                                      size_t param_size, const uint32_t grid[3],
                                      const uint32_t block[3], kc_alloc_lookup_fn lookup,
                                      enum kc_rule *rule);

/* The byte ranges of one instance, for recovery: the clobbered set (every byte a
 * non-idempotent atomic may touch, and the intersection of every (write, read) pair's byte
 * sets that the lattice test does not separate: a superset of the bytes both read and
 * written), or every byte the instance may write, or read. */
enum kc_range_set { KC_RANGES_CLOBBERED = 0, KC_RANGES_WRITES, KC_RANGES_READS };

/* Store at most max (>= 2) half-open [lo, hi) ranges, sorted and disjoint, in out; more
 * pieces are joined into hulls (a superset). Returns how many, or -1 when some byte range
 * is unknown (an indirect access outside the allocation table, a range that may wrap or is
 * unbounded, a check marked not proven). Same arithmetic as kc_check_eval_general. */
int kc_check_ranges(const struct kc_check *check, const unsigned char *params,
                    size_t param_size, const uint32_t grid[3], const uint32_t block[3],
                    kc_alloc_lookup_fn lookup, enum kc_range_set which, uint64_t (*out)[2],
                    int max);

/* Add [lo, hi) to the sorted, disjoint list out[0..*n) (max >= 2 entries); when max are
 * held, the two closest neighbours are first joined into their hull (a superset). */
void kc_ranges_add(uint64_t (*out)[2], int *n, int max, uint64_t lo, uint64_t hi);

/* check_fast.c: a check compiled into instructions over single 64-bit ranges. NULL when the
 * check has no fast form. kc_fast_eval needs positive dimensions; it returns the verdict
 * (storing the rule), or -1 when the general evaluator must decide this launch. */
struct kc_fast *kc_fast_compile(const struct kc_check *check);
void kc_fast_free(struct kc_fast *fast);
/* Instructions run per launch, and (in *n_init) slots known before the launch. */
uint32_t kc_fast_size(const struct kc_fast *fast, uint32_t *n_init);
/* The instructions' operation names, separated by spaces, in out (at most size bytes with
 * the final NUL); returns the length the full text needs. For tests. */
size_t kc_fast_describe(const struct kc_fast *fast, char *out, size_t size);
int kc_fast_eval(const struct kc_fast *fast, const unsigned char *params, size_t param_size,
                 const uint32_t grid[3], const uint32_t block[3], enum kc_rule *rule);

/* The exact lattice test (check.c) on read-off terms: term k is sign[k] * coef[k] times a
 * variable in [lo[k], hi[k]]; 1 when the write at cw + ... and the read at cr + ... share
 * no byte. */
int kc_lattice_disjoint(int64_t cw, int64_t cr, int n, const int8_t *sign,
                        const int64_t *coef, const int64_t *lo, const int64_t *hi,
                        int64_t width_w, int64_t width_r);

#endif
