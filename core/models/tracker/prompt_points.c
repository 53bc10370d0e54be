/* SPDX-License-Identifier: Apache-2.0 */
/* prompt_points.c - PromptEncoder._embed_points / _embed_boxes per token
 * (prompt_points.h). */
#include "core/models/tracker/prompt_points.h"

#include <string.h>

#include "core/nn/position_encoding.h"

/* forward_with_coords: x / input_image_size[1], y / input_image_size[0]. */
static void pe_with_coords(const samc_prompt_encoder *pe, float x, float y, float *out)
{
    samc_fourier_pe(pe->gauss, pe->embed_dim / 2, x / (float)pe->input_w, y / (float)pe->input_h, out);
}

static void add_vec(float *y, const float *a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = y[i] + a[i];
}

void samc_prompt_sparse_token(const samc_prompt_encoder *pe, const float *coords, const int32_t *labels, int n,
                              const float *boxes, int b, int i, float *out)
{
    const int D = pe->embed_dim, np = n > 0 ? n + (boxes ? 0 : 1) : 0; /* point rows, with the padding one */
    if (i >= np) { /* a box corner (+0.5), point_embeddings[2] or [3] */
        const float *box = boxes + (int64_t)b * 4;
        const int corner = i - np;
        pe_with_coords(pe, box[2 * corner] + 0.5f, box[2 * corner + 1] + 0.5f, out);
        add_vec(out, pe->point_embed[2 + corner], D);
        return;
    }
    /* a point (+0.5), or the padding point (0,0) with label -1 (not shifted;
     * it becomes not_a_point anyway) */
    const bool is_pad = i == n;
    const float *xy = coords + ((int64_t)b * n + i) * 2;
    const int32_t label = is_pad ? -1 : labels[(int64_t)b * n + i];
    pe_with_coords(pe, is_pad ? 0.0f : xy[0] + 0.5f, is_pad ? 0.0f : xy[1] + 0.5f, out);
    /* the torch.where chain: -1 replaces the PE, 0..3 add an embedding, any
     * other label keeps the plain PE */
    if (label == -1)
        memcpy(out, pe->not_a_point, (size_t)D * sizeof *out);
    else if (label >= 0 && label <= 3)
        add_vec(out, pe->point_embed[label], D);
}
