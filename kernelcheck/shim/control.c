/* The control channel: a test runner tells the shim where a test starts and ends, and the
 * shim appends every kernel instance launched meanwhile to that test's file.
 *
 * Exported (default visibility, resolvable with dlsym(RTLD_DEFAULT, ...) or
 * ctypes.CDLL(None) in a process the shim is preloaded into):
 *
 *   int kernelcheck_control_version(void)         1; its presence says the shim is loaded
 *   int kernelcheck_scope_begin(const char *path) open `path` (append, created 0600) and
 *                                                 record instances into it; a scope already
 *                                                 open is closed first. 0, or -1 (errno set)
 *   long kernelcheck_scope_end(void)              close the scope; the number of records
 *                                                 this process wrote into it, or -1 if none
 *                                                 was open
 *   void kernelcheck_set_analysis_wait_ms(long)   a launch of a kernel whose analysis is not
 *                                                 in the cache yet waits up to this long for
 *                                                 the helper (0, the default: never waits)
 *
 * A process started while a scope is open in its parent opens the same file when the shim
 * loads, if the parent put its path in KERNELCHECK_SCOPE_LOG (the pytest plugin does, for
 * the duration of each test), so launches of child processes are attributed as well.
 *
 * One record is one JSON line, written with a single write(2) to an O_APPEND descriptor,
 * so lines of concurrent threads and processes never interleave:
 *   {"pid", "kernel", "image_hash", "arch", "grid", "block", "params" (hex),
 *    "params_truncated", "verdict", "rule"}
 *
 * The launch path pays one relaxed atomic load when no scope is open. With a scope open it
 * takes the read side of a rwlock (begin/end take the write side, so a descriptor is never
 * closed, or reused, under a writer), formats on the stack and writes; it never allocates
 * and never calls into Python. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

_Atomic int kc_scope_active;
_Atomic long kc_analysis_wait_ms;

static pthread_rwlock_t scope_lock = PTHREAD_RWLOCK_INITIALIZER;
static int scope_fd = -1;
static _Atomic long scope_records;

/* Parameter bytes written per record, at most (the rest is dropped and the record says so). */
#define SCOPE_PARAM_BYTES 4096
#define SCOPE_LINE (2 * SCOPE_PARAM_BYTES + 2048)

static const char *const VERDICT_NAMES[] = {"idempotent", "not_idempotent", "not_proven"};
/* In the order of enum kc_rule (check.h). */
static const char *const RULE_NAMES[] = {
    "no_clobber", "disjoint", "no_threads", "non_idempotent_atomic", "overlap",
    "unmodelled", "unknown_range", "no_analysis", "unknown_function", "no_layout",
    "internal"};
_Static_assert(sizeof RULE_NAMES / sizeof RULE_NAMES[0] == KC_RULE_COUNT,
               "RULE_NAMES must follow enum kc_rule");

KC_EXPORT int kernelcheck_control_version(void) { return 1; }

