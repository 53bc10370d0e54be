/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - derived trunk layout and consistency checks. */
#include "core/models/sam2/config.h"

#include <string.h>

#include "core/base/error.h"

void samc_sam2_tracker_config(const samc_sam2_config *c, samc_tracker_config *t)
{
    *t = (samc_tracker_config){
        .d_model = c->neck.d_model,
        .image_size = c->image_size,
        .backbone_stride = c->backbone_stride,
        .mem_attn = c->mem_attn,
        .mem_enc = c->mem_enc,
        .video = c->video,
#define SAMC_COPY(type, f) .f = c->f,
        SAMC_SAM2BASE_OPTIONS(SAMC_COPY)
#undef SAMC_COPY
    };
}

int samc_hiera_depth(const samc_hiera_config *h)
{
    int d = 0;
    for (int i = 0; i < h->num_stages; i++)
        d += h->stages[i];
    return d;
}

int samc_hiera_stage_ends(const samc_hiera_config *h, int *ends)
{
    int acc = 0;
    for (int i = 0; i < h->num_stages; i++) {
        acc += h->stages[i];
        ends[i] = acc - 1;
    }
    return h->num_stages;
}

static bool in_list(int x, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == x)
            return true;
    return false;
}

/* Mirrors hieradet.Hiera.__init__: the window size "lags by a block" (the
 * first block of a stage uses the previous stage's window), dims and heads
 * change at the q-pool block, and only the first q_pool stage changes pool q. */
samc_status samc_hiera_block_specs(const samc_hiera_config *h, samc_hiera_block_spec *specs,
                                   int max_blocks, samc_error *err)
{
    int depth = samc_hiera_depth(h), ends[SAMC_MAX_STAGES];
    int nst = samc_hiera_stage_ends(h, ends);
    if (depth > max_blocks)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "Hiera depth %d exceeds %d blocks", depth, max_blocks);
    int qpool_blocks[SAMC_MAX_STAGES], nq = 0;
    for (int i = 0; i < nst - 1 && nq < h->q_pool; i++)
        qpool_blocks[nq++] = ends[i] + 1;
    int dim = h->embed_dim, heads = h->num_heads, stage = 1;
    for (int i = 0; i < depth; i++) {
        int dim_out = dim;
        int window = h->window_spec[stage - 1];
        if (in_list(i, h->global_att_blocks, h->n_global))
            window = 0;
        if (in_list(i - 1, ends, nst)) {
            dim_out = (int)(dim * h->dim_mul);
            heads = (int)(heads * h->head_mul);
            stage++;
        }
        specs[i] = (samc_hiera_block_spec){dim, dim_out, heads, window,
                                           in_list(i, qpool_blocks, nq) ? h->q_stride : 0};
        dim = dim_out;
    }
    return SAMC_OK;
}

/* Sizes the key list and the layers use, outside what the official code
 * would build (found by fuzz/fuzz_config_json.c: accepted configs implied
 * tensors of shape -1, and the mask downsampler's stride loop overflowed). */
static samc_status validate_ranges(const samc_sam2_config *c, samc_error *err)
{
#define RANGE(v, lo, hi, name)                                                                               \
    do {                                                                                                     \
        if (!((v) >= (lo) && (v) <= (hi)))                                                                   \
            return samc_fail(err, SAMC_ERR_FORMAT, "config: %s = %g is outside %g..%g", name, (double)(v),     \
                             (double)(lo), (double)(hi));                                                    \
    } while (0)
    const samc_neck_config *n = &c->neck;
    RANGE(n->conv_kernel, 1, 15, "image_encoder.neck.kernel_size");
    RANGE(n->conv_stride, 1, 15, "image_encoder.neck.stride");
    RANGE(n->conv_padding, 0, 15, "image_encoder.neck.padding");
    RANGE(n->pe.temperature, 1e-6, 1e12, "image_encoder.neck.position_encoding.temperature");
    RANGE(n->pe.scale, -1e6, 1e6, "image_encoder.neck.position_encoding.scale");
#undef RANGE
    samc_tracker_config t;
    samc_sam2_tracker_config(c, &t);
    return samc_tracker_config_validate(&t, err);
}

