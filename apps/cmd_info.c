/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_info.c - `samc info CKPT`: format, tensors, config and the strict key
 * check; --layers lists the layer registry of the model (the names that
 * --impl-override takes), --keys the state_dict the config implies,
 * --impls the implementations. Without CKPT: the system (samc_system_info)
 * and the implementations. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/models/family.h"
#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_hf.h"
#include "core/models/sam3/sam3_model.h"
#include "core/runtime/plugin.h"
#include "samc.h"

static void print_impls(void)
{
    samc_error perr[4] = {{0}};
    const char *pname[4] = {0};
    int nfail = 0;
    for (int i = 0; samc__plugin_impl_name(i); i++) { /* load the plugins, to list their rows too */
        samc_status st = SAMC_OK;
        samc_error e = {0};
        if (!samc_impl_lookup(samc__plugin_impl_name(i), "plugin", &st, &e) && nfail < 4)
            pname[nfail] = samc__plugin_impl_name(i), perr[nfail++] = e;
    }
    printf("implementations (--impl, --impl-override LAYER=IMPL):\n");
    for (int k = 0; k < nfail; k++)
        printf("  %-9s not loaded: %s\n", pname[k], perr[k].msg);
    for (int i = 0; i < samc_impl_count(); i++) {
        const samc_impl *m = samc_impl_get(i);
        const char *why = NULL;
        const bool ok = !m->available || m->available(&why);
        printf("  %-9s tol %.0e%s  %s%s%s%s\n", m->name, m->tol, m == samc_impl_default() ? "  (default)" : "", m->about,
               ok ? "" : "  [unavailable: ", ok ? "" : (why ? why : "this machine"), ok ? "" : "]");
    }
}

