/* Configuration, warnings, the per-instance JSONL log and the exit report of the shim.
 *
 * Configuration comes from the environment `kernelcheck run` sets up:
 *   KERNELCHECK_CACHE_DIR        cache directory (default ~/.cache/kernelcheck)
 *   KERNELCHECK_ANALYZER_VERSION the analyzer version cached rows must carry
 *   KERNELCHECK_REPORT_DIR       where each process writes shim-<pid>.json at exit
 *   KERNELCHECK_LOG              JSONL file receiving one line per instance
 *   KERNELCHECK_POLL_MS          how often a kernel with no analysis re-checks the cache (50)
 *   KERNELCHECK_SHIM_DISABLE=1   pass every call through untouched
 *   KERNELCHECK_SHIM_NO_MEMO=1   evaluate every launch (no per-thread verdict memo)
 *   KERNELCHECK_SHIM_FAULT       test-only: comma-separated faults to inject (cache, spool,
 *                                oom, eval)
 * A warning is printed once per cause, as one line on stderr, and kept for the report. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

struct kc_config kc_cfg;
_Atomic uint64_t kc_graph_launches;
_Atomic uint64_t kc_warning_count;

#define MAX_WARNINGS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *warn_keys[MAX_WARNINGS];
static char *warn_text[MAX_WARNINGS];
static int n_warn;
static FILE *log_file;

static void copy_env(char *dst, size_t n, const char *name, const char *fallback)
{
    const char *v = getenv(name);
    snprintf(dst, n, "%s", v && *v ? v : fallback);
}

static void configure(void)
{
    const char *home = getenv("HOME");
    char fallback[4096];
    snprintf(fallback, sizeof fallback, "%s/.cache/kernelcheck", home ? home : "/nonexistent");
    copy_env(kc_cfg.cache_dir, sizeof kc_cfg.cache_dir, "KERNELCHECK_CACHE_DIR", fallback);
    copy_env(kc_cfg.analyzer_version, sizeof kc_cfg.analyzer_version,
             "KERNELCHECK_ANALYZER_VERSION", "");
    copy_env(kc_cfg.report_dir, sizeof kc_cfg.report_dir, "KERNELCHECK_REPORT_DIR", "");
    copy_env(kc_cfg.log_path, sizeof kc_cfg.log_path, "KERNELCHECK_LOG", "");
    copy_env(kc_cfg.faults, sizeof kc_cfg.faults, "KERNELCHECK_SHIM_FAULT", "");
    const char *poll = getenv("KERNELCHECK_POLL_MS");
    kc_cfg.poll_ms = poll ? atoi(poll) : 50;
    if (kc_cfg.poll_ms < 1)
        kc_cfg.poll_ms = 1;
    const char *off = getenv("KERNELCHECK_SHIM_DISABLE");
    kc_cfg.disabled = off && *off == '1';
    const char *memo = getenv("KERNELCHECK_SHIM_NO_MEMO");
    kc_cfg.no_memo = memo && *memo == '1';
}

__attribute__((constructor)) void kc_init(void) { pthread_once(&once, configure); }

int kc_fault(const char *name)
{
    if (!kc_cfg.faults[0])
        return 0;
    size_t n = strlen(name);
    for (const char *p = kc_cfg.faults; (p = strstr(p, name)) != NULL; p += n)
        if ((p == kc_cfg.faults || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}

void kc_warn_once(const char *key, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&lock);
    for (int k = 0; k < n_warn; k++)
        if (strcmp(warn_keys[k], key) == 0) {
            pthread_mutex_unlock(&lock);
            return;
        }
    if (n_warn < MAX_WARNINGS) {
        warn_keys[n_warn] = strdup(key);
        warn_text[n_warn] = strdup(text);
        if (warn_keys[n_warn] && warn_text[n_warn])
            n_warn++;
    }
    atomic_fetch_add(&kc_warning_count, 1);
    pthread_mutex_unlock(&lock);
    fprintf(stderr, "kernelcheck: warning: %s\n", text);
}

static const char *VERDICTS[] = {"idempotent", "not_idempotent", "not_proven"};
static const char *RULES[KC_RULE_COUNT] = {
    "no_clobber", "disjoint", "no_threads", "non_idempotent_atomic", "overlap",
    "unmodelled", "unknown_range", "no_analysis", "unknown_function", "no_layout",
    "internal"};

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void kc_log_instance(const char *kernel, const uint32_t grid[3], const uint32_t block[3],
                     const unsigned char *params, size_t size, enum kc_verdict v,
                     enum kc_rule rule)
{
    pthread_mutex_lock(&lock);
    if (!log_file) {
        log_file = fopen(kc_cfg.log_path, "a");
        if (!log_file) {
            kc_cfg.log_path[0] = 0;
            pthread_mutex_unlock(&lock);
            kc_warn_once("log", "cannot open the instance log: not logging");
            return;
        }
    }
    fprintf(log_file, "{\"pid\": %d, \"kernel\": ", (int)getpid());
    json_string(log_file, kernel);
    fprintf(log_file, ", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"params\": \"",
            grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    for (size_t k = 0; params && k < size; k++)
        fprintf(log_file, "%02x", params[k]);
    fprintf(log_file, "\", \"verdict\": \"%s\", \"rule\": \"%s\"}\n", VERDICTS[v], RULES[rule]);
    pthread_mutex_unlock(&lock);
}

static void write_kernel(FILE *f, struct kc_kernel *k, int first)
{
    fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
    json_string(f, k->name);
    fprintf(f, ", \"image_hash\": \"%s\", \"arch\": \"%s\", \"analysed\": %s",
            k->hash, k->arch, atomic_load(&k->loaded) ? "true" : "false");
    for (int v = 0; v < 3; v++)
        fprintf(f, ", \"%s\": %llu", VERDICTS[v], (unsigned long long)atomic_load(&k->counts[v]));
    fprintf(f, ", \"rules\": {");
    int sep = 0;
    for (int r = 0; r < KC_RULE_COUNT; r++) {
        uint64_t n = atomic_load(&k->rules[r]);
        if (n) {
            fprintf(f, "%s\"%s\": %llu", sep ? ", " : "", RULES[r], (unsigned long long)n);
            sep = 1;
        }
    }
    fprintf(f, "}");
    kc_deferred_write(f, k);
    fprintf(f, "}");
}

__attribute__((destructor)) static void kc_write_report(void)
{
    if (log_file)
        fflush(log_file);
    if (!kc_cfg.report_dir[0])
        return;
    struct kc_kernel *unknown = kc_registry_unknown();
    struct kc_kernel *first = kc_registry_first();
    if (!first && !atomic_load(&unknown->counts[KC_NOT_PROVEN]) &&
        !atomic_load(&kc_graph_launches) && !n_warn)
        return;
    char path[4300], tmp[4400];
    snprintf(path, sizeof path, "%s/shim-%d.json", kc_cfg.report_dir, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "{\"format_version\": 1, \"pid\": %d, \"graph_launches\": %llu, \"kernels\": [",
            (int)getpid(), (unsigned long long)atomic_load(&kc_graph_launches));
    int n = 0;
    for (struct kc_kernel *k = first; k; k = k->next)
        write_kernel(f, k, n++ == 0);
    if (atomic_load(&unknown->counts[KC_NOT_PROVEN]))
        write_kernel(f, unknown, n++ == 0);
    fprintf(f, "\n  ], \"warnings\": [");
    for (int k = 0; k < n_warn; k++) {
        fprintf(f, "%s", k ? ", " : "");
        json_string(f, warn_text[k]);
    }
    fprintf(f, "]}\n");
    fclose(f);
    rename(tmp, path);
}
