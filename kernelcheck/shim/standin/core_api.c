/* The stand-in driver's entry points beyond the basic launch path: what cuda.core (Device,
 * Stream, Program/ObjectCode, DeviceMemoryResource, LegacyPinnedMemoryResource, launch) and
 * other current programs call. Stream and context queries, events, memory pools, page-locked
 * host memory, pointer attributes, copies between any two addresses (unified addressing),
 * kernel and function queries, and cuGetExportTable.
 *
 * cuGetExportTable hands out undocumented tables of internal entry points that NVIDIA's own
 * libraries (the runtime, NVRTC's and nvJitLink's helpers) probe for; the stand-in has none
 * and answers CUDA_ERROR_NOT_SUPPORTED for every table, which those callers handle, instead
 * of leaving them a null table to call through. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin.h"

#define MAGIC_EVENT 0x6b636576U
#define MAGIC_POOL 0x6b63706cU

/* ------------------------------------------------------------------ export tables */
API(cuGetExportTable)(const void **table, const void *id)
{
    (void)id;
    if (table)
        *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ------------------------------------------------------------------ device and context */
API(cuDeviceGetUuid)(unsigned char uuid[16], CUdevice dev)
{
    if (!uuid || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid, "kernelcheck-stdn", 16);
    return CUDA_SUCCESS;
}

API(cuDeviceGetPCIBusId)(char *id, int len, CUdevice dev)
{
    if (!id || len <= 0 || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(id, (size_t)len, "0000:00:00.0");
    return CUDA_SUCCESS;
}

API(cuDeviceCanAccessPeer)(int *can, CUdevice dev, CUdevice peer)
{
    (void)dev, (void)peer;
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    *can = 0;
    return CUDA_SUCCESS;
}

API(cuCtxGetStreamPriorityRange)(int *least, int *greatest)
{
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return CUDA_SUCCESS;
}

API(cuCtxGetApiVersion)(CUcontext ctx, unsigned int *version)
{
    (void)ctx;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = KC_STANDIN_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

API(cuCtxGetFlags)(unsigned int *flags)
{
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    return CUDA_SUCCESS;
}

API(cuCtxGetId)(CUcontext ctx, unsigned long long *id)
{
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    ctx = ctx ? ctx : kc_current_ctx();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *id = (unsigned long long)(uintptr_t)ctx;
    return CUDA_SUCCESS;
}

API(cuCtxGetLimit)(size_t *value, int limit)
{
    (void)limit;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    *value = 0;
    return CUDA_SUCCESS;
}

API(cuCtxSetLimit)(int limit, size_t value)
{
    (void)limit, (void)value;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ streams */
API(cuStreamGetPriority)(CUstream s, int *priority)
{
    (void)s;
    if (!priority)
        return CUDA_ERROR_INVALID_VALUE;
    *priority = 0;
    return CUDA_SUCCESS;
}

API(cuStreamGetFlags)(CUstream s, unsigned int *flags)
{
    (void)s;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    return CUDA_SUCCESS;
}

API(cuStreamGetCtx)(CUstream s, CUcontext *ctx)
{
    (void)s;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = kc_current_ctx() ? kc_current_ctx() : &kc_primary_ctx;
    return CUDA_SUCCESS;
}

API(cuStreamGetCtx_v2)(CUstream s, CUcontext *ctx, void **green_ctx)
{
    if (green_ctx)
        *green_ctx = NULL;
    return impl_cuStreamGetCtx(s, ctx);
}

API(cuStreamGetId)(CUstream s, unsigned long long *id)
{
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    *id = (unsigned long long)(uintptr_t)s;
    return CUDA_SUCCESS;
}

API(cuStreamGetDevice)(CUstream s, CUdevice *dev)
{
    (void)s;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return CUDA_SUCCESS;
}

/* Every operation of the stand-in completes before it returns, so a stream has nothing to
 * wait for and a host function can run at once, in order. */
API(cuStreamWaitEvent)(CUstream s, void *event, unsigned int flags)
{
    (void)s, (void)event, (void)flags;
    return CUDA_SUCCESS;
}

API(cuLaunchHostFunc)(CUstream s, void (*fn)(void *), void *data)
{
    (void)s;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    fn(data);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ events */
struct kc_event {
    uint32_t magic;
    unsigned int flags;
    int recorded;
    struct timespec at;
};

API(cuEventCreate)(void **event, unsigned int flags)
{
    if (!event)
        return CUDA_ERROR_INVALID_VALUE;
    struct kc_event *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = MAGIC_EVENT;
    e->flags = flags;
    *event = e;
    return CUDA_SUCCESS;
}

static struct kc_event *event_of(void *handle)
{
    struct kc_event *e = handle;
    return e && e->magic == MAGIC_EVENT ? e : NULL;
}

API(cuEventRecord)(void *event, CUstream s)
{
    (void)s;
    struct kc_event *e = event_of(event);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    clock_gettime(CLOCK_MONOTONIC, &e->at);
    e->recorded = 1;
    return CUDA_SUCCESS;
}

API(cuEventRecordWithFlags)(void *event, CUstream s, unsigned int flags)
{
    (void)flags;
    return impl_cuEventRecord(event, s);
}

API(cuEventQuery)(void *event)
{
    return event_of(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API(cuEventSynchronize)(void *event)
{
    return event_of(event) ? kc_standin_synchronize() : CUDA_ERROR_INVALID_HANDLE;
}

API(cuEventDestroy_v2)(void *event)
{
    struct kc_event *e = event_of(event);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

API(cuEventElapsedTime)(float *ms, void *start, void *end)
{
    struct kc_event *a = event_of(start), *b = event_of(end);
    if (!ms || !a || !b)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)((b->at.tv_sec - a->at.tv_sec) * 1e3 + (b->at.tv_nsec - a->at.tv_nsec) / 1e6);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ memory pools */
/* One pool object stands for every pool: allocations from it are ordinary device
 * allocations, and its attributes read as zero (no reserve, no threshold). */
struct kc_pool { uint32_t magic; };
static struct kc_pool default_pool = {MAGIC_POOL};

API(cuDeviceGetDefaultMemPool)(void **pool, CUdevice dev)
{
    if (!pool || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = &default_pool;
    return CUDA_SUCCESS;
}

API(cuDeviceGetMemPool)(void **pool, CUdevice dev)
{
    return impl_cuDeviceGetDefaultMemPool(pool, dev);
}

API(cuDeviceSetMemPool)(CUdevice dev, void *pool)
{
    (void)pool;
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

API(cuMemPoolCreate)(void **pool, const void *props)
{
    (void)props;
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    struct kc_pool *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->magic = MAGIC_POOL;
    *pool = p;
    return CUDA_SUCCESS;
}

API(cuMemPoolDestroy)(void *pool)
{
    struct kc_pool *p = pool;
    if (!p || p->magic != MAGIC_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    if (p != &default_pool) {
        p->magic = 0;
        free(p);
    }
    return CUDA_SUCCESS;
}

/* CUmemPool_attribute: 1-3 and 9-12, 14, 15 are int-sized; 4-8 and 13 are cuuint64_t. */
static size_t pool_attribute_size(int attribute)
{
    return (attribute >= 4 && attribute <= 8) || attribute == 13 ? 8 : 4;
}

API(cuMemPoolSetAttribute)(void *pool, int attribute, void *value)
{
    (void)attribute, (void)value;
    return pool ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API(cuMemPoolGetAttribute)(void *pool, int attribute, void *value)
{
    if (!pool || !value)
        return CUDA_ERROR_INVALID_VALUE;
    memset(value, 0, pool_attribute_size(attribute));
    return CUDA_SUCCESS;
}

API(cuMemPoolTrimTo)(void *pool, size_t keep)
{
    (void)keep;
    return pool ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API(cuMemPoolSetAccess)(void *pool, const void *map, size_t count)
{
    (void)map, (void)count;
    return pool ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API(cuMemAllocFromPoolAsync)(CUdeviceptr *dptr, size_t bytes, void *pool, CUstream s)
{
    extern CUresult impl_cuMemAlloc_v2(CUdeviceptr *, size_t);
    (void)pool, (void)s;
    return impl_cuMemAlloc_v2(dptr, bytes);
}

/* ------------------------------------------------------------------ page-locked host memory */
/* Host allocations and registrations, so that pointer attributes can say "host". */
struct host_range {
    uintptr_t base;
    size_t size;
    int owned;
};
static struct host_range *hosts;
static size_t n_hosts, cap_hosts;
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

static int host_add(void *p, size_t size, int owned)
{
    pthread_mutex_lock(&host_lock);
    if (n_hosts == cap_hosts) {
        size_t cap = cap_hosts ? 2 * cap_hosts : 32;
        struct host_range *grown = realloc(hosts, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&host_lock);
            return 0;
        }
        hosts = grown, cap_hosts = cap;
    }
    hosts[n_hosts++] = (struct host_range){(uintptr_t)p, size, owned};
    pthread_mutex_unlock(&host_lock);
    return 1;
}

/* Removes the range starting at p; returns 1 and its owned flag, or 0 if none. */
static int host_remove(void *p, int *owned)
{
    int found = 0;
    pthread_mutex_lock(&host_lock);
    for (size_t k = 0; k < n_hosts; k++)
        if (hosts[k].base == (uintptr_t)p) {
            *owned = hosts[k].owned;
            hosts[k] = hosts[--n_hosts];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&host_lock);
    return found;
}

static int host_find(uintptr_t p, struct host_range *out)
{
    int found = 0;
    pthread_mutex_lock(&host_lock);
    for (size_t k = 0; k < n_hosts; k++)
        if (p >= hosts[k].base && p - hosts[k].base < (hosts[k].size ? hosts[k].size : 1)) {
            *out = hosts[k];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&host_lock);
    return found;
}

API(cuMemHostAlloc)(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    if (!pp)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!host_add(p, bytes, 1)) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pp = p;
    return CUDA_SUCCESS;
}

API(cuMemAllocHost_v2)(void **pp, size_t bytes)
{
    return impl_cuMemHostAlloc(pp, bytes, 0);
}

API(cuMemFreeHost)(void *p)
{
    int owned = 0;
    if (!host_remove(p, &owned))
        return CUDA_ERROR_INVALID_VALUE;
    if (owned)
        free(p);
    return CUDA_SUCCESS;
}

API(cuMemHostRegister_v2)(void *p, size_t bytes, unsigned int flags)
{
    (void)flags;
    if (!p || !bytes)
        return CUDA_ERROR_INVALID_VALUE;
    return host_add(p, bytes, 0) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API(cuMemHostUnregister)(void *p)
{
    int owned = 0;
    return host_remove(p, &owned) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The emulator cannot reach host memory, so there is no device address for it. */
API(cuMemHostGetDevicePointer_v2)(CUdeviceptr *dptr, void *p, unsigned int flags)
{
    (void)dptr, (void)p, (void)flags;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuMemHostGetFlags)(unsigned int *flags, void *p)
{
    struct host_range r;
    if (!flags || !host_find((uintptr_t)p, &r))
        return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ pointer attributes */
#define MEMORYTYPE_HOST 1
#define MEMORYTYPE_DEVICE 2

struct pointer_info {
    int type;               /* 0: not a CUDA pointer */
    uintptr_t base;
    size_t size;
};

static struct pointer_info classify(CUdeviceptr ptr)
{
    struct pointer_info info = {0, 0, 0};
    struct host_range r;
    if (host_find((uintptr_t)ptr, &r)) {
        info.type = MEMORYTYPE_HOST;
        info.base = r.base;
        info.size = r.size;
        return info;
    }
    long long out[3];
    if (kc_py_ints("pointer_info", out, 3, "(K)", (unsigned long long)ptr) == 3 &&
        out[0] == CUDA_SUCCESS) {
        info.type = MEMORYTYPE_DEVICE;
        info.base = (uintptr_t)out[1];
        info.size = (size_t)out[2];
    }
    return info;
}

/* Writes one attribute; returns CUDA_ERROR_INVALID_VALUE for one the stand-in does not know
 * (its size is not known either, so nothing is written). Booleans are written as one byte,
 * which reads the same through a zeroed int on a little-endian host. */
static CUresult put_attribute(int attribute, void *data, const struct pointer_info *info,
                              CUdeviceptr ptr)
{
    int known = info->type != 0;
    switch (attribute) {
    case 1: /* CONTEXT */
        *(CUcontext *)data = info->type == MEMORYTYPE_DEVICE ? &kc_primary_ctx : NULL;
        return CUDA_SUCCESS;
    case 2: /* MEMORY_TYPE */
        *(unsigned int *)data = (unsigned int)info->type;
        return CUDA_SUCCESS;
    case 3: /* DEVICE_POINTER */
        *(CUdeviceptr *)data = info->type == MEMORYTYPE_DEVICE ? ptr : 0;
        return CUDA_SUCCESS;
    case 4: /* HOST_POINTER */
        *(void **)data = info->type == MEMORYTYPE_HOST ? (void *)(uintptr_t)ptr : NULL;
        return CUDA_SUCCESS;
    case 6: case 10: case 15: /* SYNC_MEMOPS, IS_LEGACY_CUDA_IPC_CAPABLE, GPU_DIRECT_RDMA */
        *(unsigned char *)data = 0;
        return CUDA_SUCCESS;
    case 8: /* IS_MANAGED */
        *(unsigned char *)data = 0;
        return CUDA_SUCCESS;
    case 13: /* MAPPED */
        *(unsigned char *)data = (unsigned char)known;
        return CUDA_SUCCESS;
    case 7: case 14: case 20: /* BUFFER_ID, ALLOWED_HANDLE_TYPES, MEMORY_BLOCK_ID */
        *(unsigned long long *)data = attribute == 14 ? 0 : (unsigned long long)info->base;
        return CUDA_SUCCESS;
    case 9: /* DEVICE_ORDINAL */
        *(int *)data = info->type == MEMORYTYPE_DEVICE ? 0 : -2; /* CU_DEVICE_CPU */
        return CUDA_SUCCESS;
    case 11: /* RANGE_START_ADDR */
        *(CUdeviceptr *)data = (CUdeviceptr)info->base;
        return CUDA_SUCCESS;
    case 12: /* RANGE_SIZE */
        *(size_t *)data = info->size;
        return CUDA_SUCCESS;
    case 17: /* MEMPOOL_HANDLE */
        *(void **)data = NULL;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

API(cuPointerGetAttribute)(void *data, int attribute, CUdeviceptr ptr)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    struct pointer_info info = classify(ptr);
    if (!info.type)
        return CUDA_ERROR_INVALID_VALUE;
    return put_attribute(attribute, data, &info, ptr);
}

/* Unlike cuPointerGetAttribute, an address CUDA does not know is not an error here: its
 * attributes read as zero (memory type 0). */
API(cuPointerGetAttributes)(unsigned int count, int *attributes, void **data, CUdeviceptr ptr)
{
    if (count && (!attributes || !data))
        return CUDA_ERROR_INVALID_VALUE;
    struct pointer_info info = classify(ptr);
    for (unsigned int k = 0; k < count; k++) {
        if (!data[k])
            continue;
        CUresult st = put_attribute(attributes[k], data[k], &info, ptr);
        if (st != CUDA_SUCCESS)
            return st;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ copies and sets */
/* cuMemcpy with unified addressing: either side may be host or device memory. */
API(cuMemcpy)(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memcpy_any", out, 1, "(KKK)", (unsigned long long)dst,
                                (unsigned long long)src, (unsigned long long)n), out);
}

API(cuMemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemcpy(dst, src, n);
}

API(cuMemsetD16_v2)(CUdeviceptr dst, unsigned short value, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memset", out, 1, "(KIKI)", dst, (unsigned int)value,
                                (unsigned long long)n, 2u), out);
}

API(cuMemsetD16Async)(CUdeviceptr dst, unsigned short value, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemsetD16_v2(dst, value, n);
}

/* ------------------------------------------------------------------ kernels and functions */
static struct kc_func *func_of(void *handle)
{
    struct kc_func *f = handle;
    return f && f->magic == MAGIC_FUNC ? f : NULL;
}

API(cuFuncGetParamInfo)(CUfunction fn, size_t index, size_t *offset, size_t *size)
{
    struct kc_func *f = func_of(fn);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (index >= (size_t)f->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset)
        *offset = (size_t)f->offsets[index];
    if (size)
        *size = (size_t)f->sizes[index];
    return CUDA_SUCCESS;
}

API(cuKernelGetParamInfo)(CUkernel kernel, size_t index, size_t *offset, size_t *size)
{
    return impl_cuFuncGetParamInfo((CUfunction)kernel, index, offset, size);
}

API(cuFuncGetName)(const char **name, CUfunction fn)
{
    struct kc_func *f = func_of(fn);
    if (!name || !f)
        return CUDA_ERROR_INVALID_VALUE;
    *name = f->name;
    return CUDA_SUCCESS;
}

API(cuKernelGetName)(const char **name, CUkernel kernel)
{
    return impl_cuFuncGetName(name, (CUfunction)kernel);
}

API(cuFuncGetModule)(CUmodule *mod, CUfunction fn)
{
    struct kc_func *f = func_of(fn);
    if (!mod || !f)
        return CUDA_ERROR_INVALID_VALUE;
    *mod = f->module;
    return CUDA_SUCCESS;
}

API(cuKernelGetLibrary)(CUlibrary *lib, CUkernel kernel)
{
    return impl_cuFuncGetModule((CUmodule *)lib, (CUfunction)kernel);
}

API(cuFuncIsLoaded)(int *state, CUfunction fn)
{
    if (!state || !func_of(fn))
        return CUDA_ERROR_INVALID_VALUE;
    *state = 1; /* CU_FUNCTION_LOADING_STATE_LOADED */
    return CUDA_SUCCESS;
}

API(cuFuncLoad)(CUfunction fn)
{
    return func_of(fn) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API(cuKernelGetAttribute)(int *value, int attribute, CUkernel kernel, CUdevice dev)
{
    extern CUresult impl_cuFuncGetAttribute(int *, int, CUfunction);
    (void)dev;
    if (!func_of(kernel))
        return CUDA_ERROR_INVALID_HANDLE;
    return impl_cuFuncGetAttribute(value, attribute, (CUfunction)kernel);
}

API(cuKernelSetAttribute)(int attribute, int value, CUkernel kernel, CUdevice dev)
{
    (void)attribute, (void)value, (void)dev;
    return func_of(kernel) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API(cuKernelSetCacheConfig)(CUkernel kernel, int config, CUdevice dev)
{
    (void)config, (void)dev;
    return func_of(kernel) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API(cuFuncSetCacheConfig)(CUfunction fn, int config)
{
    (void)config;
    return func_of(fn) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* One SM of the device the stand-in reports: 2048 threads, 32 blocks. */
API(cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction fn, int block_size,
                                                 size_t dynamic_shared)
{
    (void)dynamic_shared;
    if (!blocks || !func_of(fn) || block_size <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int n = 2048 / block_size;
    *blocks = n > 32 ? 32 : n;
    return CUDA_SUCCESS;
}

API(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(int *blocks, CUfunction fn,
                                                          int block_size,
                                                          size_t dynamic_shared,
                                                          unsigned int flags)
{
    (void)flags;
    return impl_cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, fn, block_size,
                                                            dynamic_shared);
}

API(cuOccupancyMaxPotentialBlockSize)(int *min_grid, int *block_size, CUfunction fn,
                                      void *shared_of_block, size_t dynamic_shared,
                                      int limit)
{
    (void)shared_of_block, (void)dynamic_shared;
    if (!min_grid || !block_size || !func_of(fn))
        return CUDA_ERROR_INVALID_VALUE;
    *block_size = limit > 0 && limit < 1024 ? limit : 1024;
    *min_grid = 132 * (2048 / *block_size);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ names */
const struct kc_proc kc_core_procs[] = {
    PROC("cuGetExportTable", cuGetExportTable), PROC("cuDeviceGetUuid", cuDeviceGetUuid),
    PROC("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId),
    PROC("cuDeviceCanAccessPeer", cuDeviceCanAccessPeer),
    PROC("cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange),
    PROC("cuCtxGetApiVersion", cuCtxGetApiVersion), PROC("cuCtxGetFlags", cuCtxGetFlags),
    PROC("cuCtxGetId", cuCtxGetId), PROC("cuCtxGetLimit", cuCtxGetLimit),
    PROC("cuCtxSetLimit", cuCtxSetLimit), PROC("cuStreamGetPriority", cuStreamGetPriority),
    PROC("cuStreamGetFlags", cuStreamGetFlags), PROC("cuStreamGetCtx", cuStreamGetCtx_v2),
    PROC("cuStreamGetId", cuStreamGetId), PROC("cuStreamGetDevice", cuStreamGetDevice),
    PROC("cuStreamWaitEvent", cuStreamWaitEvent), PROC("cuLaunchHostFunc", cuLaunchHostFunc),
    PROC("cuEventCreate", cuEventCreate), PROC("cuEventRecord", cuEventRecord),
    PROC("cuEventRecordWithFlags", cuEventRecordWithFlags), PROC("cuEventQuery", cuEventQuery),
    PROC("cuEventSynchronize", cuEventSynchronize), PROC("cuEventDestroy", cuEventDestroy_v2),
    PROC("cuEventElapsedTime", cuEventElapsedTime),
    PROC("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool),
    PROC("cuDeviceGetMemPool", cuDeviceGetMemPool),
    PROC("cuDeviceSetMemPool", cuDeviceSetMemPool), PROC("cuMemPoolCreate", cuMemPoolCreate),
    PROC("cuMemPoolDestroy", cuMemPoolDestroy),
    PROC("cuMemPoolSetAttribute", cuMemPoolSetAttribute),
    PROC("cuMemPoolGetAttribute", cuMemPoolGetAttribute),
    PROC("cuMemPoolTrimTo", cuMemPoolTrimTo), PROC("cuMemPoolSetAccess", cuMemPoolSetAccess),
    PROC("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync),
    PROC("cuMemHostAlloc", cuMemHostAlloc), PROC("cuMemAllocHost", cuMemAllocHost_v2),
    PROC("cuMemFreeHost", cuMemFreeHost), PROC("cuMemHostRegister", cuMemHostRegister_v2),
    PROC("cuMemHostUnregister", cuMemHostUnregister),
    PROC("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer_v2),
    PROC("cuMemHostGetFlags", cuMemHostGetFlags),
    PROC("cuPointerGetAttribute", cuPointerGetAttribute),
    PROC("cuPointerGetAttributes", cuPointerGetAttributes), PROC("cuMemcpy", cuMemcpy),
    PROC("cuMemcpyAsync", cuMemcpyAsync), PROC("cuMemsetD16", cuMemsetD16_v2),
    PROC("cuMemsetD16Async", cuMemsetD16Async),
    PROC("cuFuncGetParamInfo", cuFuncGetParamInfo),
    PROC("cuKernelGetParamInfo", cuKernelGetParamInfo), PROC("cuFuncGetName", cuFuncGetName),
    PROC("cuKernelGetName", cuKernelGetName), PROC("cuFuncGetModule", cuFuncGetModule),
    PROC("cuKernelGetLibrary", cuKernelGetLibrary), PROC("cuFuncIsLoaded", cuFuncIsLoaded),
    PROC("cuFuncLoad", cuFuncLoad), PROC("cuKernelGetAttribute", cuKernelGetAttribute),
    PROC("cuKernelSetAttribute", cuKernelSetAttribute),
    PROC("cuKernelSetCacheConfig", cuKernelSetCacheConfig),
    PROC("cuFuncSetCacheConfig", cuFuncSetCacheConfig),
    PROC("cuOccupancyMaxActiveBlocksPerMultiprocessor",
         cuOccupancyMaxActiveBlocksPerMultiprocessor),
    PROC("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
         cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    PROC("cuOccupancyMaxPotentialBlockSize", cuOccupancyMaxPotentialBlockSize),
};
const unsigned kc_core_nprocs = sizeof kc_core_procs / sizeof kc_core_procs[0];

ALIAS(cuGetExportTable); ALIAS(cuDeviceGetUuid); ALIAS(cuDeviceGetPCIBusId);
ALIAS(cuDeviceCanAccessPeer); ALIAS(cuCtxGetStreamPriorityRange); ALIAS(cuCtxGetApiVersion);
ALIAS(cuCtxGetFlags); ALIAS(cuCtxGetId); ALIAS(cuCtxGetLimit); ALIAS(cuCtxSetLimit);
ALIAS(cuStreamGetPriority); ALIAS(cuStreamGetFlags); ALIAS(cuStreamGetCtx);
ALIAS(cuStreamGetCtx_v2); ALIAS(cuStreamGetId); ALIAS(cuStreamGetDevice);
ALIAS(cuStreamWaitEvent); ALIAS(cuLaunchHostFunc); ALIAS(cuEventCreate); ALIAS(cuEventRecord);
ALIAS(cuEventRecordWithFlags); ALIAS(cuEventQuery); ALIAS(cuEventSynchronize);
ALIAS(cuEventDestroy_v2); ALIAS(cuEventElapsedTime); ALIAS(cuDeviceGetDefaultMemPool);
ALIAS(cuDeviceGetMemPool); ALIAS(cuDeviceSetMemPool); ALIAS(cuMemPoolCreate);
ALIAS(cuMemPoolDestroy); ALIAS(cuMemPoolSetAttribute); ALIAS(cuMemPoolGetAttribute);
ALIAS(cuMemPoolTrimTo); ALIAS(cuMemPoolSetAccess); ALIAS(cuMemAllocFromPoolAsync);
ALIAS(cuMemHostAlloc); ALIAS(cuMemAllocHost_v2); ALIAS(cuMemFreeHost);
ALIAS(cuMemHostRegister_v2); ALIAS(cuMemHostUnregister); ALIAS(cuMemHostGetDevicePointer_v2);
ALIAS(cuMemHostGetFlags); ALIAS(cuPointerGetAttribute); ALIAS(cuPointerGetAttributes);
ALIAS(cuMemcpy); ALIAS(cuMemcpyAsync); ALIAS(cuMemsetD16_v2); ALIAS(cuMemsetD16Async);
ALIAS(cuFuncGetParamInfo); ALIAS(cuKernelGetParamInfo); ALIAS(cuFuncGetName);
ALIAS(cuKernelGetName); ALIAS(cuFuncGetModule); ALIAS(cuKernelGetLibrary);
ALIAS(cuFuncIsLoaded); ALIAS(cuFuncLoad); ALIAS(cuKernelGetAttribute);
ALIAS(cuKernelSetAttribute); ALIAS(cuKernelSetCacheConfig); ALIAS(cuFuncSetCacheConfig);
ALIAS(cuOccupancyMaxActiveBlocksPerMultiprocessor);
ALIAS(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
ALIAS(cuOccupancyMaxPotentialBlockSize);
