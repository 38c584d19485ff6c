/*
 * report_stderr.c - an adapter child's stderr in the results (see
 * report_stderr.h). The clients write the files themselves while the run
 * goes (impls/adapter/adapter_proc.c keeps at most ADAPTER_STDERR_MAX bytes and
 * then a note), so a file longer than that bound was cut; here the report
 * only finds them, so summary.json and report.html can point at them.
 */
#include "report_stderr.h"

#include <stdio.h>
#include <sys/stat.h>

#include "adapter.h"

void report_stderr_dir(char *buf, size_t n, const char *run_dir, const char *impl,
                       const char *tag)
{
    snprintf(buf, n, "%s/%s/%s.adapter-stderr", run_dir, impl, tag);
}

json_t *report_stderr_json(const char *run_dir, const struct run_result *x, const char *tag)
{
    if (!adapter_is(x->ops))
        return NULL;
    json_t *arr = json_array();
    char dir[1500];
    report_stderr_dir(dir, sizeof dir, run_dir, x->ops->name, tag);
    size_t skip = 0;
    while (run_dir[skip])
        skip++;
    for (int i = 0; i < x->clients; i++) {
        char path[1600];
        struct stat st;
        snprintf(path, sizeof path, "%s/client-%d.txt", dir, i);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        json_array_append_new(arr, json_pack("{s:i, s:s, s:I, s:b}", "client", i, "file",
                                             path + skip + 1, "bytes", (json_int_t)st.st_size,
                                             "truncated", st.st_size > ADAPTER_STDERR_MAX));
    }
    return arr;
}
