/* Handing a module image to the analysis helper: a file in the spool directory
 * (<cache dir>/spool, private to the user), written under a temporary name and renamed, so
 * the helper never reads half an image. Named <sha256>-<arch>.img; an image already spooled
 * is not written again. The helper (kernelcheck.shim.helper) analyses it, writes the cache
 * and deletes the file. If the helper is gone, the file waits for the next one. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

void kc_spool_image(const char *hash, const char *arch, const void *bytes, size_t size)
{
    char dir[4200], path[4400], tmp[4400];
    if (!kc_cfg.cache_dir[0] || kc_fault("spool")) {
        kc_warn_once("spool", "cannot hand images to the analysis helper%s",
                     kc_cfg.cache_dir[0] ? " (injected fault)" : " (no cache directory)");
        return;
    }
    snprintf(dir, sizeof dir, "%s/spool", kc_cfg.cache_dir);
    if (!kc_private_dir_ok(kc_cfg.cache_dir, 1) || !kc_private_dir_ok(dir, 1))
        return;
    snprintf(path, sizeof path, "%s/%s-%s.img", dir, hash, arch);
    if (access(path, F_OK) == 0)
        return;
    snprintf(tmp, sizeof tmp, "%s/.%s-%s.%d.tmp", dir, hash, arch, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        kc_warn_once("spool-write", "cannot write %s", tmp);
        return;
    }
    const char *p = bytes;
    size_t left = size;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n <= 0)
            break;
        p += n;
        left -= (size_t)n;
    }
    close(fd);
    if (left != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        kc_warn_once("spool-write", "cannot write %s", path);
    }
}
