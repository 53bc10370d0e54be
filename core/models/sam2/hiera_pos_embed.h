/* SPDX-License-Identifier: Apache-2.0 */
/* hiera_pos_embed.h - hieradet.py: Hiera._get_pos_embed. */
#ifndef SAMC_CORE_HIERA_POS_EMBED_H
#define SAMC_CORE_HIERA_POS_EMBED_H

#include "samc_status.h"

/* The absolute position embedding Hiera adds once to the patch-embed output:
 *   bicubic(pos_embed (1,C,bh,bw) -> (H,W)) + tile(pos_embed_window (1,C,wh,ww))
 * permuted to BHWC, out_bhwc (1,H,W,C). It depends only on the weights and
 * (H,W), so callers may compute it once per input size.
 *
 * The official tile repeats the window H//wh by W//ww times and relies on
 * broadcasting, so it fails unless wh divides H and ww divides W; we return
 * SAMC_ERR_UNSUPPORTED then (e.g. a 1000x1000 input: 250 is not a multiple
 * of 8). SAMC_ERR_ARG for non-positive sizes, SAMC_ERR_NOMEM on allocation
 * failure. */
samc_status samc_hiera_pos_embed(const float *pos_embed, int C, int bh, int bw,
                                 const float *pos_embed_window, int wh, int ww, int H, int W,
                                 float *out_bhwc);

#endif