KC_EXPORT int kernelcheck_scope_begin(const char *path)
{
    if (!path || !*path) {
        errno = EINVAL;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    pthread_rwlock_wrlock(&scope_lock);
    if (scope_fd >= 0)
        close(scope_fd);
    scope_fd = fd;
    atomic_store(&scope_records, 0);
    atomic_store_explicit(&kc_scope_active, 1, memory_order_release);
    pthread_rwlock_unlock(&scope_lock);
    return 0;
}

KC_EXPORT long kernelcheck_scope_end(void)
{
    pthread_rwlock_wrlock(&scope_lock);
    long n = scope_fd >= 0 ? atomic_load(&scope_records) : -1;
    if (scope_fd >= 0)
        close(scope_fd);
    scope_fd = -1;
    atomic_store_explicit(&kc_scope_active, 0, memory_order_release);
    pthread_rwlock_unlock(&scope_lock);
    return n;
}

KC_EXPORT void kernelcheck_set_analysis_wait_ms(long ms)
{
    atomic_store(&kc_analysis_wait_ms, ms > 0 ? ms : 0);
}

#define GAVE_UP_MAX 256
static const struct kc_kernel *gave_up[GAVE_UP_MAX];
static int n_gave_up;
static pthread_mutex_t gave_up_lock = PTHREAD_MUTEX_INITIALIZER;

static int given_up(const struct kc_kernel *k)
{
    pthread_mutex_lock(&gave_up_lock);
    int found = 0;
    for (int j = 0; j < n_gave_up && !found; j++)
        found = gave_up[j] == k;
    pthread_mutex_unlock(&gave_up_lock);
    return found;
}

static void give_up(const struct kc_kernel *k)
{
    pthread_mutex_lock(&gave_up_lock);
    if (n_gave_up < GAVE_UP_MAX)
        gave_up[n_gave_up++] = k;
    pthread_mutex_unlock(&gave_up_lock);
}

static struct kc_loaded *publish(struct kc_kernel *k, struct kc_loaded *ld)
{
    struct kc_loaded *expected = NULL;
    if (!atomic_compare_exchange_strong(&k->loaded, &expected, ld)) {
        kc_loaded_free(ld); /* another thread won */
        return expected;
    }
    return ld;
}

struct kc_loaded *kc_wait_analysis(struct kc_kernel *k)
{
    long wait_ms = atomic_load_explicit(&kc_analysis_wait_ms, memory_order_relaxed);
    if (wait_ms <= 0 || !k->hash[0] || given_up(k))
        return NULL;
    int64_t deadline = kc_now_ns() + (int64_t)wait_ms * 1000000;
    const struct timespec pause = {0, 10 * 1000000};
    for (;;) {
        struct kc_loaded *ld = atomic_load_explicit(&k->loaded, memory_order_acquire);
        if (ld)
            return ld;
        int found = kc_cache_lookup(k->hash, k->arch, k->name, &ld, 1);
        if (found == 1)
            return publish(k, ld);
        if (found < 0)
            break;                  /* the cache is unusable: waiting cannot help */
        if (kc_cache_has_image(k->hash, k->arch) == 1) {
            /* analysed, maybe together with this kernel just after the lookup: look once
             * more; if it is still absent, the analysis failed or lacks this kernel */
            if (kc_cache_lookup(k->hash, k->arch, k->name, &ld, 1) == 1)
                return publish(k, ld);
            break;
        }
        if (kc_now_ns() >= deadline) {
            kc_warn_once("analysis-wait", "waited %ld ms for the analysis of %s in vain: "
                         "its instances stay not proven (is the analysis helper running?)",
                         wait_ms, k->name);
            break;
        }
        nanosleep(&pause, NULL);
    }
    give_up(k);
    return NULL;
}

__attribute__((constructor)) static void scope_from_environment(void)
{
    const char *wait = getenv("KERNELCHECK_ANALYSIS_WAIT_MS");
    if (wait && *wait)
        kernelcheck_set_analysis_wait_ms(atol(wait));
    const char *path = getenv("KERNELCHECK_SCOPE_LOG");
    if (path && *path && kernelcheck_scope_begin(path) != 0)
        kc_warn_once("scope", "cannot open the test's instance file %s: this process's "
                     "launches are not attributed to the test", path);
}

/* Append s as a JSON string; returns the new length (never past cap - 1). */
static size_t put_json_string(char *out, size_t at, size_t cap, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    if (at + 1 < cap)
        out[at++] = '"';
    for (; s && *s && at + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[at++] = '\\';
            out[at++] = (char)c;
        } else if (c < 0x20) {
            memcpy(out + at, "\\u00", 4);
            out[at + 4] = hex[c >> 4];
            out[at + 5] = hex[c & 15];
            at += 6;
        } else {
            out[at++] = (char)c;
        }
    }
    if (at + 1 < cap)
        out[at++] = '"';
    return at;
}

static size_t put_text(char *out, size_t at, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t put_text(char *out, size_t at, size_t cap, const char *fmt, ...)
{
    if (at >= cap)
        return at;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + at, cap - at, fmt, ap);
    va_end(ap);
    if (n < 0)
        return at;
    return at + (size_t)n < cap ? at + (size_t)n : cap - 1;
}

void kc_scope_record(const struct kc_kernel *k, const uint32_t grid[3],
                     const uint32_t block[3], const unsigned char *params, size_t size,
                     enum kc_verdict v, enum kc_rule rule)
{
    static const char hex[] = "0123456789abcdef";
    char line[SCOPE_LINE];
    size_t shown = size < SCOPE_PARAM_BYTES ? size : SCOPE_PARAM_BYTES;
    size_t at = put_text(line, 0, sizeof line, "{\"pid\": %d, \"kernel\": ", (int)getpid());
    at = put_json_string(line, at, sizeof line, k->name);
    at = put_text(line, at, sizeof line,
                  ", \"image_hash\": \"%s\", \"arch\": \"%s\", \"grid\": [%u, %u, %u], "
                  "\"block\": [%u, %u, %u], \"params\": \"", k->hash, k->arch, grid[0],
                  grid[1], grid[2], block[0], block[1], block[2]);
    for (size_t j = 0; params && j < shown && at + 2 < sizeof line; j++) {
        line[at++] = hex[params[j] >> 4];
        line[at++] = hex[params[j] & 15];
    }
    at = put_text(line, at, sizeof line,
                  "\", \"params_truncated\": %s, \"verdict\": \"%s\", \"rule\": \"%s\"}\n",
                  shown < size ? "true" : "false", VERDICT_NAMES[v], RULE_NAMES[rule]);
    pthread_rwlock_rdlock(&scope_lock);
    if (scope_fd >= 0) {
        if (write(scope_fd, line, at) == (ssize_t)at)
            atomic_fetch_add_explicit(&scope_records, 1, memory_order_relaxed);
        else
            kc_warn_once("scope-write", "cannot write to the test's instance file: some "
                         "instances are not attributed");
    }
    pthread_rwlock_unlock(&scope_lock);
}
