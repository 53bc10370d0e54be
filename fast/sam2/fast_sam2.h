/* fast_sam2.h - the fast/ bodies of every SAM 2 layer kind, one file per
 * official module (contracts: core/models/sam2/sam2_layers.h). The
 * declarations come from the kind lists, so adding a kind adds a body file
 * and nothing here. */
#ifndef SAMC_FAST_SAM2_H
#define SAMC_FAST_SAM2_H

#include "core/models/sam2/sam2_layers.h"

#define SAMC_X(kind) samc_sam2_##kind##_fn samc_fast_##kind;
SAMC_SAM2_IMAGE_OPS(SAMC_X)
SAMC_SAM2_VIDEO_OPS(SAMC_X)
#undef SAMC_X

extern const samc_sam2_image_ops samc_fast_sam2_image_ops;
extern const samc_sam2_video_ops samc_fast_sam2_video_ops;

/* Per-exec caches kept next to the workspace (fast/workspace.c). */
enum { FAST_CACHE_DENSE_PE, FAST_CACHE_ROPE, FAST_CACHE_N };
/* A zeroed block of `size` bytes for `slot`, kept until the exec is freed;
 * NULL when out of memory. */
void *samc__fast_ws_cache(samc_ctx *ctx, int slot, size_t size);
void samc__fast_dense_pe_cache_free(void *cache);
/* The RoPE tables cached per exec (FAST_CACHE_ROPE). */
void samc__fast_rope_cache_free(void *cache);

/* The two-way transformer's token <-> image cross attentions with the
 * image-side projections folded into the few token rows
 * (twoway_folded.c). fold_ok: whether it pays for Nq tokens; fold_need:
 * floats of f. t2i: qp >= Nq * C, St >= Nk * heads * Nq floats. i2t: kp >=
 * 2 * Nq * C, S >= Nk * heads * Nq. */
int samc__fast_twoway_fold_ok(const samc_attention *a, int Nq);
size_t samc__fast_twoway_fold_need(const samc_attention *a, int Nk, int D);
void samc__fast_t2i_folded(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Nq,
                           const float *k, const float *v, int Nk, float *out, float *qp, float *St, float *f);
void samc__fast_i2t_folded(const samc_ctx *ctx, int nt, const samc_attention *a, const float *q, int Nk,
                           const float *k, const float *v, int Nq, float *out, float *kp, float *S, float *f);

#endif
