/* SPDX-License-Identifier: Apache-2.0 */
/* cli_render.c - overlays: masks blended in their own colour with their
 * contour drawn, prompt markers. */
#include <math.h>

#include "cli.h"

static const uint8_t palette[8][3] = {{30, 144, 255}, {255, 64, 64}, {64, 200, 64}, {255, 200, 0},
                                      {200, 0, 255},  {0, 220, 220}, {255, 128, 0}, {128, 128, 255}};

/* The first eight from a hand-picked palette, then hues a golden angle
 * apart, with saturation and value stepped by the R2 sequence's constants
 * (HSV): the first thousand masks of an overlay all differ
 * (tests/test_cli_outputs.c), neighbours in index far apart in hue. */
void cli_mask_color(int64_t k, uint8_t out[3])
{
    if (k >= 0 && k < 8) {
        for (int c = 0; c < 3; c++)
            out[c] = palette[k][c];
        return;
    }
    const double hue = fmod(0.6180339887498949 * (double)k, 1.0) * 6.0;
    const double s = 0.55 + 0.4 * fmod(0.7548776662466927 * (double)k, 1.0);
    const double v = 0.75 + 0.25 * fmod(0.5698402909980532 * (double)k, 1.0);
    const int sector = (int)hue;
    const double f = hue - sector, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    const double rgb[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
    for (int c = 0; c < 3; c++)
        out[c] = (uint8_t)lround(255.0 * rgb[sector % 6][c]);
}

static bool inside(const float *logits, const uint8_t *bits, int64_t i)
{
    return logits ? logits[i] > 0.0f : bits[i] != 0;
}

/* A mask pixel with a pixel outside the mask (or the image edge) within
 * t pixels along a row or a column. */
static bool on_contour(const float *logits, const uint8_t *bits, int w, int h, int x, int y, int t)
{
    for (int d = 1; d <= t; d++) {
        if (x - d < 0 || x + d >= w || y - d < 0 || y + d >= h)
            return true;
        const int64_t i = (int64_t)y * w + x;
        if (!inside(logits, bits, i - d) || !inside(logits, bits, i + d) || !inside(logits, bits, i - (int64_t)d * w) ||
            !inside(logits, bits, i + (int64_t)d * w))
            return true;
    }
    return false;
}

/* The mask (logits > 0, or bits != 0) blended 3/5 in its colour, its
 * contour in the colour itself: overlapping masks stay told apart. */
static void overlay(uint8_t *rgb, int w, int h, const float *logits, const uint8_t *bits, const uint8_t color[3])
{
    const int t = (w < h ? w : h) / 300 + 1; /* 1 px up to 300 px, 2 on 600, ... */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int64_t i = (int64_t)y * w + x;
            if (!inside(logits, bits, i))
                continue;
            const bool edge = on_contour(logits, bits, w, h, x, y, t);
            for (int c = 0; c < 3; c++)
                rgb[3 * i + c] = edge ? color[c] : (uint8_t)((2 * rgb[3 * i + c] + 3 * color[c]) / 5);
        }
}

void cli_blend_mask(uint8_t *rgb, int w, int h, const float *logits, const uint8_t color[3])
{
    overlay(rgb, w, h, logits, NULL, color);
}

void cli_blend_bits(uint8_t *rgb, int w, int h, const uint8_t *bits, const uint8_t color[3])
{
    overlay(rgb, w, h, NULL, bits, color);
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
