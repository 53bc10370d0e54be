/* cmd_info.c - `samc info CKPT`: format, tensors, config and the strict key
 * check; --layers lists the layer registry of the model (the names that
 * --impl-override takes), --keys the state_dict the config implies,
 * --impls the implementations. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/models/sam2/sam2_model.h"
#include "samc.h"

static void print_impls(void)
{
    printf("implementations (--impl, --impl-override LAYER=IMPL):\n");
    for (int i = 0; i < samc_impl_count(); i++) {
        const samc_impl *m = samc_impl_get(i);
        const char *why = NULL;
        const bool ok = !m->available || m->available(&why);
        printf("  %-6s tol %.0e%s  %s%s%s\n", m->name, m->tol, m == samc_impl_default() ? "  (default)" : "", m->about,
               ok ? "" : "  [unavailable: ", ok ? "" : (why ? why : "this CPU"));
        if (!ok)
            printf("]\n");
    }
}

/* Every layer instance with its kind and whether it is a parity point. */
static int print_layers(samc_sam2_model *m)
{
    samc_exec x;
    samc_error err = {0};
    if (samc_sam2_exec_init(&x, m, &err)) {
        fprintf(stderr, "samc info: %s\n", err.msg);
        return 1;
    }
    printf("layers (%d):\n", x.n_layers);
    for (int i = 0; i < x.n_layers; i++) {
        const samc_layer *L = &x.layers[i];
        const char *kind = L->def->table < 0 ? "(composite)" : samc_sam2_kind_name(L->def->table, L->def->op);
        printf("  %-44s %-24s %s\n", L->name, kind ? kind : "?", L->def->flags & SAMC_LAYER_PARITY ? "parity point" : "");
    }
    samc_exec_free(&x);
    return 0;
}

static int print_keys(const samc_sam2_config *cfg)
{
    samc_key_list keys;
    samc_error err = {0};
    if (samc_sam2_expected_keys(cfg, &keys, &err)) {
        fprintf(stderr, "samc info: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < keys.count; i++) {
        char shape[96];
        printf("  %-72s %s\n", keys.items[i].key, samc_shape_str(keys.items[i].ndim, keys.items[i].shape, shape, sizeof shape));
    }
    samc_key_list_free(&keys);
    return 0;
}

int cmd_info(int argc, char **argv)
{
    const char *ckpt = NULL, *config = NULL;
    bool allow_nonfinite = false, layers = false, keys = false, impls = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (!strcmp(argv[i], "--allow-nonfinite"))
            allow_nonfinite = true;
        else if (!strcmp(argv[i], "--layers"))
            layers = true;
        else if (!strcmp(argv[i], "--keys"))
            keys = true;
        else if (!strcmp(argv[i], "--impls"))
            impls = true;
        else if (argv[i][0] != '-' && !ckpt)
            ckpt = argv[i];
        else {
            fprintf(stderr, "samc info: unexpected argument '%s' (samc info --help)\n", argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (impls && !ckpt) {
        print_impls();
        return 0;
    }
    if (!ckpt) {
        fprintf(stderr, "samc info: no checkpoint given (samc info CKPT, or samc info --impls)\n");
        return CLI_EXIT_USAGE;
    }
    samc_error err = {0};
    samc_weights *w = NULL;
    samc_sam2_config cfg;
    if (samc_weights_open(ckpt, &w, &err) ||
        (config ? samc_sam2_config_resolve(config, &cfg, &err)
                : samc_weights_get_format(w) == SAMC_WEIGHTS_H5 ? samc_sam2_config_from_h5(ckpt, &cfg, &err)
                                                                : samc_sam2_detect_config(w, &cfg, &err))) {
        fprintf(stderr, "samc info: %s\n", err.msg);
        samc_weights_free(w);
        return 1;
    }
    size_t n = samc_weights_count(w);
    long long params = 0;
    for (size_t i = 0; i < n; i++)
        params += (long long)samc_numel(samc_weights_at(w, i));
    static const char *const fmts[] = {"unknown", "pytorch zip", "safetensors", "hdf5 dump"};
    printf("file: %s\nformat: %s\ntensors: %zu\nparameters: %lld\nconfig: %s\n", ckpt,
           fmts[samc_weights_get_format(w)], n, params, cfg.name);
    /* What segment and track would run this checkpoint with by default. */
    printf("impl: %s (default; --impl to choose)\nthreads: %d\nsamc: %s\n", samc_default_impl(),
           omp_get_max_threads(), samc_version());
    int rc = 0;
    if (samc_sam2_check_weights(&cfg, w, &err)) {
        printf("check: FAILED: %s\n", err.msg);
        rc = 1;
    } else {
        printf("check: every key and shape matches the config\n");
    }
    samc_error fe = {0};
    if (samc_weights_check_finite(w, &fe)) { /* refused by segment/track unless --allow-nonfinite */
        printf("finite: %s: %s\n", allow_nonfinite ? "allowed" : "FAILED", fe.msg);
        rc = allow_nonfinite ? rc : 1;
    } else {
        printf("finite: every weight is finite\n");
    }
    if (impls)
        print_impls();
    if (keys && !rc)
        rc = print_keys(&cfg);
    if (layers && !rc) {
        samc_sam2_model *m = NULL;
        if (samc_sam2_model_init(&m, w, &cfg, &err)) { /* takes the weights */
            fprintf(stderr, "samc info: %s\n", err.msg);
            return 1;
        }
        w = NULL;
        rc = print_layers(m);
        samc_sam2_model_free(m);
    }
    samc_weights_free(w);
    return rc;
}