samc_status samc_sam2_config_validate(const samc_sam2_config *c, samc_error *err)
{
    const samc_hiera_config *h = &c->trunk;
    if (h->num_stages < 1 || h->num_stages > SAMC_MAX_STAGES)
        return samc_fail(err, SAMC_ERR_FORMAT, "config: trunk must have 1..%d stages", SAMC_MAX_STAGES);
    if (h->embed_dim <= 0 || h->num_heads <= 0 || h->q_stride <= 0 || h->bkg_h <= 0 || h->bkg_w <= 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "config: trunk sizes must be positive");
    for (int i = 0; i < h->num_stages; i++)
        if (h->stages[i] <= 0 || h->window_spec[i] < 0)
            return samc_fail(err, SAMC_ERR_FORMAT, "config: bad stage %d (blocks %d, window %d)", i,
                             h->stages[i], h->window_spec[i]);
    if (samc_hiera_depth(h) > SAMC_MAX_BLOCKS)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "config: Hiera depth %d exceeds %d", samc_hiera_depth(h),
                         SAMC_MAX_BLOCKS);
    /* Ranges before anything is derived from them: the layout below converts
     * dim * dim_mul to int, and key shapes multiply sizes together. */
    if (!(h->dim_mul > 0 && h->dim_mul <= 16) || !(h->head_mul > 0 && h->head_mul <= 16) || h->embed_dim > 8192 ||
        h->num_heads > 1024 || h->q_stride > 16 || h->bkg_h > 1024 || h->bkg_w > 1024)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "config: trunk sizes out of range (embed_dim <= 8192, num_heads <= 1024, dim_mul and "
                         "head_mul in (0,16], q_stride <= 16, window_pos_embed_bkg_spatial_size <= 1024)");
    if (h->window_spec[0] < 1) /* Hiera tiles pos_embed_window (window_spec[0] square) over the grid */
        return samc_fail(err, SAMC_ERR_FORMAT, "config: window_spec[0] = %d must be at least 1", h->window_spec[0]);
    for (int i = 0; i < h->num_stages; i++)
        if (h->window_spec[i] > 1024)
            return samc_fail(err, SAMC_ERR_FORMAT, "config: window_spec[%d] = %d is over 1024", i, h->window_spec[i]);
    if (h->q_pool < 0 || h->q_pool > h->num_stages - 1)
        return samc_fail(err, SAMC_ERR_FORMAT, "config: q_pool %d outside 0..%d", h->q_pool, h->num_stages - 1);
    samc_hiera_block_spec specs[SAMC_MAX_BLOCKS];
    samc_status st = samc_hiera_block_specs(h, specs, SAMC_MAX_BLOCKS, err);
    if (st)
        return st;
    int ends[SAMC_MAX_STAGES], nst = samc_hiera_stage_ends(h, ends);
    for (int i = 0; i < samc_hiera_depth(h); i++)
        if (specs[i].dim_out <= 0 || specs[i].dim_out > 65536)
            return samc_fail(err, SAMC_ERR_FORMAT, "config: block %d: dim %d outside 1..65536", i, specs[i].dim_out);
    for (int i = 0; i < samc_hiera_depth(h); i++)
        if (specs[i].heads <= 0 || specs[i].dim_out % specs[i].heads)
            return samc_fail(err, SAMC_ERR_FORMAT, "config: block %d: dim %d not divisible by %d heads", i,
                             specs[i].dim_out, specs[i].heads);
    const samc_neck_config *n = &c->neck;
    /* ImageEncoder asserts trunk.channel_list == neck.backbone_channel_list. */
    if (n->n_levels != nst)
        return samc_fail(err, SAMC_ERR_FORMAT, "config: neck has %d levels, trunk %d stages", n->n_levels, nst);
    for (int i = 0; i < nst; i++)
        if (n->backbone_channel_list[i] != specs[ends[nst - 1 - i]].dim_out)
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "config: neck.backbone_channel_list[%d] = %d but the trunk gives %d", i,
                             n->backbone_channel_list[i], specs[ends[nst - 1 - i]].dim_out);
    for (int i = 0; i < n->n_top_down; i++)
        if (n->fpn_top_down_levels[i] < 0 || n->fpn_top_down_levels[i] >= nst)
            return samc_fail(err, SAMC_ERR_FORMAT, "config: fpn_top_down_levels has %d, outside 0..%d",
                             n->fpn_top_down_levels[i], nst - 1);
    if (n->d_model <= 0 || n->d_model % 8 || n->pe.num_pos_feats != n->d_model)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "config: neck d_model %d must be a positive multiple of 8 equal to its position encoding's num_pos_feats (%d)",
                         n->d_model, n->pe.num_pos_feats);
    if (n->scalp < 0 || n->scalp >= nst)
        return samc_fail(err, SAMC_ERR_FORMAT, "config: scalp %d outside 0..%d", n->scalp, nst - 1);
    if (c->image_size <= 0 || c->backbone_stride <= 0 || c->image_size % c->backbone_stride ||
        c->image_size % (4 * h->patch_stride))
        return samc_fail(err, SAMC_ERR_FORMAT, "config: image_size %d must be a multiple of backbone_stride %d",
                         c->image_size, c->backbone_stride);
    if (c->image_size > SAMC_SAM2_MAX_IMAGE_SIZE)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "config: image_size %d is over %d (the released models use 1024; the encoder's work grows "
                         "with the square of the size and its global attention with the fourth power)",
                         c->image_size, SAMC_SAM2_MAX_IMAGE_SIZE);
    /* Hiera._get_pos_embed tiles pos_embed_window (window_spec[0] square)
     * over the patch grid: the official code fails to broadcast otherwise. */
    const int grid = c->image_size / h->patch_stride;
    if (grid % h->window_spec[0])
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "config: image_size %d gives a %dx%d patch grid, which the %dx%d position-embedding window "
                         "(window_spec[0]) does not tile", c->image_size, grid, grid, h->window_spec[0],
                         h->window_spec[0]);
    return validate_ranges(c, err);
}

/* A preset name, a .json file, or a parity dump (.h5) holding config_json. */
samc_status samc_sam2_config_resolve(const char *s, samc_sam2_config *cfg, samc_error *err)
{
    size_t n = strlen(s);
    if (n > 3 && !strcmp(s + n - 3, ".h5"))
        return samc_sam2_config_from_h5(s, cfg, err);
    if ((n > 5 && !strcmp(s + n - 5, ".json")) || strchr(s, '/'))
        return samc_sam2_config_from_json_file(s, cfg, err);
    return samc_sam2_config_preset(s, cfg, err);
}
