/* SPDX-License-Identifier: Apache-2.0 */
#include "prims.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

void samc_ref_linear(const float *x, int64_t rows, const samc_linear *l, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * l->in;
        float *yr = y + r * l->out;
        for (int o = 0; o < l->out; o++) {
            const float *w = l->w + (int64_t)o * l->in;
            double acc = l->b ? l->b[o] : 0.0;
            for (int i = 0; i < l->in; i++)
                acc += (double)xr[i] * w[i];
            yr[o] = (float)acc;
        }
    }
}

void samc_ref_layer_norm_rows(const float *x, int64_t rows, const samc_norm *n, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n->dim;
        float *yr = y + r * n->dim;
        double mean = 0, var = 0;
        for (int i = 0; i < n->dim; i++)
            mean += xr[i];
        mean /= n->dim;
        for (int i = 0; i < n->dim; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        var /= n->dim;
        double rstd = 1.0 / sqrt(var + (double)n->eps);
        for (int i = 0; i < n->dim; i++)
            yr[i] = (float)((xr[i] - mean) * rstd * n->w[i] + n->b[i]);
    }
}

void samc_ref_layer_norm2d(const float *x, int B, int H, int W, const samc_norm *n, float *y)
{
    const int64_t hw = (int64_t)H * W, C = n->dim;
    for (int b = 0; b < B; b++) {
        const float *xb = x + b * C * hw;
        float *yb = y + b * C * hw;
        for (int64_t p = 0; p < hw; p++) {
            double mean = 0, var = 0;
            for (int64_t c = 0; c < C; c++)
                mean += xb[c * hw + p];
            mean /= C;
            for (int64_t c = 0; c < C; c++) {
                double d = xb[c * hw + p] - mean;
                var += d * d;
            }
            var /= C;
            double rstd = 1.0 / sqrt(var + (double)n->eps);
            for (int64_t c = 0; c < C; c++)
                yb[c * hw + p] = (float)((xb[c * hw + p] - mean) * rstd * n->w[c] + n->b[c]);
        }
    }
}

void samc_ref_gelu(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] * M_SQRT1_2)));
}

