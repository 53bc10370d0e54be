/* SPDX-License-Identifier: Apache-2.0 */
/* connected_components.c - 8-connected labelling with per-pixel component
 * areas (what sam2._C.get_connected_componnets returns) and the SAM 2
 * hole-filling post-processors that use it.
 *
 * The CUDA kernel is a block-based union-find (2x2 blocks, union to the
 * smaller block index); its result is exact 8-connectivity, so a plain
 * pixel union-find gives the same components and areas. Its labels (root
 * block index + 1) are reproduced too, although SAM 2 only tests label > 0.
 */
#include "core/nn/connected_components.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

static int32_t uf_find(int32_t *parent, int32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; /* path halving */
        i = parent[i];
    }
    return i;
}

/* Link the larger root under the smaller, like the kernel's atomicMin union. */
static void uf_union(int32_t *parent, int32_t a, int32_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
}

/* Union every foreground pixel with its already-visited 8-neighbours
 * (left, up-left, up, up-right); the other four see it from their side. */
static void link_pixels(const uint8_t *mask, int H, int W, int32_t *parent)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const int32_t p = y * W + x;
            if (!mask[p])
                continue;
            parent[p] = p;
            if (x > 0 && mask[p - 1])
                uf_union(parent, p, p - 1);
            if (y == 0)
                continue;
            for (int dx = -1; dx <= 1; dx++)
                if (x + dx >= 0 && x + dx < W && mask[p - W + dx])
                    uf_union(parent, p, p - W + dx);
        }
}

samc_status samc_connected_components(const uint8_t *mask, int H, int W, int32_t *labels,
                                      int32_t *counts)
{
    if (H < 1 || W < 1 || (int64_t)H * W > INT32_MAX)
        return samc_fail(NULL, SAMC_ERR_ARG, "connected_components: bad size %dx%d", H, W);
    const int32_t n = H * W;
    int32_t *parent = malloc((size_t)n * sizeof *parent);
    int32_t *area = calloc((size_t)n, sizeof *area);
    int32_t *block_min = malloc((size_t)n * sizeof *block_min);
    if (!parent || !area || !block_min) {
        free(parent), free(area), free(block_min);
        return samc_fail(NULL, SAMC_ERR_NOMEM, "connected_components: %dx%d", H, W);
    }
    link_pixels(mask, H, W, parent);
    for (int32_t p = 0; p < n; p++)
        block_min[p] = INT32_MAX;
    for (int32_t p = 0; p < n; p++) {
        if (!mask[p])
            continue;
        const int32_t r = uf_find(parent, p);
        const int32_t block = (p / W & ~1) * W + (p % W & ~1); /* the 2x2 block's top-left */
        area[r]++;
        block_min[r] = block < block_min[r] ? block : block_min[r];
    }
    for (int32_t p = 0; p < n; p++) {
        const int32_t r = mask[p] ? uf_find(parent, p) : -1;
        if (labels)
            labels[p] = r < 0 ? 0 : block_min[r] + 1;
        if (counts)
            counts[p] = r < 0 ? 0 : area[r];
    }
    free(parent), free(area), free(block_min);
    return SAMC_OK;
}

/* small[p] = (labels > 0) & (areas <= max_area). torch compares the int32
 * areas with the Python float in float32. */
static samc_status small_components(const uint8_t *bin, int H, int W, double max_area,
                                    int32_t *counts, uint8_t *small)
{
    samc_status st = samc_connected_components(bin, H, W, NULL, counts);
    if (st)
        return st;
    for (int64_t p = 0; p < (int64_t)H * W; p++)
        small[p] = counts[p] > 0 && (float)counts[p] <= (float)max_area;
    return SAMC_OK;
}

typedef struct plane_buf {
    uint8_t *bin, *hole, *sprinkle;
    int32_t *counts;
} plane_buf;

static void plane_buf_free(plane_buf *b)
{
    free(b->bin), free(b->hole), free(b->sprinkle), free(b->counts);
}

static samc_status plane_buf_alloc(plane_buf *b, int64_t n)
{
    b->bin = malloc((size_t)n);
    b->hole = calloc((size_t)n, 1);
    b->sprinkle = calloc((size_t)n, 1);
    b->counts = malloc((size_t)n * sizeof *b->counts);
    if (b->bin && b->hole && b->sprinkle && b->counts)
        return SAMC_OK;
    plane_buf_free(b);
    return samc_fail(NULL, SAMC_ERR_NOMEM, "fill_holes: plane buffers");
}

static samc_status plane_dims(const samc_tensor *m, int *H, int *W, int64_t *planes)
{
    if (m->ndim < 2 || m->shape[m->ndim - 2] < 1 || m->shape[m->ndim - 1] < 1 ||
        m->shape[m->ndim - 2] > INT_MAX || m->shape[m->ndim - 1] > INT_MAX)
        return samc_fail(NULL, SAMC_ERR_SHAPE, "fill_holes: masks must be (..., H, W)");
    *H = (int)m->shape[m->ndim - 2];
    *W = (int)m->shape[m->ndim - 1];
    *planes = samc_numel(m) / ((int64_t)*H * *W);
    return SAMC_OK;
}

