/*
 * plot_gnuplot.c - gnuplot's -e assignments, finding gnuplot and its
 * scripts, and drawing one plot with it (see plot_gnuplot.h).
 *
 * gnuplot runs through subproc_capture(): fork/exec, no shell, its output
 * captured so a failure can be reported with what gnuplot said. All drawing
 * lives in the scripts; the C side passes only names and numbers.
 */
#include "plot_gnuplot.h"
#include "datadir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "subproc.h"

#define PLOT_OUTPUT_KEEP 4096 /* bytes of gnuplot's output kept for messages */

/* ------------------------------------------------------------ assignments */

void plot_args_str(struct plot_args *a, const char *name, const char *value)
{
    char tmp[PATH_MAX * 2 + 64];
    size_t t = (size_t)snprintf(tmp, sizeof tmp, "%s='", name);
    for (const char *p = value; *p && t + 4 < sizeof tmp; p++) {
        if (*p == '\'')
            tmp[t++] = '\'';
        tmp[t++] = *p;
    }
    if (t + 4 >= sizeof tmp)
        a->overflow = true;
    tmp[t++] = '\'';
    tmp[t++] = ';';
    tmp[t++] = ' ';
    tmp[t] = '\0';
    if (a->len + t >= sizeof a->buf) {
        a->overflow = true;
        return;
    }
    memcpy(a->buf + a->len, tmp, t + 1);
    a->len += t;
}

void plot_args_num(struct plot_args *a, const char *name, double v)
{
    char tmp[128];
    int t = snprintf(tmp, sizeof tmp, "%s=%.17g; ", name, isfinite(v) ? v : 0.0);
    if (a->len + (size_t)t >= sizeof a->buf) {
        a->overflow = true;
        return;
    }
    memcpy(a->buf + a->len, tmp, (size_t)t + 1);
    a->len += (size_t)t;
}

/* "1 2 3" style lists of the series' linetypes and dash types. */
static void set_styles(const struct plot_set *set, char *lts, char *dts, size_t n)
{
    size_t a = 0, b = 0;
    lts[0] = dts[0] = '\0';
    for (int i = 0; i < set->n && a + 16 < n && b + 16 < n; i++) {
        a += (size_t)snprintf(lts + a, n - a, "%s%d", i ? " " : "", set->s[i].lt);
        /* colours cycle after 12: the second round of a solid line is dotted */
        int dt = set->s[i].dt == 1 && set->s[i].lt > 12 ? 3 : set->s[i].dt;
        b += (size_t)snprintf(dts + b, n - b, "%s%d", i ? " " : "", dt);
    }
}

void plot_args_init(struct plot_args *a, const char *scenario, const char *subtitle,
                    const char *datafile, const struct plot_set *set)
{
    memset(a, 0, sizeof *a);
    char lts[2048], dts[2048];
    plot_args_str(a, "datafile", datafile);
    plot_args_str(a, "scenario", scenario);
    plot_args_str(a, "subtitle", subtitle);
    if (set) {
        set_styles(set, lts, dts, sizeof lts);
        plot_args_num(a, "n", set->n);
        plot_args_str(a, "lts", lts);
        plot_args_str(a, "dts", dts);
    }
}

/* ---------------------------------------------------------------- finding */

int plot_gnuplot_find(char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
        const char *colon = strchr(path, ':');
        int len = colon ? (int)(colon - path) : (int)strlen(path);
        struct stat st;
        if (plot_fmt(out, n, "%.*s%sgnuplot", len, path, len ? "/" : "./") == 0 &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        if (!colon)
            return -1;
        path = colon + 1;
    }
}

const char *plot_gnuplot_script_dir(void)
{
    return lab_data_dir("plots");
}

/* ---------------------------------------------------------------- drawing */

/* Run `gnuplot -e ARGS SCRIPT`, output captured into out (truncated).
 * Returns the wait status, or -1. */
static int plot_exec(const char *gnuplot, const char *args, const char *script, char *out,
                     size_t outlen)
{
    char *argv[] = {(char *)gnuplot, "-e", (char *)args, (char *)script, NULL};
    return subproc_capture(argv, out, outlen);
}

static bool plot_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

int plot_gnuplot_draw(const struct plot_gnuplot *g, const char *scenario, const char *name,
                      struct plot_args *a)
{
    char script[PATH_MAX], png[PATH_MAX], svg[PATH_MAX], png_tmp[PATH_MAX], svg_tmp[PATH_MAX];
    if (plot_fmt(script, sizeof script, "%s/%s.gp", g->script_dir, name) ||
        plot_fmt(png, sizeof png, "%s/%s-%s.png", g->out_dir, scenario, name) ||
        plot_fmt(svg, sizeof svg, "%s/%s-%s.svg", g->out_dir, scenario, name) ||
        plot_fmt(png_tmp, sizeof png_tmp, "%s.tmp", png) ||
        plot_fmt(svg_tmp, sizeof svg_tmp, "%s.tmp", svg)) {
        fprintf(stderr, "locklab plot: path too long under %s\n", g->out_dir);
        return LAB_EXIT_USAGE;
    }
    plot_args_str(a, "png", png_tmp);
    plot_args_str(a, "svg", svg_tmp);
    plot_args_str(a, "plotdir", g->script_dir);
    if (a->overflow) {
        fprintf(stderr, "locklab plot: %s-%s: too many series for gnuplot's arguments\n",
                scenario, name);
        return LAB_EXIT_USAGE;
    }
    char out[PLOT_OUTPUT_KEEP];
    int status = plot_exec(g->bin, a->buf, script, out, sizeof out);
    bool ok = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
              plot_nonempty(png_tmp) && plot_nonempty(svg_tmp);
    if (ok && (rename(png_tmp, png) != 0 || rename(svg_tmp, svg) != 0)) {
        fprintf(stderr, "locklab plot: cannot rename into %s: %s\n", g->out_dir,
                strerror(errno));
        ok = false;
    }
    if (!ok) {
        if (status < 0)
            fprintf(stderr, "locklab plot: cannot run %s: %s\n", g->bin, strerror(errno));
        else
            fprintf(stderr, "locklab plot: gnuplot failed on %s (%s %d)%s%s", script,
                    WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                    out[0] ? ":\n" : "\n", out);
        unlink(png_tmp);
        unlink(svg_tmp);
        return LAB_EXIT_ENV;
    }
    if (out[0] && !g->quiet)
        fprintf(stderr, "locklab plot: gnuplot said, on %s-%s:\n%s", scenario, name, out);
    if (!g->quiet)
        printf("wrote %s and .svg\n", png);
    return LAB_EXIT_OK;
}
