/* SPDX-License-Identifier: Apache-2.0 */
/* hiera_geometry.c - MultiScaleBlock.forward's shapes (hieradet.py:
 * window_partition / window_unpartition, do_pool). */
#include "core/models/sam2/hiera_geometry.h"

#include "core/base/error.h"

static bool linear_is(const samc_linear *l, int in, int out)
{
    return l->w && l->in == in && l->out == out;
}

/* The weight records agree with dim / dim_out (a bad bind would otherwise
 * read out of bounds). */
static bool block_weights_ok(const samc_hiera_block *blk)
{
    const int dim = blk->dim, D = blk->dim_out, hidden = blk->mlp_fc1.out;
    return blk->norm1.dim == dim && blk->norm2.dim == D && linear_is(&blk->qkv, dim, 3 * D) &&
           linear_is(&blk->attn_proj, D, D) && linear_is(&blk->mlp_fc1, D, hidden) &&
           linear_is(&blk->mlp_fc2, hidden, D) && (!blk->has_proj || linear_is(&blk->proj, dim, D));
}

/* MultiScaleBlock.forward's shapes, and the cases where the official code
 * cannot run (we refuse those rather than invent a meaning). */
samc_status samc_hiera_block_geometry(samc_error *err, const samc_hiera_block *blk, const samc_tensor *x,
                                      samc_hiera_geom *g)
{
    if (x->ndim != 4 || x->shape[3] != blk->dim)
        return samc_fail(err, SAMC_ERR_SHAPE, "hiera_block: input is not (B,H,W,%d)", blk->dim);
    if (blk->heads < 1 || blk->dim_out % blk->heads != 0 || blk->q_stride < 0 || blk->window < 0)
        return samc_fail(err, SAMC_ERR_ARG, "hiera_block: bad heads/q_stride/window");
    if (!block_weights_ok(blk))
        return samc_fail(err, SAMC_ERR_SHAPE, "hiera_block: weight shapes do not match dims");
    if (blk->q_stride > 0 && !blk->has_proj)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: q-pool without dim change (unpooled shortcut)");
    if (!blk->has_proj && blk->dim != blk->dim_out)
        return samc_fail(err, SAMC_ERR_ARG, "hiera_block: dim change without proj");
    if (blk->q_stride > 0 && blk->window == 0) /* no config has one */
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: q-pool with global attention (the official forward "
                         "divides by window // q_stride = 0)");
    g->B = (int)x->shape[0], g->H = (int)x->shape[1], g->W = (int)x->shape[2];
    g->dim = blk->dim, g->D = blk->dim_out, g->heads = blk->heads, g->hd = g->D / g->heads;
    g->s = blk->q_stride > 0 ? blk->q_stride : 1;
    g->Ho = g->H / g->s, g->Wo = g->W / g->s;
    const int ws = blk->window;
    g->wh = ws > 0 ? ws : g->H, g->ww = ws > 0 ? ws : g->W;
    g->nwh = (g->H + g->wh - 1) / g->wh, g->nww = (g->W + g->ww - 1) / g->ww;
    g->qh = g->wh / g->s, g->qw = g->ww / g->s;
    if (g->Ho < 1 || g->Wo < 1 || g->qh < 1 || g->qw < 1)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: map %dx%d or window %d smaller than the pool stride %d",
                         g->H, g->W, ws, g->s);
    /* window_unpartition re-pads the pooled map to a multiple of ws // s and
     * reshapes. That only lines up with the partition's window grid when
     * ceil(Ho / qh) == nwh (likewise W); otherwise the official reshape or
     * the residual add raises. It happens for odd H with H % ws == 1 (H = 9,
     * ws = 4: 3 windows down, but the pooled 4 rows make 2). */
    if ((g->Ho + g->qh - 1) / g->qh != g->nwh || (g->Wo + g->qw - 1) / g->qw != g->nww)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "hiera_block: q-pool window grid of %dx%d (window %d) does not match "
                         "the pooled %dx%d map (the official unpartition fails here)",
                         g->H, g->W, ws, g->Ho, g->Wo);
    return SAMC_OK;
}
