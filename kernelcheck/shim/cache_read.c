/* Reading the analysis cache (the SQLite database kernelcheck.cache writes) from C.
 *
 * libsqlite3.so.0 is opened with dlopen at first use, so the shim builds without SQLite
 * headers and still loads where SQLite is missing (every kernel is then not_proven, with one
 * warning). The database is opened read-only, after checking that the cache directory and
 * the file belong to the user and are private (0700 / no group or other access): cached
 * verdicts decide what recovery may skip saving, so a cache others can write is refused.
 * Rows must match the image hash, kernel, architecture and the analyzer version the
 * launcher passed (KERNELCHECK_ANALYZER_VERSION); the schema version is PRAGMA user_version.
 * Any SQLite error closes the connection; the next lookup reopens it (the Python side
 * rebuilds a corrupt file). One connection, behind a mutex; the launch-path poll only
 * try-locks it, so a launch never waits for the cache.
 *
 * Analysis bundles (kernelcheck.bundle.store): the files named in KERNELCHECK_BUNDLES
 * (colon-separated) are opened once, read-only and immutable, and consulted after the user
 * cache with the same queries (a bundle carries the cache's tables). A bundle is used only
 * if it is a regular file owned by the user or root that no one else can write, in a
 * directory others cannot write to (unless sticky), if its application id is "KCB1", its
 * schema version the cache's, and its manifest's analyzer version the launcher's; anything
 * else is refused with one warning and the bundle is ignored. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

#define KC_CACHE_SCHEMA 1
#define SQLITE_OK 0
#define SQLITE_ROW 100
#define SQLITE_OPEN_READONLY 0x1
#define SQLITE_OPEN_NOMUTEX 0x8000
#define SQLITE_OPEN_URI 0x40
#define KC_BUNDLE_APP_ID 0x4B434231 /* "KCB1" */
#define KC_MAX_BUNDLES 16
#define SQLITE_TRANSIENT ((void (*)(void *))-1)

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

static struct {
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*close)(sqlite3 *);
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
    int (*step)(sqlite3_stmt *);
    const void *(*column_blob)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
    long long (*column_int64)(sqlite3_stmt *, int);
    const unsigned char *(*column_text)(sqlite3_stmt *, int);
    int (*finalize)(sqlite3_stmt *);
    int (*busy_timeout)(sqlite3 *, int);
} sq;

static int sq_state; /* 0 untried, 1 loaded, -1 missing */
static sqlite3 *db;
static sqlite3 *bundles[KC_MAX_BUNDLES];
static char bundle_paths[KC_MAX_BUNDLES][1024];
static int nbundles = -1; /* -1: KERNELCHECK_BUNDLES not read yet */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define SQ(field, name) (*(void **)&sq.field = dlsym(h, name)) != NULL

