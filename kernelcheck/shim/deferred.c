/* Instances launched before their kernel's analysis arrived, kept for a verdict at exit.
 *
 * The analysis of a module runs beside the program (the helper), so the first launches of
 * a short program usually come before it is ready and count as not proven (no_analysis).
 * Each such launch is remembered here: its packed parameter bytes and dimensions, one entry
 * per distinct instance with a repeat count. At exit they go into the report (log.c), and
 * `kernelcheck run` decides them with the same C evaluator once the analysis is in the cache
 * (kernelcheck/shim/launcher.py). The launch itself was not held back and, under recovery,
 * was treated as not proven: the verdict at exit is for the report only.
 *
 * Packing kernelParams needs the parameter layout, which the shim otherwise takes from the
 * analysis: before it, the driver is asked once per kernel (cuFuncGetParamInfo, CUDA 12.4;
 * cuKernelGetParamInfo for a CUkernel handle). Without it (an older driver), launches through
 * kernelParams cannot be kept and stay no_analysis; launches with a packed `extra` buffer
 * need no layout.
 *
 * Bounded: at most KC_DEFER_DISTINCT distinct instances per kernel, each at most
 * KC_DEFER_BYTES parameter bytes, KC_DEFER_TOTAL bytes in all; launches past a bound are
 * counted as dropped. Only launches of kernels with no analysis come here, so the lock never
 * touches the path of analysed kernels. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define KC_DEFER_DISTINCT 64
#define KC_DEFER_BYTES 4096
#define KC_DEFER_TOTAL (16u << 20)

struct deferred_instance {
    uint32_t dims[6];
    uint32_t size;
    uint64_t count;
    unsigned char *bytes;
};

struct kc_deferred {
    int layout_state;           /* 0 not asked, 1 known, -1 the driver cannot tell */
    uint32_t nparams, param_size;
    uint32_t *offsets, *sizes;
    int n;
    uint64_t dropped, no_layout;
    struct deferred_instance items[KC_DEFER_DISTINCT];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t total_bytes;

typedef CUresult (*param_info_fn)(void *, size_t, size_t *, size_t *);

/* The layout of f's parameters from the driver, or -1. Called without the lock held (a
 * driver call), with a result the caller stores under it. */
