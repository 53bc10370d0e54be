/* SPDX-License-Identifier: Apache-2.0 */
/* records.h - weight records of the primitive layers every model family
 * shares, and the context a layer body runs in.
 *
 * Conventions
 *  - Tensors are contiguous float32 in the layout the official PyTorch code
 *    has at that point (Hiera's BHWC, NCHW, (B, tokens, C), (L, B, C)).
 *  - Outputs are allocated by the caller with the exact output shape; a body
 *    writes every element of them and never reallocates.
 *  - Weight records point into the weight store (core/io/weights.h); they are
 *    bound once at load by the state-dict walk (core/runtime/statedict.h)
 *    and are read-only afterwards, except that an implementation's `prepare`
 *    (core/runtime/impl.h) may attach a packed copy to a linear or conv
 *    record, once, in its own `prep` slot.
 *  - Linear weights are (out, in), y = x W^T + b. Conv2d weights are
 *    (cout, cin/groups, kh, kw). ConvTranspose2d weights are (cin, cout, k, k).
 *  - A body returns SAMC_OK or an error status with its message in ctx->err.
 */
#ifndef SAMC_CORE_NN_RECORDS_H
#define SAMC_CORE_NN_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/tensor.h"

/* Implementations that prepare weights get one slot each (core/runtime/impl.c). */
#define SAMC_PREP_SLOTS 4

/* ---- primitive weight records ------------------------------------------ */

typedef struct samc_linear {
    const float *w; /* (out, in) */
    const float *b; /* (out) or NULL */
    int in, out;
    const void *prep[SAMC_PREP_SLOTS]; /* packed copies, per preparing implementation */
} samc_linear;

typedef struct samc_norm { /* LayerNorm / LayerNorm2d over channels */
    const float *w, *b;    /* (dim) */
    int dim;
    float eps;             /* 1e-6 in Hiera and every LayerNorm2d, 1e-5 for nn.LayerNorm defaults */
} samc_norm;

typedef struct samc_conv2d {
    const float *w;        /* (cout, cin/groups, kh, kw) */
    const float *b;        /* (cout) or NULL */
    int cin, cout, kh, kw, stride, pad, groups;
    const void *prep[SAMC_PREP_SLOTS]; /* packed copies, per preparing implementation */
} samc_conv2d;

/* Output size of a Conv2d / MaxPool2d axis (floor mode). */
static inline int samc_conv2d_out_dim(int in, int k, int stride, int pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

typedef struct samc_conv_t2d { /* ConvTranspose2d with kernel == stride (no overlap) */
    const float *w;        /* (cin, cout, k, k) */
    const float *b;        /* (cout) */
    int cin, cout, k;
} samc_conv_t2d;

#define SAMC_MLP_MAX_LAYERS 4
typedef struct samc_mlp {  /* sam2_utils.MLP: Linear, act, ..., Linear (no act after last) */
    int num_layers;
    samc_linear layers[SAMC_MLP_MAX_LAYERS];
    bool sigmoid_output;
} samc_mlp;

/* position_encoding.PositionEmbeddingSine */
typedef struct samc_sine_pe {
    int num_pos_feats;     /* output channels (d) */
    float temperature;
    bool normalize;
    float scale;           /* 2*pi when the config says null */
} samc_sine_pe;

/* Multi-head attention projections (sam.transformer.Attention; also nn.MultiheadAttention
 * with its packed in_proj bound as three row views) (q/k/v projections to internal_dim, heads split head-major) */
typedef struct samc_attention {
    samc_linear q, k, v, out;
    int heads;
    int internal_dim;
} samc_attention;

/* ---- the context of a layer call --------------------------------------- */

typedef struct samc_ctx {
    /* Where a layer body writes its error message (samc_fail(ctx->err, ...));
     * the caller prefixes it with the layer's name. May be NULL. */
    samc_error *err;
    /* The prep slot of the implementation running the body: where its
     * prepared copies sit in linear/conv records' `prep` (-1: none). */
    int prep_slot;
    int num_threads;              /* fast/ only; ref ignores it. 0: OpenMP's default (OMP_NUM_THREADS) */
    /* fast/'s workspace, reused across calls (grown to the largest layer's
     * need, then no allocation in the hot path); released with scratch_free
     * when the exec is freed. Opaque to everything but fast/. */
    void *scratch;
    void (*scratch_free)(void *scratch);
    /* A whole-part body (core/runtime/exec.h, samc_layer_def.whole) reports
     * the part's inner parity points here: the row named `pattern` (as in
     * the part's rows: "layers.#"), instance `index`. Only set for such a
     * body; copying outputs to the host for it is needed only when
     * `tracing`. */
    void (*emit)(struct samc_ctx *ctx, const char *pattern, int index, int nslots, const char *const *slots,
                 const samc_tensor *const *t);
    /* The same for a row of another part a whole body covers (the part
     * instance `self` names it: a body that runs the prompt encoder with the
     * mask decoder reports "" of &tracker->prompt_encoder). */
    void (*emit_at)(struct samc_ctx *ctx, const void *self, const char *pattern, int index, int nslots,
                    const char *const *slots, const samc_tensor *const *t);
    bool tracing;
    void *emit_user;
    /* A device implementation's own state for this use of the model
     * (streams, library handles, activation buffers), made by its bodies on
     * first use and released with device_free when the exec is freed. The
     * CPU implementations leave it alone (fast/ keeps `scratch`). */
    void *device;
    void (*device_free)(void *device);
} samc_ctx;

#endif
