/* What the shim does around each interposed call: note module images and function handles,
 * keep the allocation table, and decide every launch before passing it on unchanged.
 *
 * The launch path (kc_on_launch) looks the handle up in a lock-free table, packs the
 * parameter bytes on the stack, evaluates the preloaded LaunchCheck and bumps atomic
 * counters. It allocates nothing (after a thread's first launch), takes no lock (except the
 * allocation table's read lock for checks with indirect accesses, and the log's when
 * logging), never calls Python, and never changes what reaches the driver. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recover.h"
#include "shim.h"

#define PARAM_STACK 4096

int64_t kc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The last verdicts of this thread, by exact instance: programs launch the same kernel with
 * the same arguments again and again (a training step, a solver iteration), and a verdict is
 * a function of the parameter bytes and dimensions alone, except for checks that consult
 * the allocation table, which are never memoized. Per thread, so no lock and no sharing. */
#define MEMO_WAYS 16
#define MEMO_BYTES 256
struct memo {
    const struct kc_loaded *ld;
    uint32_t dims[6];
    uint32_t size;
    enum kc_verdict verdict;
    enum kc_rule rule;
    unsigned char bytes[MEMO_BYTES];
};
static __thread struct memo memo[MEMO_WAYS];

static struct memo *memo_slot(const struct kc_loaded *ld)
{
    return &memo[((uintptr_t)ld >> 4) % MEMO_WAYS];
}

static void count(struct kc_kernel *k, enum kc_verdict v, enum kc_rule rule)
{
    atomic_fetch_add_explicit(&k->counts[v], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->rules[rule], 1, memory_order_relaxed);
}

/* Decide one launch; *d receives the verdict and the parameter bytes (packed into local,
 * PARAM_STACK bytes of the caller's, or the launch's own buffer) for recovery. */
