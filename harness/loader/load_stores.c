/*
 * load_stores.c - the stores' own settings: the keys under
 * backends.<store> in a scenario file.
 *
 * A store's settings are rows in its folder (backend_ops.settings, such as
 * harness/stores/redis/redis_settings.c). The backends section is built
 * here from the registry, one section per store that has settings, named
 * as the store, whose fields sit at the store's struct in
 * scenario.store_settings (backend_settings_offset); so a new store with
 * settings needs no line in the loader. Once the file is read, each
 * store's finish_settings hook checks them against the rest of the
 * scenario.
 */
#include <stddef.h>
#include <stdio.h>

#include "backend.h"
#include "load_sections.h"
#include "opt_engine.h"

const struct opt *stores_section_rows(void)
{
    static struct opt rows[BACKEND_MAX + 1];
    static char help[BACKEND_MAX][64];
    static int n = -1;

    if (n >= 0)
        return rows;
    n = 0;
    for (int i = 0; i < backend_count && n < BACKEND_MAX; i++) {
        const struct backend_ops *be = backend_registry[i];
        if (!be->settings)
            continue;
        int k = n++;
        snprintf(help[k], sizeof help[k], "the %s backend", be->title);
        rows[k] = (struct opt){ .name = be->name, .type = OPT_SECTION, .sub = be->settings,
                                .off = offsetof(struct scenario, store_settings) +
                                       backend_settings_offset(i),
                                .help = help[k] };
    }
    rows[n] = (struct opt){ .name = NULL };
    return rows;
}

int stores_fit(struct opt_loader *L)
{
    if (backend_settings_offset(backend_count) > sizeof L->s->store_settings)
        return fail_at(L, NULL, "internal error: the stores' settings take %zu bytes of %zu "
                                "(SCN_STORE_SETTINGS_MAX)",
                       backend_settings_offset(backend_count), sizeof L->s->store_settings);
    return 0;
}

/* A failure is placed at the adapter the store names, if any. */
int stores_finish(struct opt_loader *L)
{
    for (int i = 0; i < backend_count; i++) {
        const struct backend_ops *be = backend_registry[i];
        char msg[256] = "";
        int adapter = -1;
        if (be->finish_settings && be->finish_settings(L->s, &adapter, msg, sizeof msg) != 0)
            return fail_at(L, adapter >= 0 ? L->adapter_key[adapter] : NULL, "%s",
                           msg[0] ? msg : "bad settings");
    }
    return 0;
}
