/* Recovery through the shim: snapshots before launches, a log per stream of the launches
 * since its last successful synchronize, and replay after a detected fault.
 *
 * With KERNELCHECK_RECOVER=1 every launch is planned (recover_plan.c); the planned bytes are
 * copied into one shadow buffer with the driver's own calls on the launch's stream
 * (cuMemAllocAsync, else cuMemAlloc; cuMemcpyDtoDAsync), and the launch is passed on
 * unchanged. Its parameter bytes are kept, to issue it again.
 *
 * A fault is an error status that says a kernel failed while running (launch failure,
 * illegal address or instruction, ECC, ...), returned
 *  - by the launch itself: its own snapshot is restored (cuMemcpyDtoD), it is launched
 *    again through the same real entry point and the stream is synchronized; or
 *  - by cuStreamSynchronize / cuCtxSynchronize: which launch failed is not known, so the
 *    whole window (every logged launch of the stream, of every stream for the context) is
 *    replayed: snapshots restored newest first, launches issued again oldest first, and
 *    the synchronize repeated. Window saves (recover_plan.c) make that sound.
 * Success is what the program then sees. A successful synchronize closes the window and
 * frees its shadow buffers.
 *
 * Never worse than without recovery: when a snapshot cannot be taken (no device memory for
 * the shadow, a copy error), an instance cannot be made re-executable, the window grew past
 * its bound, or a replay fails, the program gets the original error, the fault counts as
 * unrecovered and one warning line says why. No Python, and no lock across a driver call. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recover.h"
#include "shim.h"

#define MAX_WINDOW 256   /* launches kept per stream before its window is given up */
#define MAX_REPLAYS 3
#define MAX_PARAMS 512
#define MAX_ATTRS 16
#define MAX_NOTES 20     /* recovery lines printed */

struct entry {
    uint64_t seq;
    struct kc_launch l;
    const struct kc_loaded *ld;
    const char *kernel;
    unsigned char *params;
    size_t psize;
    CUlaunchConfig config;
    CUlaunchAttribute attrs[MAX_ATTRS];
    CUdeviceptr shadow;
    int shadow_async;
    int n;
    uint64_t ranges[KC_PLAN_MAX][2];
    uint64_t bytes;
    int own_ok, window_ok;
    struct entry *next;
};

struct window {
    CUstream s;
    struct entry *head, *tail;
    int n, broken;
    int n_pending;
    uint64_t pending[KC_PLAN_MAX][2];
    struct window *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct window *windows;
static uint64_t next_seq;
static int enabled, save_not_proven = 1;

static _Atomic uint64_t n_launches[3], n_saved[3], n_bytes[3];
static _Atomic uint64_t n_unrecoverable, n_faults, n_recovered, n_unrecovered, n_replayed;
static _Atomic int n_notes;

/* ------------------------------------------------------------------ the real driver */
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*copy_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*copy_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*stream_sync_fn)(CUstream);
typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*launch_coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, unsigned, CUstream, void **);

#define REAL(type, name) ((type)kc_driver_symbol(name))

static void configure(void)
{
    kc_init();
    const char *on = getenv("KERNELCHECK_RECOVER");
    enabled = on && *on == '1' && !kc_cfg.disabled;
    const char *np = getenv("KERNELCHECK_RECOVER_NOT_PROVEN");
    save_not_proven = !(np && strcmp(np, "skip") == 0);
}

int kc_recover_enabled(void)
{
    pthread_once(&once, configure);
    return enabled;
}

static int is_fault(CUresult r)
{
    switch (r) {
    case 214: /* ECC_UNCORRECTABLE */
    case 700: /* ILLEGAL_ADDRESS */
    case 702: /* LAUNCH_TIMEOUT */
    case 714: case 715: case 716: case 717: case 718: /* stack, instruction, address, pc */
    case 719: /* LAUNCH_FAILED */
        return 1;
    default:
        return 0;
    }
}

static void note(const char *fmt, const char *kernel, CUresult r, uint64_t bytes, int n)
{
    if (atomic_fetch_add(&n_notes, 1) < MAX_NOTES)
        fprintf(stderr, fmt, kernel, (int)r, (unsigned long long)bytes, n);
}