static int load_sqlite(void)
{
    if (sq_state)
        return sq_state > 0;
    void *h = dlopen("libsqlite3.so.0", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        h = dlopen("libsqlite3.so", RTLD_LAZY | RTLD_LOCAL);
    sq_state = h && SQ(open_v2, "sqlite3_open_v2") && SQ(close, "sqlite3_close") &&
                       SQ(prepare_v2, "sqlite3_prepare_v2") &&
                       SQ(bind_text, "sqlite3_bind_text") && SQ(step, "sqlite3_step") &&
                       SQ(column_blob, "sqlite3_column_blob") &&
                       SQ(column_bytes, "sqlite3_column_bytes") &&
                       SQ(column_int64, "sqlite3_column_int64") &&
                       SQ(column_text, "sqlite3_column_text") &&
                       SQ(finalize, "sqlite3_finalize") &&
                       SQ(busy_timeout, "sqlite3_busy_timeout")
                   ? 1 : -1;
    if (sq_state < 0)
        kc_warn_once("sqlite", "libsqlite3.so.0 not found: the analysis cache cannot be read "
                     "and every instance counts as not proven");
    return sq_state > 0;
}

static int private_ok(const char *path, int dir)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (st.st_uid != geteuid() || (st.st_mode & 077) || (dir && !S_ISDIR(st.st_mode)) ||
        (!dir && !S_ISREG(st.st_mode))) {
        kc_warn_once(path, "%s is not private to this user (owner %u, mode %03o): refusing to "
                     "use it", path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
        return 0;
    }
    return 1;
}

int kc_private_dir_ok(const char *path, int create)
{
    if (create)
        mkdir(path, 0700);
    return private_ok(path, 1);
}

static void close_db(void)
{
    if (db)
        sq.close(db);
    db = NULL;
}

static int open_db(int busy_ms)
{
    if (db)
        return 1;
    if (kc_fault("cache")) {
        kc_warn_once("cache-fault", "analysis cache unreadable (injected fault)");
        return 0;
    }
    if (!kc_cfg.analyzer_version[0]) {
        kc_warn_once("version", "KERNELCHECK_ANALYZER_VERSION is not set (run the program "
                     "with `kernelcheck run`): cached analyses are not used");
        return 0;
    }
    if (!load_sqlite() || !private_ok(kc_cfg.cache_dir, 1))
        return 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/analysis.sqlite3", kc_cfg.cache_dir);
    if (access(path, F_OK) != 0 || !private_ok(path, 0))
        return 0;
    if (sq.open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        close_db();
        return 0;
    }
    sq.busy_timeout(db, busy_ms);
    sqlite3_stmt *st = NULL;
    int ok = sq.prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
             sq.step(st) == SQLITE_ROW && sq.column_int64(st, 0) == KC_CACHE_SCHEMA;
    if (st)
        sq.finalize(st);
    if (!ok) {
        kc_warn_once("schema", "the analysis cache %s is unreadable or of another schema "
                     "version: ignored until it is rebuilt", path);
        close_db();
    }
    return ok;
}

void kc_loaded_free(struct kc_loaded *ld)
{
    if (!ld)
        return;
    kc_check_free(ld->check);
    free(ld->offsets);
    free(ld);
}

static struct kc_loaded *build(const void *blob, int nblob, const void *layout, int nlayout,
                               long long param_size)
{
    struct kc_loaded *ld = calloc(1, sizeof *ld);
    if (!ld || nlayout % 8 || param_size < 0 || param_size > (1 << 20))
        goto bad;
    ld->check = kc_check_decode(blob, (size_t)nblob);
    ld->nparams = (uint32_t)(nlayout / 8);
    ld->param_size = (uint32_t)param_size;
    ld->offsets = malloc(2 * (size_t)ld->nparams * sizeof(uint32_t) + 1);
    if (!ld->check || !ld->offsets)
        goto bad;
    ld->sizes = ld->offsets + ld->nparams;
    for (uint32_t k = 0; k < ld->nparams; k++) {
        memcpy(&ld->offsets[k], (const char *)layout + 8 * k, 4);
        memcpy(&ld->sizes[k], (const char *)layout + 8 * k + 4, 4);
        if ((uint64_t)ld->offsets[k] + ld->sizes[k] > ld->param_size)
            goto bad;
    }
    return ld;
bad:
    kc_loaded_free(ld);
    return NULL;
}

static int pragma_int(sqlite3 *h, const char *sql, long long *value)
{
    sqlite3_stmt *st = NULL;
    int ok = sq.prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sq.step(st) == SQLITE_ROW;
    if (ok)
        *value = sq.column_int64(st, 0);
    if (st)
        sq.finalize(st);
    return ok;
}

/* Owner the user or root, and writable by no one else: see kernelcheck/bundle/store.py. */
static int bundle_trusted(const char *path)
{
    struct stat st, dir;
    char parent[1100];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == path)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    if (stat(path, &st) != 0 || stat(parent, &dir) != 0) {
        kc_warn_once(path, "analysis bundle %s cannot be opened: ignored", path);
        return 0;
    }
    if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) ||
        (st.st_mode & 022)) {
        kc_warn_once(path, "analysis bundle %s (owner %u, mode %03o) can be written by others "
                     "than this user or root: refusing to use it", path, (unsigned)st.st_uid,
                     (unsigned)(st.st_mode & 0777));
        return 0;
    }
    if ((dir.st_uid != geteuid() && dir.st_uid != 0) ||
        ((dir.st_mode & 022) && !(dir.st_mode & S_ISVTX))) {
        kc_warn_once(path, "analysis bundle %s lies in a directory others can write to "
                     "(owner %u, mode %03o): refusing to use it", path, (unsigned)dir.st_uid,
                     (unsigned)(dir.st_mode & 0777));
        return 0;
    }
    return 1;
}

