/* Recovery through the shim (KERNELCHECK_RECOVER=1): what to save before each launch
 * (recover_plan.c), and the snapshots, the per-stream launch log, fault detection and
 * replay (recover.c). See docs/shim.md, "Recovery through the shim". */
#ifndef KC_RECOVER_H
#define KC_RECOVER_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "cuda_types.h"

struct kc_kernel;
struct kc_loaded;

#define KC_PLAN_MAX 32

/* What on_launch (hooks.c) decided about one launch. buf is NULL when the parameter bytes
 * are not known (no layout). */
struct kc_decided {
    struct kc_kernel *k;          /* NULL when the shim is disabled */
    const struct kc_loaded *ld;   /* the kernel's analysis, or NULL */
    const unsigned char *buf;
    size_t size;
    enum kc_verdict v;
    enum kc_rule rule;
};

/* How a launch reached the driver, to issue it again through the same real entry point. */
enum kc_form { KC_FORM_KERNEL = 0, KC_FORM_EX, KC_FORM_COOP };

struct kc_launch {
    enum kc_form form;
    void *real;                   /* the real driver function the hook was given */
    CUfunction f;
    uint32_t grid[3], block[3];
    unsigned int shmem;
    CUstream s;
    void **params, **extra;
    const CUlaunchConfig *config; /* KC_FORM_EX only */
};

/* A save plan: ranges are half-open, sorted, disjoint, each inside one allocation. */
struct kc_plan {
    int own_ok;      /* restoring ranges makes this instance re-executable from its start */
    int window_ok;   /* ranges also hold what earlier launches of the window read */
    int n;
    uint64_t ranges[KC_PLAN_MAX][2];
    int n_reads;     /* the bytes this instance may read; -1: unknown */
    uint64_t reads[KC_PLAN_MAX][2];
};

/* The plan for one launch (recover_plan.c). pending: the bytes earlier launches of the
 * window may read (n_pending -1: unknown, 0: no earlier launch). save_not_proven: save the
 * allocations a not-proven instance may write (1) or mark it unrecoverable (0). */
void kc_recover_plan(const struct kc_decided *d, const uint32_t grid[3],
                     const uint32_t block[3], int save_not_proven,
                     const uint64_t (*pending)[2], int n_pending, struct kc_plan *plan);

/* recover.c */
int kc_recover_enabled(void);
/* Snapshot, launch, and on a fault restore and relaunch; returns what the program sees. */
CUresult kc_recover_launch(const struct kc_launch *launch, const struct kc_decided *d);
/* After the real synchronize returned r: close the window (r == CUDA_SUCCESS) or replay it.
 * all: cuCtxSynchronize (every stream). Returns what the program sees. */
CUresult kc_recover_synchronized(CUresult r, CUstream s, int all);

#endif