void samc_ref_relu(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void samc_ref_sigmoid(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
}

samc_status samc_ref_attention(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv,
                               int Lq, int Lk, int d, int dv, float scale, const samc_ref_attn_opts *o, float *out,
                               int64_t ldo)
{
    double *p = malloc((size_t)(Lk > 0 ? Lk : 1) * sizeof *p);
    if (!p)
        return samc_fail(NULL, SAMC_ERR_NOMEM, "attention row");
    for (int i = 0; i < Lq; i++) {
        const float *qi = q + (int64_t)i * ldq;
        double mx = -INFINITY;
        for (int j = 0; j < Lk; j++) {
            const float *kj = k + (int64_t)j * ldk;
            double acc = 0;
            for (int c = 0; c < d; c++)
                acc += (double)qi[c] * kj[c];
            double s = o->f32_probs ? (double)(float)(acc * scale) : acc * scale;
            if (o->bias)
                s = o->f32_probs ? (double)(float)(s + o->bias[(int64_t)i * Lk + j]) : s + o->bias[(int64_t)i * Lk + j];
            if (o->kpm && o->kpm[j] != 0.0f)
                s = -INFINITY;
            p[j] = s;
            mx = s > mx ? s : mx;
        }
        double sum = 0;
        for (int j = 0; j < Lk; j++)
            sum += (p[j] = exp(p[j] - mx));
        double norm = sum; /* the weighted sum is normalised at the end */
        if (o->f32_probs) { /* or the probabilities first, stored as float32 */
            for (int j = 0; j < Lk; j++)
                p[j] = (float)(p[j] / sum);
            norm = 1.0;
        }
        float *oi = out + (int64_t)i * ldo;
        for (int c = 0; c < dv; c++) {
            double acc = 0;
            for (int j = 0; j < Lk; j++)
                acc += p[j] * v[(int64_t)j * ldv + c];
            oi[c] = (float)(acc / norm);
        }
    }
    free(p);
    return SAMC_OK;
}


void samc_ref_conv2d_nchw(const float *x, int B, int H, int W, const samc_conv2d *c, float *y)
{
    const int Ho = samc_conv2d_out_dim(H, c->kh, c->stride, c->pad);
    const int Wo = samc_conv2d_out_dim(W, c->kw, c->stride, c->pad);
    const int cin_g = c->cin / c->groups, cout_g = c->cout / c->groups;
    for (int b = 0; b < B; b++)
        for (int o = 0; o < c->cout; o++) {
            const int g = o / cout_g;
            const float *wo = c->w + (int64_t)o * cin_g * c->kh * c->kw;
            float *yo = y + ((int64_t)b * c->cout + o) * Ho * Wo;
            for (int oy = 0; oy < Ho; oy++)
                for (int ox = 0; ox < Wo; ox++) {
                    double acc = c->b ? c->b[o] : 0.0;
                    for (int i = 0; i < cin_g; i++) {
                        const float *xi = x + ((int64_t)b * c->cin + g * cin_g + i) * H * W;
                        const float *wi = wo + (int64_t)i * c->kh * c->kw;
                        for (int ky = 0; ky < c->kh; ky++) {
                            int iy = oy * c->stride - c->pad + ky;
                            if (iy < 0 || iy >= H)
                                continue;
                            for (int kx = 0; kx < c->kw; kx++) {
                                int ix = ox * c->stride - c->pad + kx;
                                if (ix < 0 || ix >= W)
                                    continue;
                                acc += (double)xi[(int64_t)iy * W + ix] * wi[ky * c->kw + kx];
                            }
                        }
                    }
                    yo[(int64_t)oy * Wo + ox] = (float)acc;
                }
        }
}

void samc_ref_conv_t2d(const float *x, int B, int H, int W, const samc_conv_t2d *c, float *y)
{
    const int k = c->k, Ho = H * k, Wo = W * k;
    for (int b = 0; b < B; b++)
        for (int o = 0; o < c->cout; o++) {
            float *yo = y + ((int64_t)b * c->cout + o) * Ho * Wo;
            for (int iy = 0; iy < H; iy++)
                for (int ix = 0; ix < W; ix++)
                    for (int dy = 0; dy < k; dy++)
                        for (int dx = 0; dx < k; dx++) {
                            double acc = c->b ? c->b[o] : 0.0;
                            for (int i = 0; i < c->cin; i++)
                                acc += (double)x[((int64_t)b * c->cin + i) * H * W + (int64_t)iy * W + ix] *
                                       c->w[(((int64_t)i * c->cout + o) * k + dy) * k + dx];
                            yo[(int64_t)(iy * k + dy) * Wo + ix * k + dx] = (float)acc;
                        }
        }
}

samc_status samc_ref_mlp_rows(const float *x, int64_t rows, const samc_mlp *m, float *y)
{
    int widest = 0;
    for (int l = 0; l < m->num_layers; l++)
        widest = m->layers[l].out > widest ? m->layers[l].out : widest;
    float *a = malloc((size_t)(rows * widest) * sizeof *a);
    float *b = malloc((size_t)(rows * widest) * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return samc_fail(NULL, SAMC_ERR_NOMEM, "mlp buffers");
    }
    const float *in = x;
    for (int l = 0; l < m->num_layers; l++) {
        const samc_linear *lin = &m->layers[l];
        float *dst = (l == m->num_layers - 1) ? y : (l % 2 ? b : a);
        samc_ref_linear(in, rows, lin, dst);
        if (l < m->num_layers - 1)
            samc_ref_relu(dst, rows * lin->out);
        in = dst;
    }
    if (m->sigmoid_output)
        samc_ref_sigmoid(y, rows * m->layers[m->num_layers - 1].out);
    free(a);
    free(b);
    return SAMC_OK;
}