static sqlite3 *open_bundle(const char *path)
{
    char uri[3200];
    size_t n = (size_t)snprintf(uri, sizeof uri, "file:");
    for (const char *c = path; *c && n + 4 < sizeof uri; c++) {
        if (*c == '%' || *c == '?' || *c == '#')
            n += (size_t)snprintf(uri + n, sizeof uri - n, "%%%02X", (unsigned char)*c);
        else
            uri[n++] = *c;
    }
    snprintf(uri + n, sizeof uri - n, "?mode=ro&immutable=1");
    sqlite3 *h = NULL;
    if (sq.open_v2(uri, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                   NULL) != SQLITE_OK) {
        if (h)
            sq.close(h);
        kc_warn_once(path, "analysis bundle %s cannot be opened: ignored", path);
        return NULL;
    }
    long long app = 0, schema = 0;
    if (!pragma_int(h, "PRAGMA application_id", &app) || app != KC_BUNDLE_APP_ID ||
        !pragma_int(h, "PRAGMA user_version", &schema) || schema != KC_CACHE_SCHEMA) {
        kc_warn_once(path, "%s is not an analysis bundle of cache schema %d: ignored", path,
                     KC_CACHE_SCHEMA);
        sq.close(h);
        return NULL;
    }
    sqlite3_stmt *st = NULL;
    int same = 0;
    char made_by[128] = "";
    if (sq.prepare_v2(h, "SELECT value FROM manifest WHERE key = 'analyzer_version'", -1, &st,
                      NULL) == SQLITE_OK && sq.step(st) == SQLITE_ROW) {
        const unsigned char *v = sq.column_text(st, 0);
        snprintf(made_by, sizeof made_by, "%s", v ? (const char *)v : "");
        same = strcmp(made_by, kc_cfg.analyzer_version) == 0;
    }
    if (st)
        sq.finalize(st);
    if (!same) {
        kc_warn_once(path, "analysis bundle %s was made by analyzer version %s, this is %s: its "
                     "entries are ignored (re-create it)", path, made_by[0] ? made_by : "?",
                     kc_cfg.analyzer_version);
        sq.close(h);
        return NULL;
    }
    return h;
}

/* Called with the lock held; reads KERNELCHECK_BUNDLES once. */
static void open_bundles(void)
{
    if (nbundles >= 0)
        return;
    nbundles = 0;
    const char *list = getenv("KERNELCHECK_BUNDLES");
    if (!list || !*list || !kc_cfg.analyzer_version[0] || !load_sqlite())
        return;
    const char *p = list;
    while (*p && nbundles < KC_MAX_BUNDLES) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && len < sizeof bundle_paths[0]) {
            char *path = bundle_paths[nbundles];
            memcpy(path, p, len);
            path[len] = '\0';
            if (bundle_trusted(path) && (bundles[nbundles] = open_bundle(path)) != NULL)
                nbundles++;
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (*p && nbundles == KC_MAX_BUNDLES && strchr(p, ':'))
        kc_warn_once("bundles", "more than %d analysis bundles in KERNELCHECK_BUNDLES: the "
                     "rest are ignored", KC_MAX_BUNDLES);
}