/* One plane of postprocess_masks: both component sets come from the input
 * values, then the fills are written (a pixel is in at most one set). */
static samc_status fill_plane_image(float *m, int H, int W, float thr, double max_hole,
                                    double max_sprinkle, plane_buf *b)
{
    const int64_t n = (int64_t)H * W;
    samc_status st = SAMC_OK;
    if (max_hole > 0) {
        for (int64_t p = 0; p < n; p++)
            b->bin[p] = m[p] <= thr;
        st = small_components(b->bin, H, W, max_hole, b->counts, b->hole);
    }
    if (!st && max_sprinkle > 0) {
        for (int64_t p = 0; p < n; p++)
            b->bin[p] = m[p] > thr;
        st = small_components(b->bin, H, W, max_sprinkle, b->counts, b->sprinkle);
    }
    if (st)
        return st;
    /* torch.where(is_hole, self.mask_threshold + 10.0, masks): Python double sum, stored as
     * float32. */
    const float hole_val = (float)((double)thr + 10.0), sprinkle_val = (float)((double)thr - 10.0);
    for (int64_t p = 0; p < n; p++) {
        if (b->hole[p])
            m[p] = hole_val;
        else if (b->sprinkle[p])
            m[p] = sprinkle_val;
    }
    return SAMC_OK;
}

samc_status samc_fill_holes_image_predictor(samc_tensor *masks, float mask_threshold,
                                            double max_hole_area, double max_sprinkle_area)
{
    int H = 0, W = 0;
    int64_t planes = 0;
    samc_status st = plane_dims(masks, &H, &W, &planes);
    if (st || (max_hole_area <= 0 && max_sprinkle_area <= 0))
        return st;
    plane_buf b = {0};
    if ((st = plane_buf_alloc(&b, (int64_t)H * W)))
        return st;
    for (int64_t i = 0; i < planes && !st; i++) {
        memset(b.hole, 0, (size_t)H * W);
        memset(b.sprinkle, 0, (size_t)H * W);
        st = fill_plane_image(masks->data + i * H * W, H, W, mask_threshold, max_hole_area,
                              max_sprinkle_area, &b);
    }
    plane_buf_free(&b);
    return st;
}

samc_status samc_fill_holes_video(samc_tensor *masks, double max_area)
{
    if (!(max_area > 0))
        return samc_fail(NULL, SAMC_ERR_ARG,
                         "fill_holes_in_mask_scores: max_area must be positive");
    int H = 0, W = 0;
    int64_t planes = 0;
    samc_status st = plane_dims(masks, &H, &W, &planes);
    if (st)
        return st;
    plane_buf b = {0};
    if ((st = plane_buf_alloc(&b, (int64_t)H * W)))
        return st;
    const int64_t n = (int64_t)H * W;
    for (int64_t i = 0; i < planes && !st; i++) {
        float *m = masks->data + i * n;
        for (int64_t p = 0; p < n; p++)
            b.bin[p] = m[p] <= 0.0f; /* background: mask scores <= 0 */
        if (!(st = small_components(b.bin, H, W, max_area, b.counts, b.hole)))
            for (int64_t p = 0; p < n; p++)
                if (b.hole[p])
                    m[p] = 0.1f; /* torch.where(is_hole, 0.1, mask) in float32 */
    }
    plane_buf_free(&b);
    return st;
}

/* One plane of samc_fill_holes_sprinkles. */
static samc_status fill_plane_sprinkles(float *m, int H, int W, int max_area, plane_buf *b, int64_t *changed)
{
    const int64_t n = (int64_t)H * W;
    for (int64_t p = 0; p < n; p++)
        b->bin[p] = m[p] <= 0.0f; /* holes: background components */
    samc_status st = small_components(b->bin, H, W, max_area, b->counts, b->hole);
    for (int64_t p = 0; !st && p < n; p++)
        if (b->hole[p])
            m[p] = 0.1f, (*changed)++;
    int64_t fg = 0;
    for (int64_t p = 0; !st && p < n; p++)
        fg += b->bin[p] = m[p] > 0.0f;
    const int64_t thr = fg / 2 < max_area ? fg / 2 : max_area; /* floor_divide_(2).clamp_(max=max_area) */
    if (!st)
        st = small_components(b->bin, H, W, (double)thr, b->counts, b->sprinkle);
    for (int64_t p = 0; !st && p < n; p++)
        if (b->sprinkle[p])
            m[p] = -0.1f, (*changed)++;
    return st;
}

samc_status samc_fill_holes_sprinkles(samc_tensor *masks, int max_area, int64_t *changed)
{
    int64_t dummy = 0;
    changed = changed ? changed : &dummy;
    *changed = 0;
    int H = 0, W = 0;
    int64_t planes = 0;
    samc_status st = plane_dims(masks, &H, &W, &planes);
    if (st || max_area <= 0 || planes == 0)
        return st;
    plane_buf b = {0};
    if ((st = plane_buf_alloc(&b, (int64_t)H * W)))
        return st;
    for (int64_t i = 0; i < planes && !st; i++)
        st = fill_plane_sprinkles(masks->data + i * H * W, H, W, max_area, &b, changed);
    plane_buf_free(&b);
    return st;
}
