/* Interposition: the exported hooks, dlsym, and the cuGetProcAddress remap, all generated
 * from the one list in entrypoints.h.
 *
 * A program reaches the driver three ways and each lands on the same hook:
 *  - linking against libcuda: LD_PRELOAD puts our exported names first;
 *  - dlopen("libcuda.so.1") + dlsym (cuda-bindings takes cuGetProcAddress_v2 this way):
 *    our dlsym returns our hook for any listed name, remembering the real address;
 *  - cuGetProcAddress[_v2] (the CUDA runtime, cuda-bindings): our hook asks the real driver,
 *    remembers the real address in the slot of the variant the caller's version and flags
 *    select, and hands out our hook of that variant.
 * Real addresses live in one atomic slot per variant, filled once (compare-and-swap; every
 * writer stores a valid real address, so a lost race is harmless). A slot still empty when
 * its hook runs is resolved through RTLD_NEXT or the loaded libcuda.so.1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "shim.h"

enum {
#define KC_ID(exp, req, ver, ptsz, hook, params, args) KC_ID_##exp,
    KC_ENTRYPOINTS(KC_ID)
#undef KC_ID
    KC_N_ENTRIES
};

struct entry {
    const char *exported, *request;
    int version, ptsz;
    void *hook;
};

static const struct entry entries[KC_N_ENTRIES] = {
#define KC_ROW(exp, req, ver, ptsz, hook, params, args) {#exp, req, ver, ptsz, (void *)exp},
    KC_ENTRYPOINTS(KC_ROW)
#undef KC_ROW
};

static _Atomic(void *) real_slots[KC_N_ENTRIES];

/* ------------------------------------------------------------------ the real dlsym */
static void *(*next_dlsym)(void *, const char *);
static pthread_once_t dlsym_once = PTHREAD_ONCE_INIT;

static void find_dlsym(void)
{
    next_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!next_dlsym)
        next_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

void *kc_real_dlsym(void *handle, const char *name)
{
    pthread_once(&dlsym_once, find_dlsym);
    return next_dlsym ? next_dlsym(handle, name) : NULL;
}

static int find_exported(const char *name)
{
    for (int k = 0; k < KC_N_ENTRIES; k++)
        if (strcmp(entries[k].exported, name) == 0)
            return k;
    return -1;
}

static void remember(int id, void *real)
{
    void *expected = NULL;
    if (real && real != entries[id].hook)
        atomic_compare_exchange_strong(&real_slots[id], &expected, real);
}

static void *libcuda(void)
{
    static _Atomic(void *) handle;
    void *h = atomic_load(&handle);
    if (!h) {
        h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            h = dlopen("libcuda.so.1", RTLD_LAZY);
        if (h)
            atomic_store(&handle, h);
    }
    return h;
}

void *kc_driver_symbol(const char *name)
{
    int id = find_exported(name);
    if (id >= 0 && atomic_load(&real_slots[id]))
        return atomic_load(&real_slots[id]);
    void *h = libcuda();
    void *p = h ? kc_real_dlsym(h, name) : NULL;
    if (id >= 0) {
        if (p == entries[id].hook)
            return NULL;
        remember(id, p);
    }
    return p;
}

static void *real_of(int id)
{
    void *p = atomic_load_explicit(&real_slots[id], memory_order_acquire);
    if (p)
        return p;
    p = kc_real_dlsym(RTLD_NEXT, entries[id].exported);
    if (!p || p == entries[id].hook) {
        void *h = libcuda();
        p = h ? kc_real_dlsym(h, entries[id].exported) : NULL;
    }
    if (p == entries[id].hook)
        p = NULL;
    remember(id, p);
    return atomic_load(&real_slots[id]);
}

/* ------------------------------------------------------------------ dlsym */
KC_EXPORT void *dlsym(void *handle, const char *name)
{
    void *p = kc_real_dlsym(handle, name);
    if (!p || name[0] != 'c' || name[1] != 'u' || getenv("KERNELCHECK_SHIM_NO_DLSYM"))
        return p;
    int id = find_exported(name);
    if (id < 0)
        return p;
    remember(id, p);
    return entries[id].hook;
}

/* ------------------------------------------------------------------ cuGetProcAddress */
/* The variant a cuGetProcAddress request selects: same request name, highest version not
 * above the caller's, per-thread variant when the caller asks for per-thread default
 * stream semantics and one exists. -1 when none is listed (the call is then not hooked). */
static int remap(const char *sym, int version, cuuint64_t flags)
{
    int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    int best = -1;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
        int ptsz = pass == 0 ? want_ptsz : 0;
        for (int k = 0; k < KC_N_ENTRIES; k++)
            if (entries[k].ptsz == ptsz && entries[k].version <= version &&
                strcmp(entries[k].request, sym) == 0 &&
                (best < 0 || entries[k].version > entries[best].version))
                best = k;
    }
    return best;
}

static void hand_out(const char *sym, void **pfn, int version, cuuint64_t flags)
{
    if (!sym || !pfn || !*pfn)
        return;
    int id = remap(sym, version, flags);
    if (id < 0)
        return;
    remember(id, *pfn);
    *pfn = entries[id].hook;
}

CUresult kc_hook_GetProcAddress(__typeof__(&cuGetProcAddress) real, const char *sym,
                                void **pfn, int ver, cuuint64_t flags)
{
    CUresult r = real(sym, pfn, ver, flags);
    if (r == CUDA_SUCCESS)
        hand_out(sym, pfn, ver, flags);
    return r;
}

CUresult kc_hook_GetProcAddress_v2(__typeof__(&cuGetProcAddress_v2) real, const char *sym,
                                   void **pfn, int ver, cuuint64_t flags, int *status)
{
    CUresult r = real(sym, pfn, ver, flags, status);
    if (r == CUDA_SUCCESS)
        hand_out(sym, pfn, ver, flags);
    return r;
}

/* ------------------------------------------------------------------ generated hooks */
#define KC_STRIP(...) __VA_ARGS__
/* first, then the items of list: (a, b) -> first, a, b; () -> first (__VA_OPT__, GCC 8 and
 * Clang 12 on; KC_CALL expands the list first, so it is empty, not merely empty-looking) */
#define KC_CALL(m, ...) m(__VA_ARGS__)
#define KC_JOIN_(first, ...) first __VA_OPT__(,) __VA_ARGS__
#define KC_JOIN(first, list) KC_CALL(KC_JOIN_, first, KC_STRIP list)
#define KC_HOOK(exp, req, ver, ptsz, hook, params, args)                                  \
    CUresult kc_hook_##hook(KC_JOIN(__typeof__(&exp) real, params));                       \
    KC_EXPORT CUresult exp params                                                          \
    {                                                                                      \
        __typeof__(&exp) real = (__typeof__(&exp))real_of(KC_ID_##exp);                    \
        if (!real)                                                                         \
            return CUDA_ERROR_NOT_INITIALIZED;                                             \
        return kc_hook_##hook(KC_JOIN(real, args));                                        \
    }
KC_ENTRYPOINTS(KC_HOOK)
#undef KC_HOOK

/* The interposed entry points, for tests: "exported request version ptsz" lines. */
KC_EXPORT int kc_entrypoint_count(void) { return KC_N_ENTRIES; }

KC_EXPORT const char *kc_entrypoint_name(int k)
{
    return k >= 0 && k < KC_N_ENTRIES ? entries[k].exported : NULL;
}

KC_EXPORT int kc_entrypoint_remap(const char *sym, int version, unsigned long long flags)
{
    return remap(sym, version, flags);
}
