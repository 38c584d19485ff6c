/*
 * test_err_text.c - unit test of how an error's whole text reaches a
 * client's slot (common/lab.c, harness/run/client_cs.c): lab_err_set_text
 * keeps a text longer than lab_err.msg whole through lab_err.full, and
 * lab_err_set forgets it; the slot keeps the first error whole, a second
 * one not at all; one longer than the slot is cut to end in LAB_TEXT_CUT;
 * an error during a server fault goes whole to fault_err instead.
 */
#include "client_cs.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* "adapter: error " and n letters, as an adapter's error reply reads. */
static void long_text(char *buf, size_t n)
{
    strcpy(buf, "adapter: error ");
    size_t o = strlen(buf);
    for (size_t i = 0; i < n; i++)
        buf[o + i] = (char)('a' + i % 26);
    buf[o + n] = '\0';
}

int main(void)
{
    static struct client_slot sl;
    static struct shared_head h;
    struct lab_err err = {0};
    char text[2048];

    /* a line of 1024 bytes (the protocol's longest): whole */
    long_text(text, 1024 - strlen("error "));
    lab_err_set_text(&err, 5, text);
    CHECK(err.code == 5 && err.full == text, "a long text is kept whole in full");
    CHECK(strncmp(err.msg, text, sizeof err.msg - 1) == 0 &&
              strlen(err.msg) == sizeof err.msg - 1,
          "msg holds its start");
    CHECK(strcmp(lab_err_text(&err), text) == 0, "lab_err_text: the whole");
    client_lock_error(&h, &sl, &sl.errors, &err);
    CHECK(sl.errors == 1 && strcmp(sl.err, text) == 0, "the slot has it whole (%zu bytes)",
          strlen(sl.err));

    /* the first error stays; lab_err_set forgets the long text */
    lab_err_set(&err, 7, "short");
    CHECK(err.full == NULL && strcmp(lab_err_text(&err), "short") == 0, "set clears full");
    client_lock_error(&h, &sl, &sl.errors, &err);
    CHECK(sl.errors == 2 && strcmp(sl.err, text) == 0, "the first error is kept");

    /* a short text has no full */
    lab_err_set_text(&err, 1, "adapter: error x");
    CHECK(err.full == NULL && strcmp(err.msg, "adapter: error x") == 0, "short: msg only");

    /* longer than the slot: cut, with the marker at the end */
    long_text(text, 1500);
    memset(&sl, 0, sizeof sl);
    lab_err_set_text(&err, 5, text);
    client_slot_error(&sl, &err);
    size_t len = strlen(sl.err), keep = sizeof sl.err - sizeof LAB_TEXT_CUT;
    CHECK(len == sizeof sl.err - 1, "cut to the slot (%zu)", len);
    CHECK(strncmp(sl.err, text, keep) == 0 && strcmp(sl.err + keep, LAB_TEXT_CUT) == 0,
          "its start, then '%s'", LAB_TEXT_CUT);

    /* during a server fault: fault_err, whole; err untouched */
    memset(&sl, 0, sizeof sl);
    long_text(text, 900);
    lab_err_set_text(&err, 5, text);
    atomic_store(&h.excused_until_ns, INT64_MAX);
    client_lock_error(&h, &sl, &sl.errors, &err);
    CHECK(sl.fault_errors == 1 && sl.errors == 0 && strcmp(sl.fault_err, text) == 0 &&
              sl.err[0] == '\0',
          "a fault's error: fault_err whole");
    return check_done();
}
