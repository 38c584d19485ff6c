/*
 * json_query.c - read one value out of a JSON file, for the shell
 * integration tests (Debian 12 has no jq by default; jansson is already a
 * dependency).
 *
 *   json_query FILE PATH
 *
 * PATH is dot-separated: an object key, an array index, or key=value to
 * pick the first array element whose field key is the string value, e.g.
 * `results.impl=redis-lua.safety.oversold`; several such tests joined by
 * commas must all hold (`results.impl=redis-lua,fencing=on.verdict`). Prints a scalar (strings raw,
 * numbers, true/false, null), or the array length / object size for a
 * container. Exit 1 when the path does not exist, 2 on bad usage or JSON.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does every `key=value` test of the comma-separated list hold for el? */
static int matches(json_t *el, const char *tests)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", tests);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            return 0;
        *eq = '\0';
        json_t *f = json_object_get(el, t);
        if (!json_is_string(f) || strcmp(json_string_value(f), eq + 1) != 0)
            return 0;
    }
    return 1;
}

static json_t *step(json_t *cur, char *part)
{
    if (json_is_array(cur) && strchr(part, '=')) {
        size_t i;
        json_t *el;
        json_array_foreach(cur, i, el)
        {
            if (matches(el, part))
                return el;
        }
        return NULL;
    }
    if (json_is_array(cur)) {
        char *end;
        long i = strtol(part, &end, 10);
        return *end ? NULL : json_array_get(cur, (size_t)i);
    }
    return json_is_object(cur) ? json_object_get(cur, part) : NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: json_query FILE PATH\n");
        return 2;
    }
    json_error_t e;
    json_t *root = json_load_file(argv[1], 0, &e);
    if (!root) {
        fprintf(stderr, "json_query: %s:%d: %s\n", argv[1], e.line, e.text);
        return 2;
    }
    json_t *cur = root;
    char *path = strdup(argv[2]);
    for (char *save, *p = strtok_r(path, ".", &save); p && cur; p = strtok_r(NULL, ".", &save))
        cur = step(cur, p);
    int rc = 0;
    if (!cur) {
        fprintf(stderr, "json_query: %s: no %s\n", argv[1], argv[2]);
        rc = 1;
    } else if (json_is_string(cur))
        printf("%s\n", json_string_value(cur));
    else if (json_is_integer(cur))
        printf("%lld\n", (long long)json_integer_value(cur));
    else if (json_is_real(cur))
        printf("%.6f\n", json_real_value(cur));
    else if (json_is_true(cur) || json_is_false(cur))
        printf("%s\n", json_is_true(cur) ? "true" : "false");
    else if (json_is_null(cur))
        printf("null\n");
    else
        printf("%zu\n", json_is_array(cur) ? json_array_size(cur) : json_object_size(cur));
    free(path);
    json_decref(root);
    return rc;
}