static void on_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                      unsigned by, unsigned bz, void **params, void **extra,
                      unsigned char *local, struct kc_decided *d)
{
    memset(d, 0, sizeof *d);
    if (kc_cfg.disabled)
        return;
    const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    struct kc_kernel *k = kc_registry_find(f);
    if (!k) {
        k = kc_registry_unknown();
        count(k, KC_NOT_PROVEN, KC_RULE_UNKNOWN_FUNCTION);
        if (kc_cfg.log_path[0])
            kc_log_instance(k->name, grid, block, NULL, 0, KC_NOT_PROVEN,
                            KC_RULE_UNKNOWN_FUNCTION);
        if (atomic_load_explicit(&kc_scope_active, memory_order_relaxed))
            kc_scope_record(k, grid, block, NULL, 0, KC_NOT_PROVEN, KC_RULE_UNKNOWN_FUNCTION);
        d->k = k, d->v = KC_NOT_PROVEN, d->rule = KC_RULE_UNKNOWN_FUNCTION;
        return;
    }
    struct kc_loaded *ld = atomic_load_explicit(&k->loaded, memory_order_acquire);
    if (!ld) {
        kc_registry_poll(k);
        ld = atomic_load_explicit(&k->loaded, memory_order_acquire);
        if (!ld && atomic_load_explicit(&kc_analysis_wait_ms, memory_order_relaxed))
            ld = kc_wait_analysis(k);
        if (!ld)
            kc_defer(k, f, grid, block, params, extra);
    }
    enum kc_rule rule = KC_RULE_NO_ANALYSIS;
    enum kc_verdict v = KC_NOT_PROVEN;
    const unsigned char *buf = NULL;
    size_t size = 0;
    if (ld) {
        rule = KC_RULE_NO_LAYOUT;
        if (params) {
            if (ld->param_size <= PARAM_STACK) {
                memset(local, 0, ld->param_size);
                for (uint32_t j = 0; j < ld->nparams; j++)
                    if (params[j])
                        memcpy(local + ld->offsets[j], params[j], ld->sizes[j]);
                buf = local;
                size = ld->param_size;
            }
        } else if (extra) {
            for (int j = 0; extra[j] != CU_LAUNCH_PARAM_END && j < 64; j += 2) {
                if (extra[j] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                    buf = extra[j + 1];
                else if (extra[j] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[j + 1])
                    size = *(size_t *)extra[j + 1];
            }
            if (!buf)
                size = 0;
        } else if (ld->param_size == 0) {
            buf = local;
        }
        if (buf && size >= ld->param_size) {
            struct memo *m = memo_slot(ld);
            int memoize = !ld->check->has_indirect && size <= MEMO_BYTES && !kc_cfg.no_memo;
            if (kc_fault("eval")) {
                rule = KC_RULE_INTERNAL;
            } else if (memoize && m->ld == ld && m->size == size &&
                       memcmp(m->dims, grid, 12) == 0 && memcmp(m->dims + 3, block, 12) == 0 &&
                       memcmp(m->bytes, buf, size) == 0) {
                v = m->verdict;
                rule = m->rule;
            } else {
                v = kc_check_eval(ld->check, buf, size, grid, block,
                                  ld->check->has_indirect ? kc_alloc_lookup : NULL, &rule);
                if (memoize && rule != KC_RULE_INTERNAL) {
                    m->ld = ld;
                    m->size = (uint32_t)size;
                    memcpy(m->dims, grid, 12);
                    memcpy(m->dims + 3, block, 12);
                    memcpy(m->bytes, buf, size);
                    m->verdict = v;
                    m->rule = rule;
                }
            }
            if (rule == KC_RULE_INTERNAL)
                kc_warn_once("eval", "internal failure while evaluating a LaunchCheck (out of "
                             "memory or injected fault): instances count as not proven");
        }
    }
    count(k, v, rule);
    if (kc_cfg.log_path[0])
        kc_log_instance(k->name, grid, block, buf, buf ? size : 0, v, rule);
    if (atomic_load_explicit(&kc_scope_active, memory_order_relaxed))
        kc_scope_record(k, grid, block, buf, buf ? size : 0, v, rule);
    d->k = k, d->ld = ld, d->v = v, d->rule = rule;
    if (buf && ld && size >= ld->param_size)
        d->buf = buf, d->size = size;
}

/* ------------------------------------------------------------------ module loading */
CUresult kc_hook_ModuleLoadData(__typeof__(&cuModuleLoadData) real, CUmodule *m,
                                const void *image)
{
    CUresult r = real(m, image);
    if (r == CUDA_SUCCESS && m && !kc_cfg.disabled)
        kc_registry_add_module(*m, image);
    return r;
}

CUresult kc_hook_ModuleLoadDataEx(__typeof__(&cuModuleLoadDataEx) real, CUmodule *m,
                                  const void *image, unsigned int n, CUjit_option *o, void **v)
{
    CUresult r = real(m, image, n, o, v);
    if (r == CUDA_SUCCESS && m && !kc_cfg.disabled)
        kc_registry_add_module(*m, image);
    return r;
}

static void add_file(void *handle, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        kc_warn_once("file", "cannot reopen %s to analyse it", path);
        return;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = size >= 0 ? calloc(1, (size_t)size + 1) : NULL;
    if (data && fread(data, 1, (size_t)size, f) == (size_t)size)
        kc_registry_add_module(handle, data);
    else
        kc_warn_once("file", "cannot read %s to analyse it", path);
    free(data);
    fclose(f);
}

CUresult kc_hook_ModuleLoad(__typeof__(&cuModuleLoad) real, CUmodule *m, const char *path)
{
    CUresult r = real(m, path);
    if (r == CUDA_SUCCESS && m && path && !kc_cfg.disabled)
        add_file(*m, path);
    return r;
}

CUresult kc_hook_LibraryLoadData(__typeof__(&cuLibraryLoadData) real, CUlibrary *l,
                                 const void *image, KC_LIB_OPTS)
{
    CUresult r = real(l, image, jo, jv, njo, lo, lv, nlo);
    if (r == CUDA_SUCCESS && l && !kc_cfg.disabled)
        kc_registry_add_module(*l, image);
    return r;
}

CUresult kc_hook_LibraryLoadFromFile(__typeof__(&cuLibraryLoadFromFile) real, CUlibrary *l,
                                     const char *path, KC_LIB_OPTS)
{
    CUresult r = real(l, path, jo, jv, njo, lo, lv, nlo);
    if (r == CUDA_SUCCESS && l && path && !kc_cfg.disabled)
        add_file(*l, path);
    return r;
}

/* ------------------------------------------------------------------ function lookup */
CUresult kc_hook_ModuleGetFunction(__typeof__(&cuModuleGetFunction) real, CUfunction *f,
                                   CUmodule m, const char *name)
{
    CUresult r = real(f, m, name);
    if (r == CUDA_SUCCESS && f && name && !kc_cfg.disabled)
        kc_registry_bind(*f, m, name);
    return r;
}

CUresult kc_hook_LibraryGetKernel(__typeof__(&cuLibraryGetKernel) real, CUkernel *k,
                                  CUlibrary l, const char *name)
{
    CUresult r = real(k, l, name);
    if (r == CUDA_SUCCESS && k && name && !kc_cfg.disabled)
        kc_registry_bind(*k, l, name);
    return r;
}

CUresult kc_hook_KernelGetFunction(__typeof__(&cuKernelGetFunction) real, CUfunction *f,
                                   CUkernel k)
{
    CUresult r = real(f, k);
    if (r == CUDA_SUCCESS && f && !kc_cfg.disabled)
        kc_registry_alias(*f, k);
    return r;
}

/* ------------------------------------------------------------------ launches */
CUresult kc_hook_LaunchKernel(__typeof__(&cuLaunchKernel) real, CUfunction f, unsigned gx,
                              unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                              unsigned shmem, CUstream s, void **params, void **extra)
{
    unsigned char local[PARAM_STACK];
    struct kc_decided d;
    on_launch(f, gx, gy, gz, bx, by, bz, params, extra, local, &d);
    if (!kc_recover_enabled())
        return real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
    const struct kc_launch l = {KC_FORM_KERNEL, (void *)real, f, {gx, gy, gz}, {bx, by, bz},
                                shmem, s, params, extra, NULL};
    return kc_recover_launch(&l, &d);
}

CUresult kc_hook_LaunchKernelEx(__typeof__(&cuLaunchKernelEx) real, const CUlaunchConfig *c,
                                CUfunction f, void **params, void **extra)
{
    /* Attributes (clusters, cooperative, priority, ...) change scheduling, not which
     * threads run or what they access: the instance is the grid and block below. */
    unsigned char local[PARAM_STACK];
    struct kc_decided d;
    if (!c)
        return real(c, f, params, extra);
    on_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
              c->blockDimZ, params, extra, local, &d);
    if (!kc_recover_enabled())
        return real(c, f, params, extra);
    const struct kc_launch l = {KC_FORM_EX, (void *)real, f,
                                {c->gridDimX, c->gridDimY, c->gridDimZ},
                                {c->blockDimX, c->blockDimY, c->blockDimZ}, c->sharedMemBytes,
                                c->hStream, params, extra, c};
    return kc_recover_launch(&l, &d);
}

