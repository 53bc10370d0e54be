/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_detect.c - which built-in preset a checkpoint is, from its shapes. */
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam2/sam2_model.h"

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