/* ------------------------------------------------------------------ snapshots */
static int snapshot(struct entry *e)
{
    if (!e->bytes)
        return 1;
    alloc_async_fn alloc_async = REAL(alloc_async_fn, "cuMemAllocAsync");
    alloc_fn alloc = REAL(alloc_fn, "cuMemAlloc_v2");
    copy_async_fn copy = REAL(copy_async_fn, "cuMemcpyDtoDAsync_v2");
    if (kc_fault("shadow") || !copy)
        return 0;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (alloc_async && (r = alloc_async(&e->shadow, e->bytes, e->l.s)) == CUDA_SUCCESS)
        e->shadow_async = 1;
    else if (!alloc || (r = alloc(&e->shadow, e->bytes)) != CUDA_SUCCESS)
        return 0;
    uint64_t at = 0;
    for (int k = 0; k < e->n; k++) {
        uint64_t len = e->ranges[k][1] - e->ranges[k][0];
        if (copy(e->shadow + at, e->ranges[k][0], len, e->l.s) != CUDA_SUCCESS)
            return 0;
        at += len;
    }
    return 1;
}

static int restore(const struct entry *e)
{
    copy_fn copy = REAL(copy_fn, "cuMemcpyDtoD_v2");
    uint64_t at = 0;
    for (int k = 0; k < e->n; k++) {
        uint64_t len = e->ranges[k][1] - e->ranges[k][0];
        if (!copy || copy(e->ranges[k][0], e->shadow + at, len) != CUDA_SUCCESS)
            return 0;
        at += len;
    }
    return 1;
}

static void free_shadow(struct entry *e)
{
    if (e->shadow) {
        free_async_fn free_async = REAL(free_async_fn, "cuMemFreeAsync");
        free_fn release = REAL(free_fn, "cuMemFree_v2");
        if (!(e->shadow_async && free_async && free_async(e->shadow, e->l.s) == CUDA_SUCCESS)
            && release)
            release(e->shadow);
        e->shadow = 0;
    }
}

static void free_entry(struct entry *e)
{
    free_shadow(e);
    free(e->params);
    free(e);
}

static void free_list(struct entry *e)
{
    while (e) {
        struct entry *next = e->next;
        free_entry(e);
        e = next;
    }
}

