/* SPDX-License-Identifier: Apache-2.0 */
/* prompt_points.h - PromptEncoder's sparse embedding, one token at a time
 * (_embed_points with its padding point, _embed_boxes), in PyTorch's float32
 * order: every implementation's prompt encoder body builds its tokens with
 * it (a handful of tokens per prompt; the dense side is where they differ). */
#ifndef SAMC_MODELS_TRACKER_PROMPT_POINTS_H
#define SAMC_MODELS_TRACKER_PROMPT_POINTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/models/tracker/tracker_layers.h"

/* Tokens per prompt of PromptEncoder.forward: the n points and, when there
 * are points and no boxes, the padding point; then two box corners. */
static inline int samc_prompt_sparse_count(int n, bool boxes) { return n + (n > 0 && !boxes ? 1 : 0) + (boxes ? 2 : 0); }

/* Token i of prompt b: coords (B,n,2) in model pixels, labels (B,n), boxes
 * (B,4) or NULL -> out (embed_dim). */
void samc_prompt_sparse_token(const samc_prompt_encoder *pe, const float *coords, const int32_t *labels, int n,
                              const float *boxes, int b, int i, float *out);

#endif
