/* sam2_check.c - a checkpoint against the config: strict key/shape check and
 * preset detection from the weight shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sam2_keys.h"

static int cmp_spec(const void *a, const void *b)
{
    return strcmp(((const samc_key_spec *)a)->key, ((const samc_key_spec *)b)->key);
}

/* Up to 5 unexpected keys, then a count, into `buf`. Returns the count. */
static int list_unexpected(const samc_key_list *exp, const samc_weights *w, char *buf, size_t n)
{
    int count = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < samc_weights_count(w); i++) {
        samc_key_spec probe;
        snprintf(probe.key, sizeof probe.key, "%s", samc_weights_key(w, i));
        if (bsearch(&probe, exp->items, (size_t)exp->count, sizeof *exp->items, cmp_spec))
            continue;
        if (count++ < 5 && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s'%s'", count > 1 ? ", " : "", probe.key);
    }
    if (count > 5 && used < n)
        snprintf(buf + used, n - used, " and %d more", count - 5);
    return count;
}

samc_status samc_sam2_check_weights(const samc_sam2_config *cfg, const samc_weights *w, samc_error *err)
{
    samc_key_list exp;
    samc_status st = samc_sam2_expected_keys(cfg, &exp, err);
    if (st)
        return st;
    qsort(exp.items, (size_t)exp.count, sizeof *exp.items, cmp_spec);
    const char *src = samc_weights_source(w);
    int missing = 0, first_missing = -1;
    for (int i = 0; i < exp.count && st == SAMC_OK; i++) {
        const samc_key_spec *k = &exp.items[i];
        const samc_tensor *t = samc_weights_find(w, k->key);
        if (!t) {
            if (first_missing < 0)
                first_missing = i;
            missing++;
            continue;
        }
        if (!samc_shape_equal(t->ndim, t->shape, k->ndim, k->shape)) {
            char e[96], a[96];
            st = samc_fail(err, SAMC_ERR_SHAPE,
                           "%s: key '%s': expected shape %s for config '%s', got %s", src, k->key,
                           samc_shape_str(k->ndim, k->shape, e, sizeof e), cfg->name,
                           samc_shape_str(t->ndim, t->shape, a, sizeof a));
        }
    }
    char extra[700];
    int n_extra = list_unexpected(&exp, w, extra, sizeof extra);
    if (st == SAMC_OK && missing) {
        st = samc_fail(err, SAMC_ERR_KEY, "%s: missing key '%s' (%d of %d expected keys missing for config '%s')%s%s",
                       src, exp.items[first_missing].key, missing, exp.count, cfg->name,
                       n_extra ? "; unexpected keys: " : "", n_extra ? extra : "");
    } else if (st == SAMC_OK && n_extra) {
        st = samc_fail(err, SAMC_ERR_KEY, "%s: %d unexpected key(s) for config '%s': %s", src, n_extra,
                       cfg->name, extra);
    }
    samc_key_list_free(&exp);
    return st;
}

/* Count blocks by probing "image_encoder.trunk.blocks.N.norm1.weight". */
static int count_blocks(const samc_weights *w)
{
    char k[96];
    int n = 0;
    for (;; n++) {
        snprintf(k, sizeof k, "image_encoder.trunk.blocks.%d.norm1.weight", n);
        if (!samc_weights_find(w, k))
            return n;
    }
}

samc_status samc_sam2_detect_config(const samc_weights *w, samc_sam2_config *cfg, samc_error *err)
{
    const char *src = samc_weights_source(w);
    const samc_tensor *pe = samc_weights_find(w, "image_encoder.trunk.patch_embed.proj.weight");
    if (!pe || pe->ndim != 4)
        return samc_fail(err, SAMC_ERR_KEY,
                         "%s: cannot detect the model variant: no 'image_encoder.trunk.patch_embed.proj.weight' "
                         "(is this a SAM 2 checkpoint?)", src);
    const int embed = (int)pe->shape[0], depth = count_blocks(w);
    const bool v21 = samc_weights_find(w, "no_obj_embed_spatial") != NULL;
    static const struct { int embed, depth; const char *size; } known[] = {
        {96, 12, "t"}, {96, 16, "s"}, {112, 24, "b+"}, {144, 48, "l"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (known[i].embed != embed || known[i].depth != depth)
            continue;
        char name[32];
        snprintf(name, sizeof name, "%s_hiera_%s", v21 ? "sam2.1" : "sam2", known[i].size);
        return samc_sam2_config_preset(name, cfg, err);
    }
    return samc_fail(err, SAMC_ERR_ARG,
                     "%s: weights (embed_dim %d, %d Hiera blocks) match no built-in config; "
                     "pass --config NAME or --config FILE.json", src, embed, depth);
}
