/* Shared definitions of the stand-in libcuda.so.1's source files.
 *
 * Every entry point is an internal function `impl_<name>` (hidden: the library is built with
 * -fvisibility=hidden and -Bsymbolic), exported under its CUDA name by ALIAS in the file that
 * defines it, and listed in that file's table of names for cuGetProcAddress. */
#ifndef KC_STANDIN_H
#define KC_STANDIN_H

#include <stdint.h>

#include "../cuda_types.h"
#include "pybridge.h"

#define EXPORT __attribute__((visibility("default")))
#define API(name) CUresult impl_##name
#define ALIAS(name) EXPORT __typeof__(impl_##name) name __attribute__((alias("impl_" #name)))

/* The driver version the stand-in reports: CUDA 13.5, whose PTX ISA (9.x) the emulator's
 * front end reads. NVRTC of the same release then emits PTX the "driver" accepts. */
#define KC_STANDIN_DRIVER_VERSION 13050

#define MAGIC_FUNC 0x6b63666eU
#define MAGIC_MOD 0x6b636d64U
#define MAX_PARAMS 256

struct kc_func {
    uint32_t magic;
    int is_kernel;          /* a CUkernel (library API) rather than a CUfunction */
    long long id;           /* the Python side's function id */
    void *module;           /* the struct kc_mod it came from */
    char name[256];
    int nparams;
    int param_size;
    int offsets[MAX_PARAMS];
    int sizes[MAX_PARAMS];
};

struct kc_mod {
    uint32_t magic;
    long long id;
};

struct CUctx_st { int device; int primary; };

/* One entry of a cuGetProcAddress table: the CUDA name without version suffix. */
struct kc_proc {
    const char *name;
    void *fn;
};
#define PROC(name, impl) {name, (void *)impl_##impl}

/* The table of core_api.c (driver.c holds the rest). */
extern const struct kc_proc kc_core_procs[];
extern const unsigned kc_core_nprocs;

extern struct CUctx_st kc_primary_ctx;
CUcontext kc_current_ctx(void);
/* A deferred injected fault of the test switch, reported once by a synchronize. */
CUresult kc_standin_synchronize(void);

static inline int status_of(int n, long long *out)
{
    return n < 1 ? CUDA_ERROR_UNKNOWN : (int)out[0];
}

#endif
