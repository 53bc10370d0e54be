/* SPDX-License-Identifier: Apache-2.0 */
/* fault_impl.c - a test-only implementation, "fault": every body it wraps
 * runs the fast body and then plants a fault of relative size tu_fault_size
 * in each output: its element 0 moved by tu_fault_size x max|output| (the
 * output's rel against the official one grows by that much). Registered by
 * the tests that need it; an override LAYER=fault plants the fault in
 * exactly one layer, and the parity harness must name that layer as the
 * first failure. Bodies it does not wrap come from its fallback, fast. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fast/fast_ops.h"
#include "util/fault_impl.h"

double tu_fault_size = 1e-4;
int tu_fault_heads_only = -1;

static void poke_output(samc_tensor *t)
{
    const int64_t n = t && t->data ? samc_numel(t) : 0;
    float mx = 0;
    for (int64_t i = 0; i < n; i++)
        mx = fabsf(t->data[i]) > mx ? fabsf(t->data[i]) : mx;
    if (n > 0)
        t->data[0] += (float)(tu_fault_size * mx);
}

/* Every wrapped body's outputs, unless the fault is in one output of the
 * mask decoder heads only (tu_fault_heads_only). */
static void poke(samc_tensor *t)
{
    if (tu_fault_heads_only < 0)
        poke_output(t);
}

static void poke_heads(samc_tensor *masks, samc_tensor *iou, samc_tensor *obj)
{
    samc_tensor *t[3] = {masks, iou, obj};
    for (int k = 0; k < 3; k++)
        if (tu_fault_heads_only < 0 || tu_fault_heads_only == k)
            poke_output(t[k]);
}

#define WRAP(st, ...)      \
    do {                   \
        if (st)            \
            return st;     \
        __VA_ARGS__;       \
        return SAMC_OK;    \
    } while (0)

static samc_status f_preprocess(samc_ctx *c, const uint8_t *img, int h, int w, int size, samc_tensor *out)
{
    WRAP(samc_fast_preprocess(c, img, h, w, size, out), poke(out));
}
static samc_status f_patch_embed(samc_ctx *c, const samc_conv2d *p, const samc_tensor *x, samc_tensor *out)
{
    WRAP(samc_fast_patch_embed(c, p, x, out), poke(out));
}
static samc_status f_hiera_block(samc_ctx *c, const samc_hiera_block *b, const samc_tensor *x, samc_tensor *out)
{
    WRAP(samc_fast_hiera_block(c, b, x, out), poke(out));
}
static samc_status f_fpn_neck(samc_ctx *c, const samc_fpn_neck *n, const samc_tensor *xs, samc_tensor *out,
                              samc_tensor *pos)
{
    WRAP(samc_fast_fpn_neck(c, n, xs, out, pos), for (int i = 0; i < n->n_levels; i++) poke(&out[i]), poke(&pos[i]));
}
static samc_status f_conv2d(samc_ctx *c, const samc_conv2d *cv, const samc_tensor *x, samc_tensor *out)
{
    WRAP(samc_fast_conv2d(c, cv, x, out), poke(out));
}
static samc_status f_prompt_encoder(samc_ctx *c, const samc_prompt_encoder *pe, const float *coords,
                                    const int32_t *labels, int B, int N, const float *boxes, const samc_tensor *masks,
                                    samc_tensor *sparse, samc_tensor *dense)
{
    WRAP(samc_fast_prompt_encoder(c, pe, coords, labels, B, N, boxes, masks, sparse, dense), poke(sparse), poke(dense));
}
static samc_status f_dense_pe(samc_ctx *c, const samc_prompt_encoder *pe, samc_tensor *out)
{
    WRAP(samc_fast_dense_pe(c, pe, out), poke(out));
}
static samc_status f_twoway_block(samc_ctx *c, const samc_twoway_block *b, const samc_tensor *q, const samc_tensor *k,
                                  const samc_tensor *qpe, const samc_tensor *kpe, samc_tensor *qo, samc_tensor *ko)
{
    WRAP(samc_fast_twoway_block(c, b, q, k, qpe, kpe, qo, ko), poke(qo), poke(ko));
}
static samc_status f_twoway_final(samc_ctx *c, const samc_twoway_transformer *tr, const samc_tensor *q,
                                  const samc_tensor *k, const samc_tensor *qpe, const samc_tensor *kpe, samc_tensor *qo)
{
    WRAP(samc_fast_twoway_final(c, tr, q, k, qpe, kpe, qo), poke(qo));
}
static samc_status f_heads(samc_ctx *c, const samc_mask_decoder *d, const samc_tensor *hs, const samc_tensor *keys,
                           int eh, int ew, const samc_tensor *s0, const samc_tensor *s1, samc_tensor *masks,
                           samc_tensor *iou, samc_tensor *obj)
{
    WRAP(samc_fast_mask_decoder_heads(c, d, hs, keys, eh, ew, s0, s1, masks, iou, obj), poke_heads(masks, iou, obj));
}
static samc_status f_postprocess(samc_ctx *c, const samc_tensor *lo, int H, int W, samc_tensor *out)
{
    WRAP(samc_fast_postprocess(c, lo, H, W, out), poke(out));
}

static samc_status f_mask_downsampler(samc_ctx *c, const samc_mask_downsampler *ds, const samc_tensor *x,
                                      samc_tensor *out)
{
    WRAP(samc_fast_mask_downsampler(c, ds, x, out), poke(out));
}
static samc_status f_cxblock(samc_ctx *c, const samc_cxblock *b, const samc_tensor *x, samc_tensor *out)
{
    WRAP(samc_fast_cxblock(c, b, x, out), poke(out));
}
static samc_status f_memory_attention_layer(samc_ctx *c, const samc_memory_attention_layer *l, const samc_tensor *tgt,
                                            const samc_tensor *mem, const samc_tensor *pos, const samc_tensor *qpos,
                                            int nk_excl, samc_tensor *out)
{
    WRAP(samc_fast_memory_attention_layer(c, l, tgt, mem, pos, qpos, nk_excl, out), poke(out));
}

static const samc_sam2_ops faulty_sam2_ops = {
    .preprocess = f_preprocess,
    .patch_embed = f_patch_embed,
    .hiera_block = f_hiera_block,
    .fpn_neck = f_fpn_neck,
};

static const samc_nn_ops faulty_nn_ops = {
    .conv2d = f_conv2d,
};

static const samc_tracker_ops faulty_tracker_ops = {
    .prompt_encoder = f_prompt_encoder,
    .dense_pe = f_dense_pe,
    .twoway_block = f_twoway_block,
    .twoway_final = f_twoway_final,
    .mask_decoder_heads = f_heads,
    .postprocess = f_postprocess,
    .mask_downsampler = f_mask_downsampler,
    .cxblock = f_cxblock,
    .memory_attention_layer = f_memory_attention_layer,
};

const samc_impl tu_fault_impl = {
    .name = "fault",
    .about = "test only: fast with a fault of relative size tu_fault_size in every output",
    .tol = 1e-5, /* held to ref's tolerance: a 1e-4 fault is 10 x over it */
    .fallback = "fast",
    .ops = {[SAMC_OPS_NN] = &faulty_nn_ops, [SAMC_OPS_TRACKER] = &faulty_tracker_ops, [SAMC_OPS_SAM2] = &faulty_sam2_ops},
};
