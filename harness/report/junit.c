/*
 * junit.c - the JUnit XML writer (see junit.h). The layout is the one CI
 * systems (GitLab, Jenkins, GitHub's test reporters) read: <testsuites>
 * holding one <testsuite>, one <testcase> per check, a <failure> inside
 * the ones that failed; the counts in the headers are the cases' own.
 */
#include "junit.h"

#include "atomic_file.h"

void report_xml_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* ` tests="N" failures="F"`, and ` time="T"` when timed. */
static void counts(FILE *f, const struct junit_suite *s, int failures, double total)
{
    fprintf(f, " tests=\"%d\" failures=\"%d\"", s->n, failures);
    if (s->timed)
        fprintf(f, " time=\"%.3f\"", total);
}

static void write_case(FILE *f, const struct junit_suite *s, const struct junit_case *c)
{
    fputs("    <testcase classname=\"", f);
    report_xml_escaped(f, c->classname);
    fputs("\" name=\"", f);
    report_xml_escaped(f, c->name);
    fputs("\"", f);
    if (s->timed)
        fprintf(f, " time=\"%.3f\"", c->time_s);
    fputs(">", f);
    if (c->failure && c->detail) {
        fputs("\n      <failure message=\"", f);
        report_xml_escaped(f, c->failure);
        fputs("\">", f);
        report_xml_escaped(f, c->detail);
        fputs("</failure>\n    ", f);
    } else if (c->failure) {
        fputs("<failure message=\"", f);
        report_xml_escaped(f, c->failure);
        fputs("\"/>", f);
    }
    fputs("</testcase>\n", f);
}

int junit_write(const char *path, const struct junit_suite *s, struct lab_err *err)
{
    struct atomic_file a;
    FILE *f = atomic_file_open(&a, path, err);
    if (!f)
        return -1;
    int failures = 0;
    double total = 0;
    for (int i = 0; i < s->n; i++) {
        failures += s->cases[i].failure != NULL;
        total += s->cases[i].time_s;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
    report_xml_escaped(f, s->title);
    fputs("\"", f);
    counts(f, s, failures, total);
    fputs(">\n  <testsuite name=\"", f);
    report_xml_escaped(f, s->name);
    fputs("\"", f);
    counts(f, s, failures, total);
    fputs(">\n", f);
    for (int i = 0; i < s->n; i++)
        write_case(f, s, &s->cases[i]);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return atomic_file_commit(&a, err);
}