/* Every layer instance with its kind and whether it is a parity point. */
static int print_layers(samc_exec *xp, samc_status st, const samc_error *err)
{
    if (st) {
        fprintf(stderr, "samc info: %s\n", err->msg);
        return 1;
    }
    const samc_exec x = *xp;
    int fell_back = 0;
    printf("layers (%d; implementation %s):\n", x.n_layers, x.impl->name);
    for (int i = 0; i < x.n_layers; i++) {
        const samc_layer *L = &x.layers[i];
        const char *kind = !L->def->body ? "(composite)" : samc_kind_name(L->def->table, L->def->body);
        const char *whole = L->def->whole ? samc_kind_name(L->def->table, L->def->whole) : NULL;
        const bool other = L->impl && L->asked && L->impl != L->asked;
        fell_back += other && L->def->body;
        printf("  %-44s %-24s %-12s %-6s%s%s%s\n", L->name, kind ? kind : "?", samc_layer_is_parity(L) ? "parity point" : "",
               L->def->body && L->impl ? L->impl->name : "", other ? " (fallback)" : "", L->whole_ops ? "  whole part: " : "",
               L->whole_ops && whole ? whole : "");
    }
    if (fell_back) /* a device implementation's fallback runs on the host: its inputs and outputs cross */
        printf("%d layer(s) asked of %s are served by its fallback; outside a whole-part body each of them copies its "
               "inputs and outputs between the implementations' memories\n",
               fell_back, x.impl->name);
    samc_exec_free(xp);
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

/* A SAM 3 checkpoint or dump: the family, the config, the strict key check
 * (the loader's: every key and shape before anything is computed). */
static int info_sam3(const char *ckpt, const char *config, bool layers)
{
    samc_error err = {0};
    samc_weights *w = NULL;
    if (samc_weights_open(ckpt, &w, &err)) {
        fprintf(stderr, "samc info: %s\n", err.msg);
        return 1;
    }
    long long params = 0;
    int tracker_keys = 0;
    for (size_t i = 0; i < samc_weights_count(w); i++) {
        params += (long long)samc_numel(samc_weights_at(w, i));
        tracker_keys += !strncmp(samc_weights_key(w, i), "tracker.", 8);
    }
    static const char *const fmts[] = {"unknown", "pytorch zip", "safetensors", "hdf5 dump"};
    const bool dump = samc_weights_get_format(w) == SAMC_WEIGHTS_H5;
    printf("file: %s\nfamily: SAM 3\nformat: %s%s\ntensors: %zu\nparameters: %lld\nconfig: %s\n", ckpt,
           fmts[samc_weights_get_format(w)], samc_sam3_is_hf(w) ? ", key names: transformers" : "",
           samc_weights_count(w), params,
           config ? config : dump ? "the dump's /model/config_json" : "sam3 (built-in release)");
    samc_weights_free(w);
    printf("impl: %s (default; --impl to choose)\nthreads: %d\nsamc: %s\nsystem: %s\n", samc_default_impl(),
           omp_get_max_threads(), samc_version(), samc_system_info());
    samc_sam3_model *m = NULL;
    if (samc_sam3_model_load(ckpt, config, &m, &err)) {
        printf("check: FAILED: %s\n", err.msg);
        return 1;
    }
    printf("check: every key and shape matches the config (resolution %d, %d ViT blocks)\n", m->cfg.resolution,
           m->vision.n_blocks);
    printf("vocabulary: %s\n", m->language.tok ? "in the dump (/model/bpe_vocab_gz)" : "not included: segment needs --vocab FILE");
    if (m->has_tracker) /* sam3.pt whole: the detector and the tracker */
        printf("halves: detector and tracker (%d tracker.* tensors): concepts (segment --text), clicks (segment "
               "--point: predict_inst)%s\n", tracker_keys, m->video.has_loop ? ", video (track --text)" : "");
    else
        printf("halves: detector only (no tracker.* weights): concepts; video and clicks need the whole sam3.pt\n");
    int rc = 0;
    if (layers) {
        samc_exec x;
        rc = print_layers(&x, m->video.has_loop ? samc_sam3_video_exec_init(&x, m, NULL, &err)
                                                : samc_sam3_exec_init(&x, m, NULL, &err), &err);
    }
    samc_sam3_model_free(m);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    const char *ckpt = NULL, *config = NULL, *impl = NULL;
    bool allow_nonfinite = false, layers = false, keys = false, impls = false;
    enum { O_CONFIG, O_NONFINITE, O_LAYERS, O_KEYS, O_IMPLS, O_IMPL };
    static const cli_option opts[] = {
        [O_CONFIG] = {"config", 'c', "NAME|FILE"}, [O_NONFINITE] = {"allow-nonfinite", 0, NULL},
        [O_LAYERS] = {"layers", 0, NULL},          [O_KEYS] = {"keys", 0, NULL},
        [O_IMPLS] = {"impls", 0, NULL},            [O_IMPL] = {"impl", 0, "NAME"}, /* --layers: who serves each */
    };
    cli_parser cp;
    cli_parser_init(&cp, "info", argc, argv, opts, sizeof opts / sizeof opts[0]);
    samc_error perr = {0};
    const char *v;
    for (int o; (o = cli_next(&cp, &v, &perr)) != -1;) {
        switch (o) {
        case -2: fprintf(stderr, "samc info: %s\n", perr.msg); return CLI_EXIT_USAGE;
        case O_CONFIG: config = v; break;
        case O_NONFINITE: allow_nonfinite = true; break;
        case O_LAYERS: layers = true; break;
        case O_KEYS: keys = true; break;
        case O_IMPLS: impls = true; break;
        case O_IMPL: impl = v; break;
        default: break;
        }
    }
    if (cp.first_positional < argc)
        ckpt = argv[cp.first_positional];
    if (cp.first_positional + 1 < argc) {
        fprintf(stderr, "samc info: unexpected argument '%s' (samc info --help)\n", argv[cp.first_positional + 1]);
        return CLI_EXIT_USAGE;
    }
    if (!ckpt) { /* the system: what a run would use on this machine */
        printf("samc: %s\nsystem: %s\nthreads: %d\n", samc_version(), samc_system_info(), omp_get_max_threads());
        print_impls();
        return 0;
    }
    samc_error err = {0};
    samc_family fam;
    if (samc_detect_family(ckpt, &fam, &err)) {
        fprintf(stderr, "samc info: %s\n", err.msg);
        return 1;
    }
    if (fam == SAMC_FAMILY_SAM3) {
        if (keys || allow_nonfinite) {
            fprintf(stderr, "samc info: %s is a SAM 3 checkpoint: --keys and --allow-nonfinite are SAM 2 options\n",
                    ckpt);
            return CLI_EXIT_USAGE;
        }
        return info_sam3(ckpt, config, layers);
    }
    samc_weights *w = NULL;
    samc_sam2_config cfg;
    if (samc_sam2_open_weights(ckpt, &w, &err) ||
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
    printf("file: %s\nfamily: SAM 2\nformat: %s%s%s\ntensors: %zu\nparameters: %lld\nconfig: %s\n", ckpt,
           fmts[samc_weights_get_format(w)], samc_weights_naming(w) ? ", key names: " : "",
           samc_weights_naming(w) ? samc_weights_naming(w) : "", n, params, cfg.name);
    /* What segment and track would run this checkpoint with by default. */
    printf("impl: %s (default; --impl to choose)\nthreads: %d\nsamc: %s\nsystem: %s\n", samc_default_impl(),
           omp_get_max_threads(), samc_version(), samc_system_info());
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
        samc_exec x;
        samc_status st = samc_sam2_exec_init(&x, m, &err);
        if (!st && impl && (st = samc_exec_set_impl(&x, impl, &err)))
            samc_exec_free(&x);
        rc = print_layers(&x, st, &err);
        samc_sam2_model_free(m);
    }
    samc_weights_free(w);
    return rc;
}
