/* A stand-in libcuda.so.1 for machines without a GPU: the CUDA driver API subset that a
 * cuda-python program uses, executing kernels on kernelcheck's CPU emulator.
 *
 * Built like the real driver behaves: every entry point is an internal (static) function,
 * exported under its CUDA name through an alias, and cuGetProcAddress hands out the internal
 * addresses. The library is also linked with -Bsymbolic. So a preloaded interception library
 * can only see calls it intercepts at the boundary (dlsym, cuGetProcAddress, or a direct
 * link), never through symbol interposition inside this library.
 *
 * Handles are small heap records with a magic number; device memory, modules and launches
 * are kept by the Python half (kernelcheck.standin.driver), reached through pybridge.c.
 * Everything is synchronous: streams exist but every operation completes before it returns.
 *
 * KERNELCHECK_STANDIN_NOOP=1 turns launches into no-ops that never enter Python (used to
 * measure the launch path alone); KERNELCHECK_STANDIN_DEBUG=1 prints every name
 * cuGetProcAddress is asked for and does not know. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../image.h"
#include "standin.h"

/* Tells kernelcheck (kernelcheck.shim.driver_choice) this libcuda.so.1 is the stand-in. */
EXPORT const char kc_standin_marker[] = "kernelcheck stand-in libcuda";

struct CUctx_st kc_primary_ctx = {0, 1};
static __thread CUcontext current_ctx;
static int noop_launches = -1;

CUcontext kc_current_ctx(void)
{
    return current_ctx;
}

