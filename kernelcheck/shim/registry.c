/* Modules, kernels and function handles.
 *
 * A module (or library) handle maps to its image hash and the device architecture; a kernel
 * record is one (image hash, architecture, kernel name) with its counters and, once the
 * analysis is in the cache, its decoded LaunchCheck and parameter layout. Function handles
 * (CUfunction, and CUkernel, which cuLaunchKernel also accepts) map to kernel records in an
 * open-addressing table that launches read without a lock: a slot's value is written before
 * its key is published (release), and readers load the key with acquire. Everything else is
 * under one mutex and happens at module load and function lookup, never per launch. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "shim.h"

#define HANDLE_SLOTS (1u << 16)

struct handle_slot {
    _Atomic(const void *) key;
    _Atomic(struct kc_kernel *) kernel;
};

struct module {
    void *handle;
    char hash[65];
    char arch[16];
};

static struct handle_slot handles[HANDLE_SLOTS];
static unsigned handle_count;
static struct module *modules;
static size_t n_modules, cap_modules;
static _Atomic(struct kc_kernel *) kernels;    /* newest first */
static struct kc_kernel unknown_kernel = {.name = "<unknown function handle>"};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (unsigned)x & (HANDLE_SLOTS - 1);
}

struct kc_kernel *kc_registry_find(const void *function)
{
    if (!function)
        return NULL;
    for (unsigned i = slot_of(function), n = 0; n < HANDLE_SLOTS;
         i = (i + 1) & (HANDLE_SLOTS - 1), n++) {
        const void *key = atomic_load_explicit(&handles[i].key, memory_order_acquire);
        if (key == function)
            return atomic_load_explicit(&handles[i].kernel, memory_order_acquire);
        if (!key)
            return NULL;
    }
    return NULL;
}

static void put_handle(const void *function, struct kc_kernel *k) /* under lock */
{
    for (unsigned i = slot_of(function), n = 0; n < HANDLE_SLOTS;
         i = (i + 1) & (HANDLE_SLOTS - 1), n++) {
        const void *key = atomic_load(&handles[i].key);
        if (key == function) {
            atomic_store_explicit(&handles[i].kernel, k, memory_order_release);
            return;
        }
        if (!key) {
            if (handle_count >= HANDLE_SLOTS * 3 / 4) {
                kc_warn_once("handles", "more than %u function handles: later kernels "
                             "count as not proven", HANDLE_SLOTS * 3 / 4);
                return;
            }
            atomic_store_explicit(&handles[i].kernel, k, memory_order_release);
            atomic_store_explicit(&handles[i].key, function, memory_order_release);
            handle_count++;
            return;
        }
    }
}

struct kc_kernel *kc_registry_unknown(void) { return &unknown_kernel; }
struct kc_kernel *kc_registry_first(void) { return atomic_load(&kernels); }

/* The device architecture of the current context, e.g. "sm_90"; "unknown" if the driver
 * cannot say. Asked at module load, through the real driver (never our hooks). */
