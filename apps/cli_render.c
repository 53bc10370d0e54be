/* SPDX-License-Identifier: Apache-2.0 */
/* cli_render.c - overlays: masks blended in their own colour, prompt markers. */
#include <math.h>

#include "cli.h"

const uint8_t cli_palette[8][3] = {{30, 144, 255}, {255, 64, 64}, {64, 200, 64}, {255, 200, 0},
                                   {200, 0, 255},  {0, 220, 220}, {255, 128, 0}, {128, 128, 255}};

void cli_blend_mask(uint8_t *rgb, int w, int h, const float *logits, const uint8_t color[3])
{
    const int64_t hw = (int64_t)w * h;
    for (int64_t i = 0; i < hw; i++)
        if (logits[i] > 0.0f)
            for (int c = 0; c < 3; c++)
                rgb[3 * i + c] = (uint8_t)((2 * rgb[3 * i + c] + 3 * color[c]) / 5);
}

static void put(uint8_t *rgb, int w, int h, int x, int y, const uint8_t c[3])
{
    if (x >= 0 && y >= 0 && x < w && y < h)
        for (int k = 0; k < 3; k++)
            rgb[3 * ((int64_t)y * w + x) + k] = c[k];
}

/* Marker size: readable on 100-pixel frames and on 4K images. */
static int marker_radius(int w, int h)
{
    const int m = (w < h ? w : h) / 60;
    return m < 2 ? 2 : m;
}

void cli_draw_points(uint8_t *rgb, int w, int h, const float *xy, const int32_t *labels, int n)
{
    static const uint8_t white[3] = {255, 255, 255}, fg[3] = {0, 200, 0}, bg[3] = {230, 0, 0};
    const int r = marker_radius(w, h);
    for (int i = 0; i < n; i++) {
        const int cx = (int)lroundf(xy[2 * i]), cy = (int)lroundf(xy[2 * i + 1]);
        for (int dy = -r - 1; dy <= r + 1; dy++)
            for (int dx = -r - 1; dx <= r + 1; dx++) {
                const int d2 = dx * dx + dy * dy;
                if (d2 <= r * r)
                    put(rgb, w, h, cx + dx, cy + dy, labels[i] == 0 ? bg : fg);
                else if (d2 <= (r + 1) * (r + 1))
                    put(rgb, w, h, cx + dx, cy + dy, white);
            }
    }
}

void cli_draw_box(uint8_t *rgb, int w, int h, const float *box, const uint8_t color[3])
{
    const int x0 = (int)lroundf(box[0]), y0 = (int)lroundf(box[1]);
    const int x1 = (int)lroundf(box[2]), y1 = (int)lroundf(box[3]);
    const int t = marker_radius(w, h) / 2 + 1;
    for (int k = 0; k < t; k++) {
        for (int x = x0; x <= x1; x++)
            put(rgb, w, h, x, y0 + k, color), put(rgb, w, h, x, y1 - k, color);
        for (int y = y0; y <= y1; y++)
            put(rgb, w, h, x0 + k, y, color), put(rgb, w, h, x1 - k, y, color);
    }
}
