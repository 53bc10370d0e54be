/* sam2_impl.c - choosing ref or fast, per model and per layer. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "sam2_model.h"

/* fast/fast_ops.c. A strong reference: the library is static, and a weak
 * one would not pull fast/ out of the archive. */
extern const samc_ops samc_fast_ops;
/* Test-only fault injection of fast/ (fast/fast_testing.h, fast/fault.c). */
extern const samc_ops *samc_fast_fault_ops_for(const char *layer);
/* fast/fast_video_ops.c, strong for the same reason. */
extern const samc_video_ops samc_fast_video_ops;

const samc_ops *samc_ops_by_name(const char *name)
{
    if (!strcmp(name, "ref"))
        return &samc_ref_ops;
    if (!strcmp(name, "fast"))
        return &samc_fast_ops;
    return NULL;
}

samc_status samc_sam2_set_impl(samc_sam2_model *m, const char *name, samc_error *err)
{
    const samc_ops *o = samc_ops_by_name(name);
    if (!o)
        return samc_fail(err, SAMC_ERR_ARG, "--impl: unknown implementation '%s' (known: ref, fast)", name);
    m->ops = o;
    return SAMC_OK;
}

static bool prefix_match(const char *prefix, const char *layer)
{
    size_t n = strlen(prefix);
    return !strncmp(prefix, layer, n) && (layer[n] == '\0' || layer[n] == '.');
}

bool samc_sam2_is_layer_name(const samc_sam2_model *m, const char *layer)
{
    static const char *const fixed[] = {
        "@preprocess", "@postprocess", "image_encoder", "image_encoder.trunk",
        "image_encoder.trunk.patch_embed", "image_encoder.neck", "sam_prompt_encoder",
        "sam_mask_decoder", "sam_mask_decoder.transformer", "sam_mask_decoder.conv_s0",
        "sam_mask_decoder.conv_s1", "memory_encoder", "memory_encoder.mask_downsampler", "memory_attention",
        "obj_ptr_proj", "@prepare_memory_conditioned_features", "mask_downsample", "obj_ptr_tpos_proj"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!strcmp(layer, fixed[i]))
            return true;
    char name[SAMC_LAYER_NAME_MAX];
    for (int i = 0; i < m->depth; i++) {
        snprintf(name, sizeof name, "image_encoder.trunk.blocks.%d", i);
        if (!strcmp(layer, name))
            return true;
    }
    for (int i = 0; i < m->mask_decoder.transformer.depth; i++) {
        snprintf(name, sizeof name, "sam_mask_decoder.transformer.layers.%d", i);
        if (!strcmp(layer, name))
            return true;
    }
    for (int i = 0; i < m->memory_attention.n_layers; i++) {
        snprintf(name, sizeof name, "memory_attention.layers.%d", i);
        if (!strcmp(layer, name))
            return true;
    }
    for (int i = 0; i < m->memory_encoder.n_fuser; i++) {
        snprintf(name, sizeof name, "memory_encoder.fuser.layers.%d", i);
        if (!strcmp(layer, name))
            return true;
    }
    return false;
}

samc_status samc_sam2_add_override(samc_sam2_model *m, const char *spec, samc_error *err)
{
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec || strlen(eq + 1) == 0)
        return samc_fail(err, SAMC_ERR_ARG, "--impl-override '%s': expected LAYER=IMPL (e.g. image_encoder.trunk.blocks.3=ref)",
                         spec);
    size_t n = (size_t)(eq - spec);
    if (n >= SAMC_LAYER_NAME_MAX)
        return samc_fail(err, SAMC_ERR_ARG, "--impl-override: layer name too long");
    char layer[SAMC_LAYER_NAME_MAX];
    memcpy(layer, spec, n);
    layer[n] = '\0';
    if (!samc_sam2_is_layer_name(m, layer))
        return samc_fail(err, SAMC_ERR_ARG,
                         "--impl-override: unknown layer '%s' (layers are official module names such as "
                         "image_encoder.trunk.blocks.0, sam_mask_decoder.transformer.layers.1, @preprocess)", layer);
    const samc_ops *o = samc_ops_by_name(eq + 1);
    if (!o)
        return samc_fail(err, SAMC_ERR_ARG, "--impl-override '%s': unknown implementation '%s'", spec, eq + 1);
    if (m->n_overrides == SAMC_MAX_OVERRIDES)
        return samc_fail(err, SAMC_ERR_ARG, "--impl-override: more than %d overrides", SAMC_MAX_OVERRIDES);
    snprintf(m->overrides[m->n_overrides].layer, SAMC_LAYER_NAME_MAX, "%s", layer);
    m->overrides[m->n_overrides++].ops = o;
    return SAMC_OK;
}

const samc_ops *samc_sam2_ops_for(const samc_sam2_model *m, const char *layer)
{
    const samc_ops *best = m->ops;
    size_t best_len = 0;
    for (int i = 0; i < m->n_overrides; i++) {
        size_t n = strlen(m->overrides[i].layer);
        if (n >= best_len && prefix_match(m->overrides[i].layer, layer)) {
            best = m->overrides[i].ops;
            best_len = n;
        }
    }
    if (best == &samc_fast_ops) {
        const samc_ops *faulty = samc_fast_fault_ops_for(layer);
        if (faulty)
            return faulty;
    }
    return best;
}

const samc_video_ops *samc_sam2_video_ops_for(const samc_sam2_model *m, const char *layer)
{
    const samc_ops *o = samc_sam2_ops_for(m, layer);
    if (!strcmp(o->name, "fast"))
        return &samc_fast_video_ops;
    return &samc_ref_video_ops;
}

void samc_sam2_set_trace(samc_sam2_model *m, samc_trace_fn fn, void *user)
{
    m->trace = fn;
    m->trace_user = user;
}
