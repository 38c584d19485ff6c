/*
 * datadir.c - where locklab finds the files it ships (see datadir.h). A
 * build-tree locklab reads them from the source tree, whose path is
 * compiled in; an installed one (cmake --install, the .deb) from
 * share/locklab under its own prefix, found from /proc/self/exe, so that a
 * tree installed anywhere, or moved, still finds its own files.
 */
#include "datadir.h"

#include <libgen.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <prefix>/share/locklab/<what> for the running executable's prefix, into
 * out; false when the executable's path is unknown. */
static bool installed_dir(const char *what, char *out, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0)
        return false;
    self[len] = '\0';
    char *bin = dirname(self); /* <prefix>/bin */
    return snprintf(out, n, "%s/../share/locklab/%s", bin, what) < (int)n;
}

const char *lab_data_dir(const char *what)
{
    static struct {
        char what[16];
        char path[PATH_MAX];
    } cache[4];
    int slot = 0;
    while (slot < 3 && cache[slot].what[0] && strcmp(cache[slot].what, what) != 0)
        slot++;
    snprintf(cache[slot].what, sizeof cache[slot].what, "%s", what);
    char *out = cache[slot].path;
    size_t n = sizeof cache[slot].path;
    const char *env = getenv("LOCKLAB_DATA_DIR");
    if (env && *env) {
        snprintf(out, n, "%s/%s", env, what);
        return out;
    }
    char found[PATH_MAX];
    if (installed_dir(what, out, n) && is_dir(out)) {
        if (realpath(out, found)) /* <prefix>/share/locklab/..., without bin/.. */
            snprintf(out, n, "%s", found);
        return out;
    }
    snprintf(out, n, "%s/%s", LOCKLAB_SOURCE_DIR, what);
    return out;
}