CUresult kc_hook_LaunchCooperative(__typeof__(&cuLaunchCooperativeKernel) real, CUfunction f,
                                   unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shmem, CUstream s,
                                   void **params)
{
    unsigned char local[PARAM_STACK];
    struct kc_decided d;
    on_launch(f, gx, gy, gz, bx, by, bz, params, NULL, local, &d);
    if (!kc_recover_enabled())
        return real(f, gx, gy, gz, bx, by, bz, shmem, s, params);
    const struct kc_launch l = {KC_FORM_COOP, (void *)real, f, {gx, gy, gz}, {bx, by, bz},
                                shmem, s, params, NULL, NULL};
    return kc_recover_launch(&l, &d);
}

CUresult kc_hook_GraphLaunch(__typeof__(&cuGraphLaunch) real, CUgraphExec g, CUstream s)
{
    atomic_fetch_add_explicit(&kc_graph_launches, 1, memory_order_relaxed);
    return real(g, s);
}

/* ------------------------------------------------------------------ synchronization */
/* Under recovery, a successful synchronize closes the stream's window of launches and an
 * error reported there is recovered by replaying it (recover.c). */
CUresult kc_hook_StreamSynchronize(__typeof__(&cuStreamSynchronize) real, CUstream s)
{
    CUresult r = real(s);
    return kc_recover_enabled() ? kc_recover_synchronized(r, s, 0) : r;
}

CUresult kc_hook_CtxSynchronize(__typeof__(&cuCtxSynchronize) real)
{
    CUresult r = real();
    return kc_recover_enabled() ? kc_recover_synchronized(r, NULL, 1) : r;
}

/* ------------------------------------------------------------------ allocations */
CUresult kc_hook_MemAlloc(__typeof__(&cuMemAlloc_v2) real, CUdeviceptr *p, size_t n)
{
    CUresult r = real(p, n);
    if (r == CUDA_SUCCESS && p)
        kc_alloc_add(*p, n);
    return r;
}

CUresult kc_hook_MemAllocPitch(__typeof__(&cuMemAllocPitch_v2) real, CUdeviceptr *p,
                               size_t *pitch, size_t w, size_t h, unsigned int e)
{
    CUresult r = real(p, pitch, w, h, e);
    if (r == CUDA_SUCCESS && p && pitch)
        kc_alloc_add(*p, (uint64_t)*pitch * h);
    return r;
}

CUresult kc_hook_MemAllocManaged(__typeof__(&cuMemAllocManaged) real, CUdeviceptr *p,
                                 size_t n, unsigned int flags)
{
    CUresult r = real(p, n, flags);
    if (r == CUDA_SUCCESS && p)
        kc_alloc_add(*p, n);
    return r;
}

CUresult kc_hook_MemAllocAsync(__typeof__(&cuMemAllocAsync) real, CUdeviceptr *p, size_t n,
                               CUstream s)
{
    CUresult r = real(p, n, s);
    if (r == CUDA_SUCCESS && p)
        kc_alloc_add(*p, n);
    return r;
}

/* Allocations from a memory pool (cuda.core's DeviceMemoryResource, PyTorch's
 * cudaMallocAsync backend) are freed with cuMemFreeAsync, like cuMemAllocAsync's. */
CUresult kc_hook_MemAllocFromPoolAsync(__typeof__(&cuMemAllocFromPoolAsync) real,
                                       CUdeviceptr *p, size_t n, CUmemoryPool pool,
                                       CUstream s)
{
    CUresult r = real(p, n, pool, s);
    if (r == CUDA_SUCCESS && p)
        kc_alloc_add(*p, n);
    return r;
}

/* The entry leaves the table before the memory is freed: a lookup between the two finds
 * nothing (not_proven), never bounds of memory already handed to someone else. */
CUresult kc_hook_MemFree(__typeof__(&cuMemFree_v2) real, CUdeviceptr p)
{
    kc_alloc_remove(p);
    return real(p);
}

CUresult kc_hook_MemFreeAsync(__typeof__(&cuMemFreeAsync) real, CUdeviceptr p, CUstream s)
{
    kc_alloc_remove(p);
    return real(p, s);
}