static void device_arch(char out[16])
{
    CUresult (*get_device)(CUdevice *) = kc_driver_symbol("cuCtxGetDevice");
    CUresult (*get_attr)(int *, int, CUdevice) = kc_driver_symbol("cuDeviceGetAttribute");
    CUdevice dev = 0;
    int major = 0, minor = 0;
    if (get_device && get_attr && get_device(&dev) == CUDA_SUCCESS &&
        get_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
        get_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
        snprintf(out, 16, "sm_%d%d", major, minor);
    else
        snprintf(out, 16, "unknown");
}

void kc_registry_add_module(void *handle, const void *image)
{
    size_t size;
    const void *bytes = kc_image_span(image, &size);
    if (!bytes || !handle)
        return;
    struct module m = {.handle = handle};
    kc_sha256_hex(bytes, size, m.hash);
    /* The cache key's architecture: "any" for PTX text or a single cubin (their code does
     * not depend on the device), the device's sm_XY for a fatbin (the driver picks the
     * entry for it). Same rule as kernelcheck.cache.warm. */
    if (size >= 4 && ((const unsigned char *)bytes)[0] == 0x50 &&
        ((const unsigned char *)bytes)[1] == 0xed)
        device_arch(m.arch);
    else
        snprintf(m.arch, sizeof m.arch, "any");
    pthread_mutex_lock(&lock);
    size_t k;
    for (k = 0; k < n_modules && modules[k].handle != handle; k++)
        ;
    if (k == n_modules) {
        if (n_modules == cap_modules) {
            size_t cap = cap_modules ? 2 * cap_modules : 64;
            struct module *grown = kc_fault("oom") ? NULL : realloc(modules, cap * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&lock);
                kc_warn_once("oom", "out of memory recording a module: its kernels count as "
                             "not proven");
                return;
            }
            modules = grown, cap_modules = cap;
        }
        n_modules++;
    }
    modules[k] = m;
    pthread_mutex_unlock(&lock);
    if (kc_cache_has_image(m.hash, m.arch) != 1)
        kc_spool_image(m.hash, m.arch, bytes, size);
}

static struct kc_kernel *kernel_for(const char *hash, const char *arch, const char *name)
{
    for (struct kc_kernel *k = atomic_load(&kernels); k; k = k->next)
        if (strcmp(k->name, name) == 0 && strcmp(k->hash, hash) == 0 &&
            strcmp(k->arch, arch) == 0)
            return k;
    struct kc_kernel *k = kc_fault("oom") ? NULL : calloc(1, sizeof *k);
    char *copy = k ? strdup(name) : NULL;
    if (!copy) {
        free(k);
        return NULL;
    }
    k->name = copy;
    memcpy(k->hash, hash, sizeof k->hash);
    snprintf(k->arch, sizeof k->arch, "%s", arch);
    k->next = atomic_load(&kernels);
    atomic_store(&kernels, k);
    return k;
}

void kc_registry_bind(void *function, void *module, const char *name)
{
    struct module m = {0};
    int found = 0;
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < n_modules; k++)
        if (modules[k].handle == module) {
            m = modules[k];
            found = 1;
            break;
        }
    struct kc_kernel *k = NULL;
    if (found) {
        k = kernel_for(m.hash, m.arch, name);
        if (!k)
            kc_warn_once("oom", "out of memory recording a kernel: it counts as not proven");
        else
            put_handle(function, k);
    }
    pthread_mutex_unlock(&lock);
    if (!found) {
        kc_warn_once("module", "kernel %s comes from a module whose image was not seen: its "
                     "instances count as not proven", name);
        return;
    }
    if (k && !atomic_load(&k->loaded)) {
        struct kc_loaded *ld = NULL;
        if (kc_cache_lookup(k->hash, k->arch, k->name, &ld, 1) == 1) {
            struct kc_loaded *expected = NULL;
            if (!atomic_compare_exchange_strong(&k->loaded, &expected, ld))
                kc_loaded_free(ld); /* another thread won */
        }
    }
}

void kc_registry_alias(void *function, void *kernel)
{
    struct kc_kernel *k = kc_registry_find(kernel);
    if (!k)
        return;
    pthread_mutex_lock(&lock);
    put_handle(function, k);
    pthread_mutex_unlock(&lock);
}

void kc_registry_poll(struct kc_kernel *k)
{
    int64_t now = kc_now_ns();
    if (now < atomic_load_explicit(&k->next_poll_ns, memory_order_relaxed))
        return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&k->polling, &expected, 1))
        return;
    atomic_store(&k->next_poll_ns, now + (int64_t)kc_cfg.poll_ms * 1000000);
    struct kc_loaded *ld = NULL;
    if (kc_cache_lookup(k->hash, k->arch, k->name, &ld, 0) == 1)
        atomic_store_explicit(&k->loaded, ld, memory_order_release);
    atomic_store(&k->polling, 0);
}
