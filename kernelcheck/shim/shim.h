/* Internal interfaces of libkernelcheck_preload.so, one section per source file.
 *
 * Lock order: registry mutex -> cache mutex -> log mutex; no lock is held across a call
 * into the real driver, and nothing here calls into Python. */
#ifndef KC_SHIM_H
#define KC_SHIM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "cuda_types.h"
#include "entrypoints.h"

#define KC_EXPORT __attribute__((visibility("default")))

/* The exported hooks (defined by interpose.c from the X-macro list). */
#define KC_DECLARE(exp, req, ver, ptsz, hook, params, args) KC_EXPORT CUresult exp params;
KC_ENTRYPOINTS(KC_DECLARE)
#undef KC_DECLARE

/* ---- interpose.c: resolution of the real driver */
void *kc_real_dlsym(void *handle, const char *name);
/* A real driver function by exported name (NULL when the driver lacks it). */
void *kc_driver_symbol(const char *name);

/* ---- log.c: configuration, warnings, the instance log, the exit report */
struct kc_config {
    int disabled;
    int no_memo;
    int poll_ms;
    char cache_dir[4096];
    char analyzer_version[128];
    char report_dir[4096];
    char log_path[4096];
    char faults[256];
};
extern struct kc_config kc_cfg;
void kc_init(void);                     /* idempotent, thread-safe */
int kc_fault(const char *name);         /* test-only fault hook (KERNELCHECK_SHIM_FAULT) */
void kc_warn_once(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void kc_log_instance(const char *kernel, const uint32_t grid[3], const uint32_t block[3],
                     const unsigned char *params, size_t size, enum kc_verdict v,
                     enum kc_rule rule);
extern _Atomic uint64_t kc_graph_launches;
extern _Atomic uint64_t kc_warning_count;

/* ---- registry.c: modules, kernels and function handles */
struct kc_loaded {                      /* a kernel's cached analysis, immutable once built */
    struct kc_check *check;
    uint32_t param_size, nparams;
    uint32_t *offsets, *sizes;
};

struct kc_kernel {
    char *name;
    char hash[65];
    char arch[16];
    _Atomic(struct kc_loaded *) loaded;
    _Atomic uint64_t counts[3];         /* by enum kc_verdict */
    _Atomic uint64_t rules[KC_RULE_COUNT];
    _Atomic int64_t next_poll_ns;
    _Atomic int polling;
    struct kc_deferred *deferred;       /* launches before the analysis (deferred.c) */
    struct kc_kernel *next;
};

void kc_registry_add_module(void *handle, const void *image);
void kc_registry_bind(void *function, void *module, const char *name);
void kc_registry_alias(void *function, void *kernel);
struct kc_kernel *kc_registry_find(const void *function);  /* lock-free */
struct kc_kernel *kc_registry_unknown(void);
struct kc_kernel *kc_registry_first(void);
void kc_registry_poll(struct kc_kernel *k);  /* rate-limited cache re-check */

/* ---- alloc_table.c */
void kc_alloc_add(uint64_t base, uint64_t size);
void kc_alloc_remove(uint64_t base);
int kc_alloc_lookup(uint64_t addr, uint64_t *base, uint64_t *size);
int kc_alloc_all(uint64_t (*out)[2], int max);

/* ---- cache_read.c */
/* 1 with *out filled, 0 when the cache has no entry, -1 when the cache is unusable. */
int kc_cache_lookup(const char *hash, const char *arch, const char *kernel,
                    struct kc_loaded **out, int blocking);
int kc_cache_has_image(const char *hash, const char *arch);
void kc_loaded_free(struct kc_loaded *ld);
int kc_private_dir_ok(const char *path, int create);

/* ---- spool.c: hand an image to the analysis helper */
void kc_spool_image(const char *hash, const char *arch, const void *bytes, size_t size);

/* ---- deferred.c: launches before the analysis arrived, decided at exit */
void kc_defer(struct kc_kernel *k, CUfunction f, const uint32_t grid[3],
              const uint32_t block[3], void **params, void **extra);
void kc_deferred_write(FILE *f, struct kc_kernel *k);

/* ---- control.c: the per-test instance file a test runner opens and closes, and the
 * optional wait for a kernel's analysis */
extern _Atomic int kc_scope_active;
extern _Atomic long kc_analysis_wait_ms;
struct kc_loaded *kc_wait_analysis(struct kc_kernel *k);  /* NULL: none arrived in time */
void kc_scope_record(const struct kc_kernel *k, const uint32_t grid[3],
                     const uint32_t block[3], const unsigned char *params, size_t size,
                     enum kc_verdict v, enum kc_rule rule);

/* ---- hooks.c */
int64_t kc_now_ns(void);

#endif
