/* cmd_info.c - `samc info CKPT`: format, tensors, config and the strict key check. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/sam2_keys.h"

int cmd_info(int argc, char **argv)
{
    const char *ckpt = NULL, *config = NULL;
    bool allow_nonfinite = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (!strcmp(argv[i], "--allow-nonfinite"))
            allow_nonfinite = true;
        else if (argv[i][0] != '-' && !ckpt)
            ckpt = argv[i];
        else {
            fprintf(stderr, "samc info: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!ckpt) {
        fprintf(stderr, "samc info: no checkpoint given\n");
        return 2;
    }
    samc_error err = {0};
    samc_weights *w = NULL;
    samc_sam2_config cfg;
    if (samc_weights_open(ckpt, &w, &err) ||
        (config ? samc_sam2_config_resolve(config, &cfg, &err) : samc_sam2_detect_config(w, &cfg, &err))) {
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
    samc_weights_free(w);
    return rc;
}
