/*
 * scenario_stores.c - the stores' own settings: the keys under
 * backends.<store> in a scenario file.
 *
 * A store's settings are rows in its folder (backend_ops.settings, such as
 * harness/stores/redis/redis_settings.c), read by the option engine where
 * the backends section has its OPT_STORES row: one section per store,
 * named as the store, built from the registry, so a new store with
 * settings needs no line in the loader. Their values go to the store's own
 * struct, one per store in scenario.store_settings, which its hooks read
 * with scenario_store_settings(); its finish_settings hook, called once
 * the file is read, checks them against the rest of the scenario.
 */
#include "backend.h"
#include "opt_engine.h"
#include "scenario_sections.h"

const void *scenario_store_settings(const struct scenario *s, const struct backend_ops *be)
{
    int i = backend_index(be);

    if (i < 0 || !be->settings || settings_offset(i + 1) > sizeof s->store_settings)
        return NULL;
    return s->store_settings + settings_offset(i);
}

int stores_fit(struct opt_loader *L)
{
    if (settings_offset(backend_count) > sizeof L->s->store_settings)
        return fail_at(L, NULL, "internal error: the stores' settings take %zu bytes of %zu "
                                "(SCN_STORE_SETTINGS_MAX)",
                       settings_offset(backend_count), sizeof L->s->store_settings);
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