/* 1 found, 0 absent, -1 malformed row, -2 SQLite error (the caller closes the handle). */
static int query_kernel(sqlite3 *h, const char *hash, const char *arch, const char *kernel,
                        struct kc_loaded **out)
{
    sqlite3_stmt *st = NULL;
    if (sq.prepare_v2(h, "SELECT check_blob, layout, param_size FROM summaries WHERE "
                         "image_hash = ? AND kernel = ? AND arch = ? AND analyzer_version = ?",
                      -1, &st, NULL) != SQLITE_OK)
        return -2;
    sq.bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
    sq.bind_text(st, 2, kernel, -1, SQLITE_TRANSIENT);
    sq.bind_text(st, 3, arch, -1, SQLITE_TRANSIENT);
    sq.bind_text(st, 4, kc_cfg.analyzer_version, -1, SQLITE_TRANSIENT);
    int rc = sq.step(st), result;
    if (rc == SQLITE_ROW) {
        *out = build(sq.column_blob(st, 0), sq.column_bytes(st, 0), sq.column_blob(st, 1),
                     sq.column_bytes(st, 1), sq.column_int64(st, 2));
        if (!*out)
            kc_warn_once(kernel, "the cached analysis of %s is malformed: ignored", kernel);
        result = *out ? 1 : -1;
    } else {
        result = rc == 101 /* SQLITE_DONE */ ? 0 : -2;
    }
    sq.finalize(st);
    return result;
}

static int query_image(sqlite3 *h, const char *hash, const char *arch)
{
    sqlite3_stmt *st = NULL;
    int result = -1;
    if (sq.prepare_v2(h, "SELECT 1 FROM images WHERE image_hash = ? AND arch = ? AND "
                         "analyzer_version = ?", -1, &st, NULL) == SQLITE_OK) {
        sq.bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
        sq.bind_text(st, 2, arch, -1, SQLITE_TRANSIENT);
        sq.bind_text(st, 3, kc_cfg.analyzer_version, -1, SQLITE_TRANSIENT);
        int rc = sq.step(st);
        result = rc == SQLITE_ROW ? 1 : rc == 101 ? 0 : -1;
    }
    if (st)
        sq.finalize(st);
    return result;
}

static void drop_bundle(int k)
{
    kc_warn_once(bundle_paths[k], "analysis bundle %s became unreadable: ignored from now on",
                 bundle_paths[k]);
    sq.close(bundles[k]);
    bundles[k] = NULL;
}

int kc_cache_lookup(const char *hash, const char *arch, const char *kernel,
                    struct kc_loaded **out, int blocking)
{
    if (blocking)
        pthread_mutex_lock(&lock);
    else if (pthread_mutex_trylock(&lock) != 0)
        return 0;
    int result = -1;
    if (open_db(blocking ? 50 : 0)) {
        result = query_kernel(db, hash, arch, kernel, out);
        if (result == -2) {
            close_db();
            result = -1;
        }
    }
    if (result != 1) {
        open_bundles();
        for (int k = 0; k < nbundles && result != 1; k++) {
            if (!bundles[k])
                continue;
            int r = query_kernel(bundles[k], hash, arch, kernel, out);
            if (r == -2)
                drop_bundle(k);
            else if (r == 1 || (r == 0 && result < 0))
                result = r;
        }
    }
    pthread_mutex_unlock(&lock);
    return result;
}

int kc_cache_has_image(const char *hash, const char *arch)
{
    pthread_mutex_lock(&lock);
    int result = open_db(50) ? query_image(db, hash, arch) : -1;
    if (result != 1) {
        open_bundles();
        for (int k = 0; k < nbundles && result != 1; k++) {
            if (!bundles[k])
                continue;
            int r = query_image(bundles[k], hash, arch);
            if (r < 0)
                drop_bundle(k);
            else if (r == 1 || result < 0)
                result = r;
        }
    }
    pthread_mutex_unlock(&lock);
    return result;
}
