/* THE list of driver entry points the shim interposes: one X-macro, from which interpose.c
 * generates the exported hooks, the cuGetProcAddress remap table and kc_entrypoint_names()
 * (checked by tests/shim/test_interpose.py).
 *
 * X(exported name, name cuGetProcAddress is asked for, first CUDA version (1000*major +
 *   10*minor) that returns this variant, per-thread-default-stream variant?, hook family in
 *   hooks.c, parameters, arguments)
 *
 * Versions are those of the CUDA driver's own table (cuda.h / cudaTypedefs.h): the _v2
 * allocation calls arrived in 3.2, the library API in 12.0, cuLaunchKernelEx in 11.6, the
 * stream-ordered allocator (cuMemAllocAsync, cuMemAllocFromPoolAsync) in 11.2, cuGetProcAddress in 11.3 (without the symbol status)
 * and its _v2 in 12.0; cuStreamSynchronize and cuCtxSynchronize are as old as the driver
 * API (2.0), the per-thread stream variant of the former from 7.0. A function without
 * parameters is written with empty lists, (), which interpose.c joins to the real
 * function's pointer without a trailing comma. */
#ifndef KC_ENTRYPOINTS_H
#define KC_ENTRYPOINTS_H

#define KC_LAUNCH_PARAMS (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, \
    void **params, void **extra)
#define KC_LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra)
#define KC_COOP_PARAMS (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, \
    void **params)
#define KC_COOP_ARGS (f, gx, gy, gz, bx, by, bz, shmem, s, params)
#define KC_LIB_OPTS CUjit_option *jo, void **jv, unsigned int njo, CUlibraryOption *lo, \
    void **lv, unsigned int nlo

#define KC_ENTRYPOINTS(X) \
    X(cuGetProcAddress, "cuGetProcAddress", 11030, 0, GetProcAddress, \
      (const char *sym, void **pfn, int ver, cuuint64_t flags), (sym, pfn, ver, flags)) \
    X(cuGetProcAddress_v2, "cuGetProcAddress", 12000, 0, GetProcAddress_v2, \
      (const char *sym, void **pfn, int ver, cuuint64_t flags, int *status), \
      (sym, pfn, ver, flags, status)) \
    X(cuModuleLoad, "cuModuleLoad", 2000, 0, ModuleLoad, (CUmodule *m, const char *path), \
      (m, path)) \
    X(cuModuleLoadData, "cuModuleLoadData", 2000, 0, ModuleLoadData, \
      (CUmodule *m, const void *image), (m, image)) \
    X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 2010, 0, ModuleLoadDataEx, \
      (CUmodule *m, const void *image, unsigned int n, CUjit_option *o, void **v), \
      (m, image, n, o, v)) \
    X(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 2000, 0, ModuleLoadData, \
      (CUmodule *m, const void *image), (m, image)) \
    X(cuLibraryLoadData, "cuLibraryLoadData", 12000, 0, LibraryLoadData, \
      (CUlibrary *l, const void *image, KC_LIB_OPTS), (l, image, jo, jv, njo, lo, lv, nlo)) \
    X(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 12000, 0, LibraryLoadFromFile, \
      (CUlibrary *l, const char *path, KC_LIB_OPTS), (l, path, jo, jv, njo, lo, lv, nlo)) \
    X(cuModuleGetFunction, "cuModuleGetFunction", 2000, 0, ModuleGetFunction, \
      (CUfunction *f, CUmodule m, const char *name), (f, m, name)) \
    X(cuLibraryGetKernel, "cuLibraryGetKernel", 12000, 0, LibraryGetKernel, \
      (CUkernel *k, CUlibrary l, const char *name), (k, l, name)) \
    X(cuKernelGetFunction, "cuKernelGetFunction", 12000, 0, KernelGetFunction, \
      (CUfunction *f, CUkernel k), (f, k)) \
    X(cuLaunchKernel, "cuLaunchKernel", 4000, 0, LaunchKernel, KC_LAUNCH_PARAMS, \
      KC_LAUNCH_ARGS) \
    X(cuLaunchKernel_ptsz, "cuLaunchKernel", 7000, 1, LaunchKernel, KC_LAUNCH_PARAMS, \
      KC_LAUNCH_ARGS) \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", 11060, 0, LaunchKernelEx, \
      (const CUlaunchConfig *c, CUfunction f, void **params, void **extra), \
      (c, f, params, extra)) \
    X(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 11060, 1, LaunchKernelEx, \
      (const CUlaunchConfig *c, CUfunction f, void **params, void **extra), \
      (c, f, params, extra)) \
    X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 9000, 0, LaunchCooperative, \
      KC_COOP_PARAMS, KC_COOP_ARGS) \
    X(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 9000, 1, \
      LaunchCooperative, KC_COOP_PARAMS, KC_COOP_ARGS) \
    X(cuMemAlloc_v2, "cuMemAlloc", 3020, 0, MemAlloc, (CUdeviceptr *p, size_t n), (p, n)) \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, 0, MemAllocPitch, \
      (CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e), \
      (p, pitch, w, h, e)) \
    X(cuMemAllocManaged, "cuMemAllocManaged", 6000, 0, MemAllocManaged, \
      (CUdeviceptr *p, size_t n, unsigned int flags), (p, n, flags)) \
    X(cuMemAllocAsync, "cuMemAllocAsync", 11020, 0, MemAllocAsync, \
      (CUdeviceptr *p, size_t n, CUstream s), (p, n, s)) \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, 1, MemAllocAsync, \
      (CUdeviceptr *p, size_t n, CUstream s), (p, n, s)) \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, 0, MemAllocFromPoolAsync, \
      (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s)) \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, 1, \
      MemAllocFromPoolAsync, (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), \
      (p, n, pool, s)) \
    X(cuMemFree_v2, "cuMemFree", 3020, 0, MemFree, (CUdeviceptr p), (p)) \
    X(cuMemFreeAsync, "cuMemFreeAsync", 11020, 0, MemFreeAsync, (CUdeviceptr p, CUstream s), \
      (p, s)) \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, 1, MemFreeAsync, \
      (CUdeviceptr p, CUstream s), (p, s)) \
    X(cuGraphLaunch, "cuGraphLaunch", 10000, 0, GraphLaunch, (CUgraphExec g, CUstream s), \
      (g, s)) \
    X(cuGraphLaunch_ptsz, "cuGraphLaunch", 10000, 1, GraphLaunch, \
      (CUgraphExec g, CUstream s), (g, s)) \
    X(cuStreamSynchronize, "cuStreamSynchronize", 2000, 0, StreamSynchronize, (CUstream s), \
      (s)) \
    X(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 7000, 1, StreamSynchronize, \
      (CUstream s), (s)) \
    X(cuCtxSynchronize, "cuCtxSynchronize", 2000, 0, CtxSynchronize, (), ())

#endif
