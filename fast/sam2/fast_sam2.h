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

#endif