/* ------------------------------------------------------------------ init and device */
API(cuInit)(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

API(cuDriverGetVersion)(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = KC_STANDIN_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

API(cuDeviceGetCount)(int *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}

API(cuDeviceGet)(CUdevice *dev, int ordinal)
{
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

API(cuDeviceGetName)(char *name, int len, CUdevice dev)
{
    if (!name || len <= 0 || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "kernelcheck stand-in (CPU emulator)");
    return CUDA_SUCCESS;
}

API(cuDeviceTotalMem)(size_t *bytes, CUdevice dev)
{
    (void)dev;
    *bytes = (size_t)16 << 30;
    return CUDA_SUCCESS;
}

static int attribute_value(int attrib)
{
    switch (attrib) {
    case 1: return 1024;                     /* MAX_THREADS_PER_BLOCK */
    case 2: case 3: return 1024;             /* MAX_BLOCK_DIM_X/Y */
    case 4: return 64;                       /* MAX_BLOCK_DIM_Z */
    case 5: return 2147483647;               /* MAX_GRID_DIM_X */
    case 6: case 7: return 65535;
    case 8: return 49152;                    /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 10: return 32;                      /* WARP_SIZE */
    case 16: return 132;                     /* MULTIPROCESSOR_COUNT */
    case 41: return 1;                       /* UNIFIED_ADDRESSING */
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    default: return 0;
    }
}

API(cuDeviceGetAttribute)(int *value, CUdevice_attribute attrib, CUdevice dev)
{
    if (!value || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *value = attribute_value(attrib);
    return CUDA_SUCCESS;
}

API(cuDeviceComputeCapability)(int *major, int *minor, CUdevice dev)
{
    (void)dev;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ contexts */
API(cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev)
{
    if (!ctx || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = &kc_primary_ctx;
    return CUDA_SUCCESS;
}

API(cuDevicePrimaryCtxRelease)(CUdevice dev)
{
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

API(cuDevicePrimaryCtxReset)(CUdevice dev)
{
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

API(cuDevicePrimaryCtxGetState)(CUdevice dev, unsigned int *flags, int *active)
{
    (void)dev;
    *flags = 0;
    *active = 1;
    return CUDA_SUCCESS;
}

API(cuDevicePrimaryCtxSetFlags)(CUdevice dev, unsigned int flags)
{
    (void)dev;
    (void)flags;
    return CUDA_SUCCESS;
}

static CUresult new_ctx(CUcontext *ctx, CUdevice dev)
{
    if (!ctx || dev != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ctx = c;
    current_ctx = c;
    return CUDA_SUCCESS;
}

/* cuCtxCreate changed signature: _v2 (3.2), _v3 (11.4, exec-affinity params), _v4 (12.5,
 * CUctxCreateParams*); cuGetProcAddress picks the one the caller's version expects. */
API(cuCtxCreate_v2)(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    (void)flags;
    return new_ctx(ctx, dev);
}

API(cuCtxCreate_v3)(CUcontext *ctx, void *params, int n, unsigned int flags, CUdevice dev)
{
    (void)params;
    (void)n;
    (void)flags;
    return new_ctx(ctx, dev);
}

API(cuCtxCreate_v4)(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
    (void)params;
    (void)flags;
    return new_ctx(ctx, dev);
}

API(cuCtxDestroy_v2)(CUcontext ctx)
{
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (current_ctx == ctx)
        current_ctx = NULL;
    if (ctx != &kc_primary_ctx)
        free(ctx);
    return CUDA_SUCCESS;
}

API(cuCtxGetCurrent)(CUcontext *ctx)
{
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = current_ctx;
    return CUDA_SUCCESS;
}

API(cuCtxSetCurrent)(CUcontext ctx)
{
    current_ctx = ctx;
    return CUDA_SUCCESS;
}

API(cuCtxPushCurrent_v2)(CUcontext ctx)
{
    current_ctx = ctx;
    return CUDA_SUCCESS;
}

API(cuCtxPopCurrent_v2)(CUcontext *ctx)
{
    if (ctx)
        *ctx = current_ctx;
    current_ctx = NULL;
    return CUDA_SUCCESS;
}

API(cuCtxGetDevice)(CUdevice *dev)
{
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return current_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* A deferred injected fault (KERNELCHECK_STANDIN_FAIL_LAUNCH=N[:STEPS]:sync) is reported
 * by the next synchronize; without the switch, Python is not entered. */
CUresult kc_standin_synchronize(void)
{
    const char *e = getenv("KERNELCHECK_STANDIN_FAIL_LAUNCH");
    if (!e || !*e)
        return CUDA_SUCCESS;
    long long out[1];
    int n = kc_py_ints("synchronize", out, 1, "()");
    return n < 1 ? CUDA_SUCCESS : (CUresult)out[0];
}

API(cuCtxSynchronize)(void)
{
    return kc_standin_synchronize();
}

/* ------------------------------------------------------------------ modules */
static CUresult load_image(const void *image, long long *id)
{
    size_t size;
    image = kc_image_span(image, &size);
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    long long out[2];
    int n = kc_py_ints("module_load", out, 2, "(KK)", (unsigned long long)(uintptr_t)image,
                       (unsigned long long)size);
    if (n < 2)
        return status_of(n, out);
    *id = out[1];
    return (CUresult)out[0];
}

static CUresult new_mod(void **handle, const void *image)
{
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    struct kc_mod *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult st = load_image(image, &m->id);
    if (st != CUDA_SUCCESS) {
        free(m);
        return st;
    }
    m->magic = MAGIC_MOD;
    *handle = m;
    return CUDA_SUCCESS;
}

API(cuModuleLoadData)(CUmodule *mod, const void *image)
{
    return new_mod((void **)mod, image);
}

API(cuModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned int n, CUjit_option *o,
                        void **v)
{
    (void)n;
    (void)o;
    (void)v;
    return new_mod((void **)mod, image);
}

API(cuModuleLoadFatBinary)(CUmodule *mod, const void *image)
{
    return new_mod((void **)mod, image);
}

static CUresult load_file(void **handle, const char *path)
{
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(path, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = size >= 0 ? calloc(1, (size_t)size + 1) : NULL;
    size_t got = data ? fread(data, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!data || got != (size_t)size) {
        free(data);
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    CUresult st = new_mod(handle, data);
    free(data);
    return st;
}

API(cuModuleLoad)(CUmodule *mod, const char *path)
{
    return load_file((void **)mod, path);
}

API(cuModuleUnload)(CUmodule mod)
{
    struct kc_mod *m = (struct kc_mod *)mod;
    if (!m || m->magic != MAGIC_MOD)
        return CUDA_ERROR_INVALID_HANDLE;
    m->magic = 0;
    free(m);
    return CUDA_SUCCESS;
}

static CUresult get_function(struct kc_func **out_f, void *mod, const char *name, int kernel)
{
    struct kc_mod *m = mod;
    if (!out_f || !name || !m || m->magic != MAGIC_MOD)
        return !m || m->magic != MAGIC_MOD ? CUDA_ERROR_INVALID_HANDLE
                                           : CUDA_ERROR_INVALID_VALUE;
    long long out[3 + 2 * MAX_PARAMS];
    int n = kc_py_ints("module_get_function", out, 3 + 2 * MAX_PARAMS, "(Ls)", m->id, name);
    if (n < 3)
        return status_of(n, out);
    if (out[0] != CUDA_SUCCESS)
        return (CUresult)out[0];
    int nparams = (int)out[2];
    if (nparams > MAX_PARAMS || n < 3 + 2 * nparams)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct kc_func *f = calloc(1, sizeof *f);
    if (!f)
        return CUDA_ERROR_OUT_OF_MEMORY;
    f->magic = MAGIC_FUNC;
    f->is_kernel = kernel;
    f->id = out[1];
    f->module = m;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->nparams = nparams;
    for (int k = 0; k < nparams; k++) {
        f->offsets[k] = (int)out[3 + 2 * k];
        f->sizes[k] = (int)out[4 + 2 * k];
        if (f->offsets[k] + f->sizes[k] > f->param_size)
            f->param_size = f->offsets[k] + f->sizes[k];
    }
    *out_f = f;
    return CUDA_SUCCESS;
}

API(cuModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name)
{
    return get_function((struct kc_func **)fn, mod, name, 0);
}

/* The library API (CUDA 12.0): a library is a module, a CUkernel a context-independent
 * function handle that cuLaunchKernel also accepts. */
API(cuLibraryLoadData)(CUlibrary *lib, const void *image, CUjit_option *jo, void **jv,
                       unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo, (void)jv, (void)njo, (void)lo, (void)lv, (void)nlo;
    return new_mod((void **)lib, image);
}

API(cuLibraryLoadFromFile)(CUlibrary *lib, const char *path, CUjit_option *jo, void **jv,
                           unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo, (void)jv, (void)njo, (void)lo, (void)lv, (void)nlo;
    return load_file((void **)lib, path);
}

API(cuLibraryUnload)(CUlibrary lib)
{
    return impl_cuModuleUnload((CUmodule)lib);
}

API(cuLibraryGetKernel)(CUkernel *kern, CUlibrary lib, const char *name)
{
    return get_function((struct kc_func **)kern, lib, name, 1);
}

API(cuLibraryGetModule)(CUmodule *mod, CUlibrary lib)
{
    *mod = (CUmodule)lib;
    return CUDA_SUCCESS;
}

API(cuKernelGetFunction)(CUfunction *fn, CUkernel kern)
{
    struct kc_func *k = (struct kc_func *)kern;
    if (!fn || !k || k->magic != MAGIC_FUNC || !k->is_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    struct kc_func *f = malloc(sizeof *f);
    if (!f)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *f = *k;
    f->is_kernel = 0;
    *fn = (CUfunction)f;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ memory */
API(cuMemAlloc_v2)(CUdeviceptr *dptr, size_t bytes)
{
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    long long out[2];
    int n = kc_py_ints("mem_alloc", out, 2, "(K)", (unsigned long long)bytes);
    if (n < 2)
        return status_of(n, out);
    *dptr = (CUdeviceptr)out[1];
    return (CUresult)out[0];
}

API(cuMemAllocAsync)(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    (void)s;
    return impl_cuMemAlloc_v2(dptr, bytes);
}

API(cuMemAllocPitch_v2)(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                        unsigned int elem)
{
    (void)elem;
    if (!pitch)
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = (width + 511) / 512 * 512;
    return impl_cuMemAlloc_v2(dptr, *pitch * height);
}

API(cuMemFree_v2)(CUdeviceptr dptr)
{
    long long out[1];
    return status_of(kc_py_ints("mem_free", out, 1, "(K)", dptr), out);
}

API(cuMemFreeAsync)(CUdeviceptr dptr, CUstream s)
{
    (void)s;
    return impl_cuMemFree_v2(dptr);
}

API(cuMemcpyHtoD_v2)(CUdeviceptr dst, const void *src, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memcpy_htod", out, 1, "(KKK)", dst,
                                (unsigned long long)(uintptr_t)src, (unsigned long long)n),
                     out);
}

API(cuMemcpyDtoH_v2)(void *dst, CUdeviceptr src, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memcpy_dtoh", out, 1, "(KKK)",
                                (unsigned long long)(uintptr_t)dst, src, (unsigned long long)n),
                     out);
}

API(cuMemcpyDtoD_v2)(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memcpy_dtod", out, 1, "(KKK)", dst, src,
                                (unsigned long long)n), out);
}

API(cuMemcpyHtoDAsync_v2)(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemcpyHtoD_v2(dst, src, n);
}

API(cuMemcpyDtoHAsync_v2)(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemcpyDtoH_v2(dst, src, n);
}

API(cuMemcpyDtoDAsync_v2)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemcpyDtoD_v2(dst, src, n);
}

API(cuMemsetD8_v2)(CUdeviceptr dst, unsigned char value, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memset", out, 1, "(KIKI)", dst, (unsigned int)value,
                                (unsigned long long)n, 1u), out);
}

API(cuMemsetD32_v2)(CUdeviceptr dst, unsigned int value, size_t n)
{
    long long out[1];
    return status_of(kc_py_ints("memset", out, 1, "(KIKI)", dst, value,
                                (unsigned long long)n, 4u), out);
}

API(cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemsetD8_v2(dst, value, n);
}

API(cuMemsetD32Async)(CUdeviceptr dst, unsigned int value, size_t n, CUstream s)
{
    (void)s;
    return impl_cuMemsetD32_v2(dst, value, n);
}

API(cuMemGetInfo_v2)(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)15 << 30;
    *total = (size_t)16 << 30;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ streams */
API(cuStreamCreate)(CUstream *s, unsigned int flags)
{
    (void)flags;
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    *s = (CUstream)calloc(1, 16);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API(cuStreamCreateWithPriority)(CUstream *s, unsigned int flags, int priority)
{
    (void)priority;
    return impl_cuStreamCreate(s, flags);
}

API(cuStreamDestroy_v2)(CUstream s)
{
    free(s);
    return CUDA_SUCCESS;
}

API(cuStreamSynchronize)(CUstream s)
{
    (void)s;
    return kc_standin_synchronize();
}

API(cuStreamQuery)(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ launches */
static CUresult launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, void **params, void **extra)
{
    struct kc_func *f = (struct kc_func *)fn;
    if (!f || f->magic != MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char local[4096];
    const unsigned char *buf = local;
    size_t size = (size_t)f->param_size;
    if (params) {
        if (size > sizeof local)
            return CUDA_ERROR_NOT_SUPPORTED;
        memset(local, 0, size);
        for (int k = 0; k < f->nparams; k++)
            if (params[k])
                memcpy(local + f->offsets[k], params[k], (size_t)f->sizes[k]);
    } else if (extra) {
        buf = NULL;
        size = 0;
        for (int k = 0; extra[k] != CU_LAUNCH_PARAM_END; k += 2) {
            if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[k + 1];
            else if (extra[k] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                size = *(size_t *)extra[k + 1];
            else
                return CUDA_ERROR_INVALID_VALUE;
        }
        if (!buf || size < (size_t)f->param_size)
            return CUDA_ERROR_INVALID_VALUE;
    } else if (f->nparams) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (noop_launches < 0) {
        const char *e = getenv("KERNELCHECK_STANDIN_NOOP");
        noop_launches = e && *e == '1';
    }
    if (noop_launches)
        return CUDA_SUCCESS;
    long long out[1];
    return status_of(kc_py_ints("launch", out, 1, "(LIIIIIIIKK)", f->id, gx, gy, gz, bx, by,
                                bz, shmem, (unsigned long long)(uintptr_t)buf,
                                (unsigned long long)size), out);
}

API(cuLaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                    unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                    void **extra)
{
    (void)s;
    return launch(fn, gx, gy, gz, bx, by, bz, shmem, params, extra);
}

API(cuLaunchKernelEx)(const CUlaunchConfig *c, CUfunction fn, void **params, void **extra)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(fn, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, params, extra);
}

API(cuLaunchCooperativeKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                               CUstream s, void **params)
{
    (void)s;
    return launch(fn, gx, gy, gz, bx, by, bz, shmem, params, NULL);
}

API(cuGraphLaunch)(CUgraphExec g, CUstream s)
{
    (void)g;
    (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuFuncGetAttribute)(int *value, int attrib, CUfunction fn)
{
    (void)fn;
    *value = attrib == 0 ? 1024 : 0; /* MAX_THREADS_PER_BLOCK */
    return CUDA_SUCCESS;
}

API(cuFuncSetAttribute)(CUfunction fn, int attrib, int value)
{
    (void)fn, (void)attrib, (void)value;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ errors */
static const struct { int code; const char *name, *text; } errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult lookup_error(CUresult e, const char **s, int name)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < sizeof errors / sizeof errors[0]; k++)
        if (errors[k].code == e) {
            *s = name ? errors[k].name : errors[k].text;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

API(cuGetErrorString)(CUresult e, const char **s)
{
    return lookup_error(e, s, 0);
}

API(cuGetErrorName)(CUresult e, const char **s)
{
    return lookup_error(e, s, 1);
}

/* ------------------------------------------------------------------ cuGetProcAddress */
static const struct kc_proc procs[] = {
    PROC("cuInit", cuInit), PROC("cuDriverGetVersion", cuDriverGetVersion),
    PROC("cuDeviceGetCount", cuDeviceGetCount), PROC("cuDeviceGet", cuDeviceGet),
    PROC("cuDeviceGetName", cuDeviceGetName), PROC("cuDeviceTotalMem", cuDeviceTotalMem),
    PROC("cuDeviceGetAttribute", cuDeviceGetAttribute),
    PROC("cuDeviceComputeCapability", cuDeviceComputeCapability),
    PROC("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
    PROC("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease),
    PROC("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset),
    PROC("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState),
    PROC("cuDevicePrimaryCtxSetFlags", cuDevicePrimaryCtxSetFlags),
    PROC("cuCtxDestroy", cuCtxDestroy_v2), PROC("cuCtxGetCurrent", cuCtxGetCurrent),
    PROC("cuCtxSetCurrent", cuCtxSetCurrent), PROC("cuCtxPushCurrent", cuCtxPushCurrent_v2),
    PROC("cuCtxPopCurrent", cuCtxPopCurrent_v2), PROC("cuCtxGetDevice", cuCtxGetDevice),
    PROC("cuCtxSynchronize", cuCtxSynchronize),
    PROC("cuModuleLoad", cuModuleLoad), PROC("cuModuleLoadData", cuModuleLoadData),
    PROC("cuModuleLoadDataEx", cuModuleLoadDataEx),
    PROC("cuModuleLoadFatBinary", cuModuleLoadFatBinary),
    PROC("cuModuleUnload", cuModuleUnload), PROC("cuModuleGetFunction", cuModuleGetFunction),
    PROC("cuLibraryLoadData", cuLibraryLoadData),
    PROC("cuLibraryLoadFromFile", cuLibraryLoadFromFile),
    PROC("cuLibraryUnload", cuLibraryUnload), PROC("cuLibraryGetKernel", cuLibraryGetKernel),
    PROC("cuLibraryGetModule", cuLibraryGetModule),
    PROC("cuKernelGetFunction", cuKernelGetFunction),
    PROC("cuMemAlloc", cuMemAlloc_v2), PROC("cuMemAllocAsync", cuMemAllocAsync),
    PROC("cuMemAllocPitch", cuMemAllocPitch_v2), PROC("cuMemFree", cuMemFree_v2),
    PROC("cuMemFreeAsync", cuMemFreeAsync), PROC("cuMemGetInfo", cuMemGetInfo_v2),
    PROC("cuMemcpyHtoD", cuMemcpyHtoD_v2), PROC("cuMemcpyDtoH", cuMemcpyDtoH_v2),
    PROC("cuMemcpyDtoD", cuMemcpyDtoD_v2), PROC("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2),
    PROC("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2),
    PROC("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2),
    PROC("cuMemsetD8", cuMemsetD8_v2), PROC("cuMemsetD32", cuMemsetD32_v2),
    PROC("cuMemsetD8Async", cuMemsetD8Async), PROC("cuMemsetD32Async", cuMemsetD32Async),
    PROC("cuStreamCreate", cuStreamCreate),
    PROC("cuStreamCreateWithPriority", cuStreamCreateWithPriority),
    PROC("cuStreamDestroy", cuStreamDestroy_v2),
    PROC("cuStreamSynchronize", cuStreamSynchronize), PROC("cuStreamQuery", cuStreamQuery),
    PROC("cuLaunchKernel", cuLaunchKernel), PROC("cuLaunchKernelEx", cuLaunchKernelEx),
    PROC("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel),
    PROC("cuGraphLaunch", cuGraphLaunch), PROC("cuFuncGetAttribute", cuFuncGetAttribute),
    PROC("cuFuncSetAttribute", cuFuncSetAttribute),
    PROC("cuGetErrorString", cuGetErrorString), PROC("cuGetErrorName", cuGetErrorName),
};

static void *find_proc(const char *name, int version)
{
    extern CUresult impl_cuStreamGetCtx(CUstream, CUcontext *);
    extern CUresult impl_cuStreamGetCtx_v2(CUstream, CUcontext *, void **);
    if (strcmp(name, "cuStreamGetCtx") == 0) /* _v2 (12.5) adds the green context */
        return version >= 12050 ? (void *)impl_cuStreamGetCtx_v2 : (void *)impl_cuStreamGetCtx;
    if (strcmp(name, "cuCtxCreate") == 0)
        return version >= 12050 ? (void *)impl_cuCtxCreate_v4
               : version >= 11040 ? (void *)impl_cuCtxCreate_v3
                                  : (void *)impl_cuCtxCreate_v2;
    for (size_t k = 0; k < sizeof procs / sizeof procs[0]; k++)
        if (strcmp(procs[k].name, name) == 0)
            return procs[k].fn;
    for (unsigned k = 0; k < kc_core_nprocs; k++)
        if (strcmp(kc_core_procs[k].name, name) == 0)
            return kc_core_procs[k].fn;
    return NULL;
}

static void *find_proc_v2(const char *name, int version);

API(cuGetProcAddress_v2)(const char *name, void **pfn, int version, cuuint64_t flags,
                         int *status)
{
    (void)flags;
    if (!name || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = find_proc_v2(name, version);
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!*pfn && getenv("KERNELCHECK_STANDIN_DEBUG"))
        fprintf(stderr, "kernelcheck stand-in: cuGetProcAddress(%s, %d): not provided\n",
                name, version);
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* CUDA 11.3 form, without the symbol status. */
API(cuGetProcAddress)(const char *name, void **pfn, int version, cuuint64_t flags)
{
    return impl_cuGetProcAddress_v2(name, pfn, version, flags, NULL);
}

static void *find_proc_v2(const char *name, int version)
{
    if (strcmp(name, "cuGetProcAddress") == 0)
        return version >= 12000 ? (void *)impl_cuGetProcAddress_v2
                                : (void *)impl_cuGetProcAddress;
    return find_proc(name, version);
}

/* ------------------------------------------------------------------ exported names */
ALIAS(cuInit); ALIAS(cuDriverGetVersion); ALIAS(cuDeviceGetCount); ALIAS(cuDeviceGet);
ALIAS(cuDeviceGetName); ALIAS(cuDeviceTotalMem); ALIAS(cuDeviceGetAttribute);
ALIAS(cuDeviceComputeCapability); ALIAS(cuDevicePrimaryCtxRetain);
ALIAS(cuDevicePrimaryCtxRelease); ALIAS(cuDevicePrimaryCtxReset);
ALIAS(cuDevicePrimaryCtxGetState); ALIAS(cuDevicePrimaryCtxSetFlags);
ALIAS(cuCtxCreate_v2); ALIAS(cuCtxCreate_v3); ALIAS(cuCtxCreate_v4); ALIAS(cuCtxDestroy_v2);
ALIAS(cuCtxGetCurrent); ALIAS(cuCtxSetCurrent); ALIAS(cuCtxPushCurrent_v2);
ALIAS(cuCtxPopCurrent_v2); ALIAS(cuCtxGetDevice); ALIAS(cuCtxSynchronize);
ALIAS(cuModuleLoad); ALIAS(cuModuleLoadData); ALIAS(cuModuleLoadDataEx);
ALIAS(cuModuleLoadFatBinary); ALIAS(cuModuleUnload); ALIAS(cuModuleGetFunction);
ALIAS(cuLibraryLoadData); ALIAS(cuLibraryLoadFromFile); ALIAS(cuLibraryUnload);
ALIAS(cuLibraryGetKernel); ALIAS(cuLibraryGetModule); ALIAS(cuKernelGetFunction);
ALIAS(cuMemAlloc_v2); ALIAS(cuMemAllocAsync); ALIAS(cuMemAllocPitch_v2); ALIAS(cuMemFree_v2);
ALIAS(cuMemFreeAsync); ALIAS(cuMemGetInfo_v2); ALIAS(cuMemcpyHtoD_v2); ALIAS(cuMemcpyDtoH_v2);
ALIAS(cuMemcpyDtoD_v2); ALIAS(cuMemcpyHtoDAsync_v2); ALIAS(cuMemcpyDtoHAsync_v2);
ALIAS(cuMemcpyDtoDAsync_v2); ALIAS(cuMemsetD8_v2); ALIAS(cuMemsetD32_v2);
ALIAS(cuMemsetD8Async); ALIAS(cuMemsetD32Async); ALIAS(cuStreamCreate);
ALIAS(cuStreamCreateWithPriority); ALIAS(cuStreamDestroy_v2); ALIAS(cuStreamSynchronize);
ALIAS(cuStreamQuery); ALIAS(cuLaunchKernel); ALIAS(cuLaunchKernelEx);
ALIAS(cuLaunchCooperativeKernel); ALIAS(cuGraphLaunch); ALIAS(cuFuncGetAttribute);
ALIAS(cuFuncSetAttribute); ALIAS(cuGetErrorString); ALIAS(cuGetErrorName);
ALIAS(cuGetProcAddress); ALIAS(cuGetProcAddress_v2);
