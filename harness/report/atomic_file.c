/*
 * atomic_file.c - write a result file through a temporary name and a
 * rename (see atomic_file.h). The data is fsynced before the rename, so
 * a crash of the machine, not only of locklab, leaves the old file or the
 * complete new one.
 */
#include "atomic_file.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *atomic_file_open(struct atomic_file *a, const char *path, struct lab_err *err)
{
    a->f = NULL;
    if ((size_t)snprintf(a->path, sizeof a->path, "%s", path) >= sizeof a->path) {
        lab_err_set(err, ENAMETOOLONG, "cannot write %s: name too long", path);
        return NULL;
    }
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp", path);
    a->f = fopen(a->tmp, "w");
    if (!a->f)
        lab_err_set(err, errno, "cannot write %s: %s", a->tmp, strerror(errno));
    return a->f;
}

int atomic_file_commit(struct atomic_file *a, struct lab_err *err)
{
    int bad = ferror(a->f) | (fflush(a->f) != 0) | (fsync(fileno(a->f)) != 0);
    bad |= fclose(a->f) != 0;
    a->f = NULL;
    if (bad || rename(a->tmp, a->path) != 0) {
        lab_err_set(err, errno, "cannot write %s: %s", a->path, strerror(errno));
        unlink(a->tmp);
        return -1;
    }
    return 0;
}

void atomic_file_abort(struct atomic_file *a)
{
    fclose(a->f);
    a->f = NULL;
    unlink(a->tmp);
}

int atomic_file_mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if ((size_t)snprintf(buf, sizeof buf, "%s", path) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}