static int ask_layout(CUfunction f, uint32_t **offsets, uint32_t **sizes, uint32_t *nparams,
                      uint32_t *param_size)
{
    param_info_fn by_function = (param_info_fn)kc_driver_symbol("cuFuncGetParamInfo");
    param_info_fn by_kernel = (param_info_fn)kc_driver_symbol("cuKernelGetParamInfo");
    param_info_fn ask = by_function;
    size_t offset, size;
    if (!ask || ask(f, 0, &offset, &size) == CUDA_ERROR_INVALID_HANDLE)
        ask = by_kernel;
    if (!ask)
        return -1;
    uint32_t cap = 16, n = 0, end = 0;
    uint32_t *o = malloc(cap * sizeof *o), *s = malloc(cap * sizeof *s);
    for (; o && s; n++) {
        CUresult r = ask(f, n, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            break; /* past the last parameter */
        if (r != CUDA_SUCCESS || offset + size > KC_DEFER_BYTES || n >= 4096) {
            n = UINT32_MAX;
            break;
        }
        if (n == cap) {
            cap *= 2;
            uint32_t *o2 = realloc(o, cap * sizeof *o), *s2 = o2 ? realloc(s, cap * sizeof *s)
                                                                  : NULL;
            if (!o2 || !s2) {
                free(o2 ? o2 : o);
                free(s);
                return -1;
            }
            o = o2, s = s2;
        }
        o[n] = (uint32_t)offset;
        s[n] = (uint32_t)size;
        if (offset + size > end)
            end = (uint32_t)(offset + size);
    }
    if (!o || !s || n == UINT32_MAX) {
        free(o);
        free(s);
        return -1;
    }
    *offsets = o, *sizes = s, *nparams = n, *param_size = end;
    return 1;
}

static struct kc_deferred *set_of(struct kc_kernel *k) /* under lock */
{
    if (!k->deferred && !kc_fault("oom"))
        k->deferred = calloc(1, sizeof *k->deferred);
    return k->deferred;
}

void kc_defer(struct kc_kernel *k, CUfunction f, const uint32_t grid[3],
              const uint32_t block[3], void **params, void **extra)
{
    const unsigned char *buf = NULL;
    size_t size = 0;
    unsigned char packed[KC_DEFER_BYTES];
    if (!params && extra) {
        for (int j = 0; extra[j] != CU_LAUNCH_PARAM_END && j < 64; j += 2) {
            if (extra[j] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[j + 1];
            else if (extra[j] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[j + 1])
                size = *(size_t *)extra[j + 1];
        }
        if (!buf)
            size = 0;
    }
    pthread_mutex_lock(&lock);
    struct kc_deferred *d = set_of(k);
    if (!d) {
        pthread_mutex_unlock(&lock);
        return;
    }
    if (params && d->layout_state == 0) {
        pthread_mutex_unlock(&lock);
        uint32_t *o = NULL, *s = NULL, n = 0, end = 0;
        int state = ask_layout(f, &o, &s, &n, &end);
        pthread_mutex_lock(&lock);
        if (d->layout_state == 0) {
            d->layout_state = state;
            d->offsets = o, d->sizes = s, d->nparams = n, d->param_size = end;
        } else {
            free(o);
            free(s);
        }
    }
    if (params) {
        if (d->layout_state != 1) {
            d->no_layout++;
            pthread_mutex_unlock(&lock);
            return;
        }
        memset(packed, 0, d->param_size);
        for (uint32_t j = 0; j < d->nparams; j++)
            if (params[j])
                memcpy(packed + d->offsets[j], params[j], d->sizes[j]);
        buf = packed;
        size = d->param_size;
    } else if (!extra) {
        buf = packed; /* no parameters */
        size = 0;
    }
    if (!buf && size) {
        d->no_layout++;
        pthread_mutex_unlock(&lock);
        return;
    }
    uint32_t dims[6] = {grid[0], grid[1], grid[2], block[0], block[1], block[2]};
    for (int j = 0; j < d->n; j++) {
        struct deferred_instance *it = &d->items[j];
        if (it->size == size && memcmp(it->dims, dims, sizeof dims) == 0 &&
            memcmp(it->bytes, buf, size) == 0) {
            it->count++;
            pthread_mutex_unlock(&lock);
            return;
        }
    }
    unsigned char *copy = NULL;
    if (d->n < KC_DEFER_DISTINCT && size <= KC_DEFER_BYTES && total_bytes + size <=
        KC_DEFER_TOTAL && !kc_fault("oom"))
        copy = malloc(size ? size : 1);
    if (!copy) {
        d->dropped++;
        pthread_mutex_unlock(&lock);
        return;
    }
    memcpy(copy, buf, size);
    total_bytes += size;
    struct deferred_instance *it = &d->items[d->n++];
    memcpy(it->dims, dims, sizeof dims);
    it->size = (uint32_t)size;
    it->count = 1;
    it->bytes = copy;
    pthread_mutex_unlock(&lock);
}

void kc_deferred_write(FILE *f, struct kc_kernel *k)
{
    pthread_mutex_lock(&lock);
    struct kc_deferred *d = k->deferred;
    if (!d) {
        pthread_mutex_unlock(&lock);
        return;
    }
    fprintf(f, ", \"deferred_dropped\": %llu, \"deferred_no_layout\": %llu, \"deferred\": [",
            (unsigned long long)d->dropped, (unsigned long long)d->no_layout);
    for (int j = 0; j < d->n; j++) {
        const struct deferred_instance *it = &d->items[j];
        fprintf(f, "%s{\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"count\": %llu, "
                   "\"params\": \"", j ? ", " : "", it->dims[0], it->dims[1], it->dims[2],
                it->dims[3], it->dims[4], it->dims[5], (unsigned long long)it->count);
        for (uint32_t b = 0; b < it->size; b++)
            fprintf(f, "%02x", it->bytes[b]);
        fprintf(f, "\"}");
    }
    fprintf(f, "]");
    pthread_mutex_unlock(&lock);
}
