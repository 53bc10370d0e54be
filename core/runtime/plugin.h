/* SPDX-License-Identifier: Apache-2.0 */
/* plugin.h - implementations that live in a separately built shared object
 * (a plugin), loaded on first use of their name.
 *
 * The CUDA implementation (cuda/, docs/gpu.md) is one: libsamc and the
 * samc command never link CUDA; `--impl cuda` looks the name up in the
 * plugin table (core/runtime/impl_table.c), dlopens libsamc_cuda.so and
 * calls its one entry point:
 *
 *   samc_status samc_plugin_register(const samc_plugin_api *api, samc_error *err);
 *
 * which registers the plugin's implementation rows through the api and
 * nothing else; `api` stays valid for the life of the process, so the
 * plugin may keep the pointer. A plugin calls into libsamc only through this table (it is
 * linked with --no-undefined against its own libraries alone), so libsamc
 * exports no internals for it; the structures it shares with libsamc (the
 * records, samc_impl, samc_ctx, samc_tensor) are checked by `layout`.
 *
 * Where the plugin is looked for, first match wins:
 *   1. each directory of SAMC_PLUGIN_PATH (':'-separated);
 *   2. the directory of the library or program holding libsamc (an install
 *      puts libsamc_cuda.so next to libsamc.so; a build tree, next to samc);
 *   3. the dynamic loader's own search (LD_LIBRARY_PATH, the cache).
 * A plugin is loaded once per process and never unloaded.
 */
#ifndef SAMC_CORE_RUNTIME_PLUGIN_H
#define SAMC_CORE_RUNTIME_PLUGIN_H

#include <stdint.h>

#include "core/models/sam2/hiera_geometry.h"
#include "core/models/tracker/tracker.h"
#include "core/nn/resize_bilinear.h"
#include "core/runtime/impl.h"

/* Raised on any change of the table below or of its meaning. */
#define SAMC_PLUGIN_ABI 1

/* The sizes of the structures a plugin shares with libsamc, folded into one
 * number as the headers it was compiled with have them: a plugin built
 * against other headers is refused with a message instead of reading
 * fields at the wrong offsets. */
#define SAMC_PLUGIN_LAYOUT_OF(fold)                                                                           \
    fold(samc_tensor) fold(samc_error) fold(samc_ctx) fold(samc_impl) fold(samc_linear) fold(samc_conv2d)     \
        fold(samc_norm) fold(samc_mlp) fold(samc_attention) fold(samc_hiera_block) fold(samc_fpn_neck)        \
            fold(samc_sam2_image_encoder) fold(samc_hiera_geom) fold(samc_aa_taps) fold(samc_lin_tap)          \
                fold(samc_prompt_encoder) fold(samc_mask_decoder) fold(samc_frame_features)
static inline uint64_t samc_plugin_layout(void)
{
    uint64_t h = 1469598103934665603ull;
#define SAMC_FOLD(type) h = (h ^ (uint64_t)sizeof(type)) * 1099511628211ull;
    SAMC_PLUGIN_LAYOUT_OF(SAMC_FOLD)
#undef SAMC_FOLD
    return h;
}

typedef struct samc_plugin_api {
    int abi;              /* SAMC_PLUGIN_ABI of the libsamc loading the plugin */
    uint64_t layout;      /* samc_plugin_layout() of that libsamc */
    /* the registry (core/runtime/impl.h) */
    samc_status (*impl_register)(const samc_impl *impl, samc_error *err);
    void (*impl_unregister)(const samc_impl *impl);
    /* Numerics every implementation shares (core/nn, core/models): a
     * plugin calls them rather than keeping copies. */
    samc_status (*hiera_geometry)(samc_error *err, const samc_hiera_block *blk, const samc_tensor *x,
                                  samc_hiera_geom *g);
    samc_status (*sine_pe_fill)(const samc_sine_pe *pe, int H, int W, float *out);
    void (*fourier_pe)(const float *gauss, int F, float u, float v, float *out);
    void (*prompt_sparse_token)(const samc_prompt_encoder *pe, const float *coords, const int32_t *labels, int n,
                                const float *boxes, int b, int i, float *out);
    void (*bilinear_taps)(int in, int out, samc_lin_tap *t);
    samc_status (*aa_taps_make)(int in, int out, samc_aa_taps *t);
    void (*aa_taps_free)(samc_aa_taps *t);
} samc_plugin_api;

typedef samc_status samc_plugin_register_fn(const samc_plugin_api *api, samc_error *err);
#define SAMC_PLUGIN_ENTRY "samc_plugin_register"
/* What a plugin defines (libsamc finds it with dlsym, never links it). */
samc_plugin_register_fn samc_plugin_register;

/* The plugin library ("samc_cuda") that provides implementation `name`, or
 * NULL (impl_table.c). */
const char *samc__plugin_of(const char *name);
/* The i-th implementation name any plugin provides (NULL past the end). */
const char *samc__plugin_impl_name(int i);
/* Load lib<lib>.so once (thread-safe) and run its entry point; the
 * message says where it was looked for and why it failed. */
samc_status samc__plugin_load(const char *lib, samc_error *err);

#endif