/* ------------------------------------------------------------------ launching again */
static CUresult relaunch(const struct entry *e)
{
    size_t size = e->psize;
    void *buffer[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, e->params, CU_LAUNCH_PARAM_BUFFER_SIZE,
                      &size, CU_LAUNCH_PARAM_END};
    void **extra = size ? buffer : NULL; /* a kernel without parameters takes neither */
    const struct kc_launch *l = &e->l;
    switch (l->form) {
    case KC_FORM_KERNEL:
        return ((launch_fn)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                    l->block[1], l->block[2], l->shmem, l->s, NULL, extra);
    case KC_FORM_EX:
        return ((launch_ex_fn)l->real)(&e->config, l->f, NULL, extra);
    case KC_FORM_COOP: {
        void *ptrs[MAX_PARAMS];
        for (uint32_t j = 0; j < e->ld->nparams; j++)
            ptrs[j] = e->params + e->ld->offsets[j];
        return ((launch_coop_fn)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2],
                                         l->block[0], l->block[1], l->block[2], l->shmem,
                                         l->s, ptrs);
    }
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult original(const struct kc_launch *l)
{
    switch (l->form) {
    case KC_FORM_KERNEL:
        return ((launch_fn)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                    l->block[1], l->block[2], l->shmem, l->s, l->params,
                                    l->extra);
    case KC_FORM_EX:
        return ((launch_ex_fn)l->real)(l->config, l->f, l->params, l->extra);
    case KC_FORM_COOP:
        return ((launch_coop_fn)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2],
                                         l->block[0], l->block[1], l->block[2], l->shmem,
                                         l->s, l->params);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult synchronize(CUstream s, int all)
{
    if (all) {
        ctx_sync_fn sync = REAL(ctx_sync_fn, "cuCtxSynchronize");
        return sync ? sync() : CUDA_ERROR_NOT_INITIALIZED;
    }
    stream_sync_fn sync = REAL(stream_sync_fn, "cuStreamSynchronize");
    return sync ? sync(s) : CUDA_ERROR_NOT_INITIALIZED;
}

/* ------------------------------------------------------------------ windows */
static struct window *window_for(CUstream s) /* under lock; NULL when out of memory */
{
    for (struct window *w = windows; w; w = w->next)
        if (w->s == s)
            return w;
    struct window *w = calloc(1, sizeof *w);
    if (w) {
        w->s = s;
        w->next = windows;
        windows = w;
    }
    return w;
}

/* Take the logged launches of s (of every stream when all) out of the windows, oldest
 * first; *broken tells whether some window could not be replayed. Under lock. */
static struct entry *detach(CUstream s, int all, int *broken)
{
    struct entry *out = NULL;
    *broken = 0;
    for (struct window *w = windows; w; w = w->next) {
        if (!all && w->s != s)
            continue;
        *broken |= w->broken;
        struct entry *list = w->head;
        w->head = w->tail = NULL;
        w->n = w->broken = 0;
        w->n_pending = 0;
        struct entry **at = &out; /* merge by sequence number */
        while (list) {
            while (*at && (*at)->seq < list->seq)
                at = &(*at)->next;
            struct entry *next = list->next;
            list->next = *at;
            *at = list;
            at = &list->next;
            list = next;
        }
    }
    return out;
}

static void add_reads(struct window *w, const struct kc_plan *plan)
{
    if (w->n_pending < 0)
        return;
    if (plan->n_reads < 0) {
        w->n_pending = -1;
        return;
    }
    for (int k = 0; k < plan->n_reads; k++)
        kc_ranges_add(w->pending, &w->n_pending, KC_PLAN_MAX, plan->reads[k][0],
                      plan->reads[k][1]);
}

/* Log a launch that returned success; frees it when its window is given up. */
static void log_entry(struct entry *e, const struct kc_plan *plan)
{
    struct entry *drop = NULL;
    pthread_mutex_lock(&lock);
    struct window *w = window_for(e->l.s);
    if (w && !w->broken && (!e->window_ok || w->n >= MAX_WINDOW)) {
        w->broken = 1; /* a fault reported at synchronize cannot be replayed: keep nothing */
        drop = w->head;
        w->head = w->tail = NULL;
        w->n = 0;
    }
    if (!w || w->broken) {
        e->next = drop;
        drop = e;
    } else {
        if (w->tail)
            w->tail->next = e;
        else
            w->head = e;
        w->tail = e;
        w->n++;
        add_reads(w, plan);
    }
    pthread_mutex_unlock(&lock);
    free_list(drop);
}

static void warn_unrecovered(const char *why)
{
    kc_warn_once(why, "recovery: a detected fault was not recovered (%s): the program gets "
                 "the driver's error", why);
}

/* ------------------------------------------------------------------ the launch path */
static struct entry *new_entry(const struct kc_launch *l, const struct kc_decided *d,
                               const struct kc_plan *plan)
{
    struct entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->l = *l;
    e->ld = d->ld;
    e->kernel = d->k ? d->k->name : "?";
    e->own_ok = plan->own_ok;
    e->window_ok = plan->window_ok;
    if (d->buf && d->size) {
        e->params = malloc(d->size);
        if (e->params)
            memcpy(e->params, d->buf, d->size);
        e->psize = d->size;
    } else if (d->buf && (!d->ld || d->ld->param_size == 0)) {
        e->psize = 0;
    } else {
        e->own_ok = e->window_ok = 0; /* the parameters cannot be given again */
    }
    if ((d->size && !e->params) ||
        (l->form == KC_FORM_COOP && (!d->ld || d->ld->nparams > MAX_PARAMS)))
        e->own_ok = e->window_ok = 0;
    if (l->form == KC_FORM_EX) {
        e->config = *l->config;
        if (e->config.numAttrs > MAX_ATTRS) {
            e->own_ok = e->window_ok = 0;
            e->config.numAttrs = 0;
        }
        if (e->config.numAttrs && l->config->attrs)
            memcpy(e->attrs, l->config->attrs, e->config.numAttrs * sizeof e->attrs[0]);
        e->config.attrs = e->attrs;
    }
    if (e->own_ok) {
        e->n = plan->n;
        memcpy(e->ranges, plan->ranges, (size_t)plan->n * sizeof plan->ranges[0]);
        for (int k = 0; k < plan->n; k++)
            e->bytes += plan->ranges[k][1] - plan->ranges[k][0];
    }
    return e;
}

CUresult kc_recover_launch(const struct kc_launch *l, const struct kc_decided *d)
{
    uint64_t pending[KC_PLAN_MAX][2];
    int n_pending = 0;
    pthread_mutex_lock(&lock);
    struct window *w = window_for(l->s);
    if (w && !w->broken && w->n) {
        n_pending = w->n_pending;
        if (n_pending > 0)
            memcpy(pending, w->pending, (size_t)n_pending * sizeof pending[0]);
    }
    uint64_t seq = next_seq++;
    pthread_mutex_unlock(&lock);

    struct kc_plan plan;
    kc_recover_plan(d, l->grid, l->block, save_not_proven, (const uint64_t (*)[2])pending,
                    n_pending, &plan);
    struct entry *e = new_entry(l, d, &plan);
    atomic_fetch_add(&n_launches[d->v], 1);
    if (e && e->own_ok && !snapshot(e)) {
        kc_warn_once("recover-snapshot", "recovery: a snapshot could not be taken (out of "
                     "device memory for the shadow buffer, or a copy failed): such launches "
                     "are unrecoverable");
        free_shadow(e);
        e->own_ok = e->window_ok = 0;
        e->n = 0;
        e->bytes = 0;
    }
    if (!e || !e->own_ok)
        atomic_fetch_add(&n_unrecoverable, 1);
    else if (e->bytes) {
        atomic_fetch_add(&n_saved[d->v], 1);
        atomic_fetch_add(&n_bytes[d->v], e->bytes);
    }
    if (e)
        e->seq = seq;

    CUresult r = original(l);
    if (r == CUDA_SUCCESS) {
        if (e) {
            log_entry(e, &plan);
        } else { /* out of host memory: the window cannot be replayed */
            pthread_mutex_lock(&lock);
            if ((w = window_for(l->s)) != NULL)
                w->broken = 1;
            pthread_mutex_unlock(&lock);
        }
        return r;
    }
    if (!is_fault(r)) { /* the launch did not run (bad argument, ...): nothing to do */
        if (e)
            free_entry(e);
        return r;
    }
    atomic_fetch_add(&n_faults, 1);
    if (!e || !e->own_ok) {
        atomic_fetch_add(&n_unrecovered, 1);
        warn_unrecovered("a launch not made re-executable failed");
        if (e)
            free_entry(e);
        return r;
    }
    for (int attempt = 0; attempt < MAX_REPLAYS; attempt++) {
        if (!restore(e))
            break;
        CUresult again = relaunch(e);
        if (again == CUDA_SUCCESS)
            again = synchronize(l->s, 0);
        if (again == CUDA_SUCCESS) {
            atomic_fetch_add(&n_recovered, 1);
            atomic_fetch_add(&n_replayed, 1);
            note("kernelcheck: recovered a failed launch of %s (error %d): restored %llu "
                 "bytes, relaunched %d launch\n", e->kernel, r, e->bytes, 1);
            /* the stream synchronized: its window, this launch included, is verified */
            int broken;
            pthread_mutex_lock(&lock);
            struct entry *done = detach(l->s, 0, &broken);
            pthread_mutex_unlock(&lock);
            free_list(done);
            free_entry(e);
            return CUDA_SUCCESS;
        }
        if (!is_fault(again))
            break;
    }
    atomic_fetch_add(&n_unrecovered, 1);
    warn_unrecovered("the restore or the relaunch failed");
    free_entry(e);
    return r;
}

/* ------------------------------------------------------------------ synchronize */
CUresult kc_recover_synchronized(CUresult r, CUstream s, int all)
{
    if (r != CUDA_SUCCESS && !is_fault(r))
        return r;
    int broken;
    pthread_mutex_lock(&lock);
    struct entry *list = detach(s, all, &broken);
    pthread_mutex_unlock(&lock);
    if (r == CUDA_SUCCESS) {
        free_list(list);
        return r;
    }
    atomic_fetch_add(&n_faults, 1);
    const char *why = broken ? "the window of launches since the last synchronize was not "
                               "kept whole" : !list ? "no logged launch to replay" : NULL;
    int n = 0;
    uint64_t bytes = 0;
    for (struct entry *e = list; e; e = e->next) {
        n++;
        bytes += e->bytes;
        if (!e->window_ok)
            why = "a launch of the window is not re-executable";
    }
    for (int attempt = 0; !why && attempt < MAX_REPLAYS; attempt++) {
        struct entry *order[MAX_WINDOW * 8];
        int m = 0;
        for (struct entry *e = list; e && m < (int)(sizeof order / sizeof order[0]);
             e = e->next)
            order[m++] = e;
        if (m < n) {
            why = "the window is too long";
            break;
        }
        CUresult again = CUDA_SUCCESS;
        for (int k = m - 1; k >= 0 && again == CUDA_SUCCESS; k--)
            if (!restore(order[k]))
                again = CUDA_ERROR_UNKNOWN;
        for (int k = 0; k < m && again == CUDA_SUCCESS; k++)
            again = relaunch(order[k]);
        if (again == CUDA_SUCCESS)
            again = synchronize(s, all);
        if (again == CUDA_SUCCESS) {
            atomic_fetch_add(&n_recovered, 1);
            atomic_fetch_add(&n_replayed, (uint64_t)m);
            note("kernelcheck: recovered a fault reported at synchronize (last launch %s, "
                 "error %d): restored %llu bytes, relaunched %d launches\n",
                 order[m - 1]->kernel, r, bytes, m);
            free_list(list);
            return CUDA_SUCCESS;
        }
        if (!is_fault(again))
            why = "the restore or the relaunch failed";
    }
    atomic_fetch_add(&n_unrecovered, 1);
    warn_unrecovered(why ? why : "the replay failed again");
    free_list(list);
    return r;
}

/* ------------------------------------------------------------------ the report */
__attribute__((destructor)) static void write_report(void)
{
    if (!enabled || !kc_cfg.report_dir[0])
        return;
    char path[4300], tmp[4400];
    snprintf(path, sizeof path, "%s/recover-%d.json", kc_cfg.report_dir, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    static const char *names[3] = {"idempotent", "not_idempotent", "not_proven"};
    fprintf(f, "{\"format_version\": 1, \"pid\": %d, \"not_proven\": \"%s\"", (int)getpid(),
            save_not_proven ? "save" : "skip");
    const char *keys[3] = {"launches", "saved_launches", "saved_bytes"};
    _Atomic uint64_t *arrays[3] = {n_launches, n_saved, n_bytes};
    for (int a = 0; a < 3; a++) {
        fprintf(f, ", \"%s\": {", keys[a]);
        for (int v = 0; v < 3; v++)
            fprintf(f, "%s\"%s\": %llu", v ? ", " : "", names[v],
                    (unsigned long long)atomic_load(&arrays[a][v]));
        fprintf(f, "}");
    }
    fprintf(f, ", \"unrecoverable_launches\": %llu, \"faults\": %llu, \"recovered\": %llu, "
            "\"unrecovered\": %llu, \"replayed_launches\": %llu}\n",
            (unsigned long long)atomic_load(&n_unrecoverable),
            (unsigned long long)atomic_load(&n_faults),
            (unsigned long long)atomic_load(&n_recovered),
            (unsigned long long)atomic_load(&n_unrecovered),
            (unsigned long long)atomic_load(&n_replayed));
    fclose(f);
    rename(tmp, path);
}
