/*
 * junit.h - the one JUnit XML writer: a run's junit.xml (a testcase per
 * result) and the baseline check's (a testcase per compared figure) are
 * both a list of cases handed to junit_write, which CI systems read. Also
 * the XML escaping that report.html shares.
 */
#ifndef LOCKLAB_JUNIT_H
#define LOCKLAB_JUNIT_H

#include <stdbool.h>
#include <stdio.h>

#include "lab.h"

struct junit_case {
    const char *classname;
    const char *name;
    double time_s;       /* the case's time= when the suite is timed */
    const char *failure; /* <failure message=...>, or NULL: the case passed */
    const char *detail;  /* the failure's text; NULL: <failure message=.../> alone */
};

struct junit_suite {
    const char *title; /* <testsuites name=...> */
    const char *name;  /* <testsuite name=...> */
    bool timed;        /* time= on the suites (the cases' sum) and on each case */
    const struct junit_case *cases;
    int n;
};

/* Write s to path (atomically, see atomic_file.h). 0, or -1 with err filled. */
int junit_write(const char *path, const struct junit_suite *s, struct lab_err *err);

/* s with <, >, & and " escaped, for XML and HTML (the JUnit files,
 * report.html). NULL writes nothing. */
void report_xml_escaped(FILE *f, const char *s);

#endif
