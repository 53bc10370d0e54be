/* SPDX-License-Identifier: Apache-2.0 */
/* test_resize.c - core/nn/resize_bilinear (plain and antialiased, bit for bit
 * with torch 1.13's CPU F.interpolate), core/nn/connected_components (labels,
 * areas, hole and sprinkle filling) and core/models/tracker/mask_select (MaskDecoder.forward's
 * selection, including the dynamic multimask fallback).
 *
 * The antialiased cases also run fast/resize.c's threaded version (1 and 3
 * threads), which must give the same bits.
 *
 * Inputs come from an integer hash (hval) implemented the same way here and
 * in this script, which printed the expected values (small outputs whole,
 * large ones as 8 samples at ((j*7919*104729) % n) plus a digest of all bits):
 *
 *   /usr/bin/python3 resize_gen.py
 *
 * # Expected values for tests/test_resize.c (run with Debian's /usr/bin/python3, torch 1.13).
 * import numpy as np, torch, torch.nn.functional as F
 * def hval(n, seed):  # same integer hash as hval() in the test
 *     i = np.arange(n, dtype=np.uint64)
 *     u = (i * 2654435761 + seed * 2246822519) & 0xffffffff
 *     u ^= u >> 13; u = (u * 3266489917) & 0xffffffff; u ^= u >> 16
 *     return ((u >> 8).astype(np.float64) / 16777216.0).astype(np.float32)
 * def run(n, c, h, w, H, W, aa, seed):
 *     x = torch.from_numpy(hval(n * c * h * w, seed).reshape(n, c, h, w))
 *     return F.interpolate(x, (H, W), mode="bilinear", align_corners=False, antialias=aa).numpy().ravel()
 * def hx(v):  # shortest exact hex literal
 *     m, e = float(v).hex().split("p"); m = m.rstrip("0").rstrip(".")
 *     return m + "p" + e + "f"
 * def digest(y):  # order-sensitive hash of the float bits, mod 2^64
 *     b = y.view(np.uint32).astype(np.uint64); i = np.arange(b.size, dtype=np.uint64)
 *     return int(((b * (i * 2 + 1)) & 0xffffffffffffffff).sum(dtype=np.uint64))
 * small = [(1, 2, 4, 3, 7, 5, False, 1), (1, 2, 7, 5, 3, 2, False, 2), (2, 1, 5, 4, 3, 7, False, 3),
 *          (1, 2, 4, 3, 7, 5, True, 4), (1, 1, 13, 11, 4, 3, True, 5), (1, 2, 9, 6, 5, 8, True, 6)]
 * for k, case in enumerate(small):
 *     y = run(*case)
 *     print("static const float k_small%d[%d] = {" % (k, y.size) + ", ".join(hx(v) for v in y) + "};")
 * big = [(1, 2, 300, 200, 128, 128, True, 7), (1, 2, 90, 70, 128, 128, True, 8),
 *        (1, 3, 1200, 900, 1024, 1024, True, 9), (1, 2, 1024, 1024, 256, 256, True, 10),
 *        (1, 3, 256, 256, 1000, 700, False, 11), (2, 1, 256, 256, 1000, 700, False, 12),
 *        (1, 3, 256, 256, 100, 61, False, 13)]
 * for case in big:
 *     y = run(*case); idx = [(j * 7919 * 104729) % y.size for j in range(8)]
 *     print("    {%s, 0x%016xull, {%s}}," % (", ".join(str(int(v)) for v in case), digest(y),
 *           ", ".join(hx(y[j]) for j in idx)))
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nn/connected_components.h"
#include "core/models/tracker/mask_select.h"
#include "core/nn/resize_bilinear.h"
#include "fast/fast.h"

/* clang-format off */
static const float k_small0[70] = {0x1.81b46p-2f, 0x1.4a360ep-2f, 0x1.edf126p-3f, 0x1.52b8dap-3f, 0x1.d67cp-4f, 0x1.f663f6p-2f, 0x1.7161ap-2f, 0x1.53bc42p-3f, 0x1.8abf5p-3f, 0x1.af6c04p-3f, 0x1.588b4p-1f, 0x1.b00dcp-2f, 0x1.740508p-5f, 0x1.e4634p-3f, 0x1.74a79cp-2f, 0x1.725fb8p-2f, 0x1.2defc4p-2f, 0x1.8e8faap-3f, 0x1.7cb6a6p-2f, 0x1.f5ab2cp-2f, 0x1.62c93ep-4f, 0x1.abfbdcp-3f, 0x1.91ef5ap-2f, 0x1.fdac42p-2f, 0x1.22bfc2p-1f, 0x1.1dd7aep-1f, 0x1.33057ep-1f, 0x1.52ca34p-1f, 0x1.de030cp-2f, 0x1.58f77cp-2f, 0x1.b4c6bcp-1f, 0x1.b0098ep-1f, 0x1.a8edc4p-1f, 0x1.ca394cp-2f, 0x1.8a44f8p-3f, 0x1.361fc4p-1f, 0x1.e802cep-2f, 0x1.21a7bap-2f, 0x1.315fecp-1f, 0x1.9c67f4p-1f, 0x1.164a66p-1f, 0x1.a8785p-2f, 0x1.c49b36p-3f, 0x1.327796p-1f, 0x1.b3581ap-1f, 0x1.c6b6d6p-2f, 0x1.42cdf2p-2f, 0x1.f3c27ap-4f, 0x1.34371p-1f, 0x1.d80b8cp-1f, 0x1.f9c642p-2f, 0x1.f08e78p-2f, 0x1.e2bac6p-2f, 0x1.4259a6p-1f, 0x1.785724p-1f, 0x1.0ffbe2p-1f, 0x1.475cap-1f, 0x1.9a6dbap-1f, 0x1.495d0ap-1f, 0x1.1351e8p-1f, 0x1.532a8ap-2f, 0x1.ac612p-2f, 0x1.19198p-1f, 0x1.1222f6p-1f, 0x1.0d7e98p-1f, 0x1.a65498p-3f, 0x1.1eea14p-2f, 0x1.9089cp-2f, 0x1.df3d56p-2f, 0x1.09da86p-1f};
static const float k_small1[12] = {0x1.24743ep-2f, 0x1.e722f6p-2f, 0x1.a136fcp-1f, 0x1.00163cp-1f, 0x1.4a5f14p-1f, 0x1.0c7268p-1f, 0x1.88d55ep-1f, 0x1.10813ap-1f, 0x1.b33ca8p-1f, 0x1.2aca7p-1f, 0x1.5f3b12p-3f, 0x1.0a81f8p-1f};
static const float k_small2[42] = {0x1.2c3abep-1f, 0x1.633cf2p-1f, 0x1.bb4078p-1f, 0x1.69ce18p-1f, 0x1.04a666p-1f, 0x1.7dfeaap-2f, 0x1.26eddap-2f, 0x1.0f666p-1f, 0x1.04e77p-1f, 0x1.e838bp-2f, 0x1.761b2p-2f, 0x1.f7ae9cp-3f, 0x1.321dcp-3f, 0x1.6d467ap-4f, 0x1.37ed42p-1f, 0x1.298752p-1f, 0x1.127dd4p-1f, 0x1.1c3dc6p-1f, 0x1.31094cp-1f, 0x1.725c52p-1f, 0x1.9b3036p-1f, 0x1.53bb28p-2f, 0x1.ba15e2p-2f, 0x1.2eed2p-1f, 0x1.a5ac9p-2f, 0x1.fe3948p-3f, 0x1.17e75ap-1f, 0x1.771efcp-1f, 0x1.ea93d4p-1f, 0x1.8cb0f2p-1f, 0x1.ecf24ep-2f, 0x1.154bp-2f, 0x1.2d160ep-3f, 0x1.18aae4p-1f, 0x1.990a3cp-1f, 0x1.966e82p-3f, 0x1.9ccaccp-2f, 0x1.760ea2p-1f, 0x1.40ac2ap-1f, 0x1.f24d72p-2f, 0x1.0fb80ep-1f, 0x1.1dd2e4p-1f};
static const float k_small3[70] = {0x1.8263c4p-2f, 0x1.35444p-1f, 0x1.e35fccp-1f, 0x1.8c429ep-1f, 0x1.522f2ep-1f, 0x1.49dbfep-2f, 0x1.25d134p-1f, 0x1.e726p-1f, 0x1.a9a366p-1f, 0x1.80a1acp-1f, 0x1.ded254p-3f, 0x1.0d192p-1f, 0x1.ed2fecp-1f, 0x1.d8a4a4p-1f, 0x1.caf276p-1f, 0x1.ef7114p-2f, 0x1.40905ap-1f, 0x1.add41p-1f, 0x1.65e3a8p-1f, 0x1.35ee1p-1f, 0x1.6488b2p-1f, 0x1.5fdd2ap-1f, 0x1.58dbdep-1f, 0x1.cf40a4p-2f, 0x1.384698p-2f, 0x1.3b6212p-2f, 0x1.4ba3d6p-2f, 0x1.64068p-2f, 0x1.751d76p-2f, 0x1.80821ap-2f, 0x1.0b521p-4f, 0x1.8c573ep-4f, 0x1.26ef8p-3f, 0x1.3cc77cp-2f, 0x1.ada74cp-2f, 0x1.7f778ap-1f, 0x1.a158b8p-1f, 0x1.d42a7ep-1f, 0x1.b309acp-2f, 0x1.935e1p-4f, 0x1.7929dp-1f, 0x1.712f9p-1f, 0x1.65382ep-1f, 0x1.66de6p-2f, 0x1.e749aap-4f, 0x1.6f13dcp-1f, 0x1.2420eap-1f, 0x1.676902p-2f, 0x1.d9ff04p-3f, 0x1.36c7b4p-3f, 0x1.f8ab8p-2f, 0x1.1b0442p-1f, 0x1.490a06p-1f, 0x1.b2e456p-2f, 0x1.1e19e2p-2f, 0x1.09e998p-2f, 0x1.154198p-1f, 0x1.edb4cap-1f, 0x1.44febap-1f, 0x1.a90abcp-2f, 0x1.57209p-3f, 0x1.c605fp-2f, 0x1.b6db34p-1f, 0x1.4ce078p-1f, 0x1.063952p-1f, 0x1.c261ep-4f, 0x1.8737a8p-2f, 0x1.949336p-1f, 0x1.51cd8ep-1f, 0x1.2549cap-1f};
static const float k_small4[12] = {0x1.9e0bdep-2f, 0x1.01bf78p-1f, 0x1.04e73ap-1f, 0x1.e47f52p-2f, 0x1.044c2p-1f, 0x1.1ca85ap-1f, 0x1.cb1262p-2f, 0x1.045948p-1f, 0x1.05e60cp-1f, 0x1.185e4ap-1f, 0x1.0dd3fp-1f, 0x1.29c134p-1f};
static const float k_small5[80] = {0x1.f9cbfep-3f, 0x1.8a79acp-2f, 0x1.0fb98p-1f, 0x1.282f1ap-1f, 0x1.eb3444p-3f, 0x1.ea25ap-2f, 0x1.3756fp-1f, 0x1.0e9d14p-1f, 0x1.5de518p-1f, 0x1.3336fcp-1f, 0x1.37dee2p-1f, 0x1.58ff2cp-1f, 0x1.e23a7ap-2f, 0x1.3be688p-1f, 0x1.5058c6p-1f, 0x1.1652e2p-1f, 0x1.58d4c6p-1f, 0x1.d35bp-2f, 0x1.808dc4p-2f, 0x1.cc69c2p-2f, 0x1.99beb2p-2f, 0x1.cd609p-2f, 0x1.dde9eep-2f, 0x1.bd65d2p-2f, 0x1.bfce54p-2f, 0x1.283dd2p-1f, 0x1.315fcep-1f, 0x1.01a33p-1f, 0x1.39eb8cp-1f, 0x1.9c8f76p-1f, 0x1.970376p-1f, 0x1.348242p-1f, 0x1.c8f44cp-2f, 0x1.11c524p-1f, 0x1.5520c6p-1f, 0x1.84003ep-1f, 0x1.0b6aaep-1f, 0x1.0fb6e4p-1f, 0x1.5e13b6p-1f, 0x1.c84946p-1f, 0x1.6e028cp-2f, 0x1.8c95b2p-2f, 0x1.eb4da4p-2f, 0x1.2ee32ap-1f, 0x1.086ef8p-1f, 0x1.741486p-1f, 0x1.67f69p-1f, 0x1.c36cc2p-2f, 0x1.70adfap-2f, 0x1.7c0268p-2f, 0x1.9b8112p-2f, 0x1.d68c22p-2f, 0x1.20eb42p-1f, 0x1.9e05a6p-1f, 0x1.c44768p-1f, 0x1.8fe0d8p-1f, 0x1.60dfe6p-2f, 0x1.ec9e14p-2f, 0x1.478a2p-1f, 0x1.801b54p-1f, 0x1.4a6e3p-1f, 0x1.6ec932p-1f, 0x1.3a2756p-1f, 0x1.6a436p-2f, 0x1.7b417ap-1f, 0x1.48bf1p-1f, 0x1.512a0cp-1f, 0x1.784e4p-1f, 0x1.bfd628p-2f, 0x1.327d76p-2f, 0x1.d6b104p-3f, 0x1.9ea518p-3f, 0x1.18f7a6p-1f, 0x1.3f2adcp-1f, 0x1.6cd34cp-1f, 0x1.676e34p-1f, 0x1.8eba5p-3f, 0x1.b2051cp-2f, 0x1.c6f488p-2f, 0x1.513772p-3f};
typedef struct resize_case {
    int n, c, h, w, H, W, aa, seed;
    uint64_t digest;
    float sample[8];
} resize_case;
static const resize_case k_big[] = {
    {1, 2, 300, 200, 128, 128, 1, 7, 0x0fbd72ae7af2a3c3ull, {0x1.6d0904p-2f, 0x1.db685ap-2f, 0x1.47eacp-1f, 0x1.2bc104p-1f, 0x1.4b9a56p-2f, 0x1.0db868p-1f, 0x1.85007p-2f, 0x1.cfb966p-2f}},
    {1, 2, 90, 70, 128, 128, 1, 8, 0x0fb9a778aa2048dcull, {0x1.8263c6p-1f, 0x1.401b88p-2f, 0x1.6adec6p-1f, 0x1.f8a5f4p-2f, 0x1.5d1f98p-2f, 0x1.6cb98cp-1f, 0x1.44bc96p-1f, 0x1.2c896p-1f}},
    {1, 3, 1200, 900, 1024, 1024, 1, 9, 0x3e16c5b49afd6ca5ull, {0x1.1dd5d2p-2f, 0x1.d51ffp-2f, 0x1.770b5cp-2f, 0x1.eb9278p-2f, 0x1.6a615ap-1f, 0x1.50dc54p-1f, 0x1.6d71aap-1f, 0x1.639d08p-1f}},
    {1, 2, 1024, 1024, 256, 256, 1, 10, 0xfbec33f6246c62caull, {0x1.269854p-1f, 0x1.37da58p-1f, 0x1.0be98ep-1f, 0x1.e5059cp-2f, 0x1.ef90fcp-2f, 0x1.f40da2p-2f, 0x1.036cdep-1f, 0x1.d9bac6p-2f}},
    {1, 3, 256, 256, 1000, 700, 0, 11, 0x4b5403af416595fbull, {0x1.0c1d66p-1f, 0x1.178a9ap-1f, 0x1.b09d06p-3f, 0x1.27b87ap-1f, 0x1.b8c30ap-1f, 0x1.5bd782p-1f, 0x1.388058p-3f, 0x1.86fe0cp-2f}},
    {2, 1, 256, 256, 1000, 700, 0, 12, 0x214b066b77f192c8ull, {0x1.cc263p-3f, 0x1.a67bc8p-1f, 0x1.c428acp-3f, 0x1.002bc4p-1f, 0x1.31306ep-1f, 0x1.5581ccp-1f, 0x1.503f5cp-1f, 0x1.007ed2p-1f}},
    {1, 3, 256, 256, 100, 61, 0, 13, 0x04e796d41bb99852ull, {0x1.7a591ep-2f, 0x1.174a7ep-1f, 0x1.e96416p-2f, 0x1.49650ap-2f, 0x1.8ef252p-2f, 0x1.32b29ap-2f, 0x1.4ab732p-1f, 0x1.78619p-1f}},
};
/* clang-format on */

static float hval(uint32_t i, uint32_t seed)
{
    uint32_t u = i * 2654435761u + seed * 2246822519u;
    u ^= u >> 13;
    u *= 3266489917u;
    u ^= u >> 16;
    return (float)(u >> 8) / 16777216.0f;
}

static float *hvals(int64_t n, uint32_t seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = hval((uint32_t)i, seed);
    return p;
}

/* digest() of the script: sum of bits * (2i + 1) mod 2^64. */
static uint64_t digest(const float *y, int64_t n)
{
    uint64_t d = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &y[i], sizeof b);
        d += (uint64_t)b * (uint64_t)(2 * i + 1);
    }
    return d;
}


static float *run_resize(const resize_case *rc)
{
    const int64_t planes = (int64_t)rc->n * rc->c;
    float *x = hvals(planes * rc->h * rc->w, (uint32_t)rc->seed);
    float *y = malloc((size_t)(planes * rc->H * rc->W) * sizeof *y);
    assert_non_null(y);
    samc_status st = rc->aa ? samc_resize_bilinear_aa(x, planes, rc->h, rc->w, rc->H, rc->W, y)
                            : samc_resize_bilinear(x, rc->n, rc->c, rc->h, rc->w, rc->H, rc->W, y);
    assert_int_equal(st, SAMC_OK);
    for (int nt = 1; rc->aa && nt <= 3; nt += 2) { /* fast/resize.c: the same bits */
        const size_t ns = samc__fast_resize_aa_scratch(planes, rc->h, rc->w, rc->H, rc->W);
        float *yf = malloc((size_t)(planes * rc->H * rc->W) * sizeof *yf), *tmp = malloc((ns ? ns : 1) * sizeof *tmp);
        assert_non_null(yf), assert_non_null(tmp);
        assert_int_equal(samc__fast_resize_aa(nt, x, planes, rc->h, rc->w, rc->H, rc->W, yf, tmp), SAMC_OK);
        assert_memory_equal(y, yf, (size_t)(planes * rc->H * rc->W) * sizeof *y);
        free(yf), free(tmp);
    }
    free(x);
    return y;
}

/* Whole outputs, bit for bit. */
static void test_resize_small(void **state)
{
    (void)state;
    static const resize_case cases[] = {
        {1, 2, 4, 3, 7, 5, 0, 1, 0, {0}}, {1, 2, 7, 5, 3, 2, 0, 2, 0, {0}}, {2, 1, 5, 4, 3, 7, 0, 3, 0, {0}},
        {1, 2, 4, 3, 7, 5, 1, 4, 0, {0}}, {1, 1, 13, 11, 4, 3, 1, 5, 0, {0}}, {1, 2, 9, 6, 5, 8, 1, 6, 0, {0}},
    };
    static const float *const want[] = {k_small0, k_small1, k_small2, k_small3, k_small4, k_small5};
    for (int k = 0; k < 6; k++) {
        const resize_case *rc = &cases[k];
        float *y = run_resize(rc);
        for (int64_t i = 0; i < (int64_t)rc->n * rc->c * rc->H * rc->W; i++)
            if (y[i] != want[k][i])
                fail_msg("small case %d [%lld]: %a != %a", k, (long long)i, y[i], want[k][i]);
        free(y);
    }
}

/* Large sizes: 8 sampled values and a digest of all the bits. */
static void test_resize_large(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof k_big / sizeof k_big[0]; k++) {
        const resize_case *rc = &k_big[k];
        const int64_t n = (int64_t)rc->n * rc->c * rc->H * rc->W;
        float *y = run_resize(rc);
        for (int j = 0; j < 8; j++) {
            const int64_t i = ((int64_t)j * 7919 * 104729) % n;
            if (y[i] != rc->sample[j])
                fail_msg("case %zu (%dx%d -> %dx%d, aa %d) [%lld]: %a != %a", k, rc->h, rc->w, rc->H,
                         rc->W, rc->aa, (long long)i, y[i], rc->sample[j]);
        }
        if (digest(y, n) != rc->digest)
            fail_msg("case %zu (%dx%d -> %dx%d, aa %d): bits differ", k, rc->h, rc->w, rc->H, rc->W, rc->aa);
        free(y);
    }
}

static void test_resize_identity_and_errors(void **state)
{
    (void)state;
    float *x = hvals(2 * 6 * 5, 99), y[60];
    assert_int_equal(samc_resize_bilinear_aa(x, 2, 6, 5, 6, 5, y), SAMC_OK);
    assert_memory_equal(x, y, sizeof y);
    assert_int_equal(samc_resize_bilinear(x, 1, 2, 6, 5, 6, 5, y), SAMC_OK);
    assert_memory_equal(x, y, sizeof y);
    assert_int_equal(samc_resize_bilinear(x, 1, 2, 0, 5, 6, 5, y), SAMC_ERR_ARG);
    assert_int_equal(samc_resize_bilinear_aa(x, 2, 6, 5, 6, -1, y), SAMC_ERR_ARG);
    assert_int_equal(samc__fast_resize_aa(2, x, 2, 6, 5, 6, -1, y, NULL), SAMC_ERR_ARG);
    assert_int_equal(samc__fast_resize_aa(2, x, 2, 6, 5, 6, 5, y, NULL), SAMC_OK);
    assert_memory_equal(x, y, sizeof y);
    /* one axis changed (no scratch): fast and core give the same bits */
    static const int one_axis[4][2] = {{6, 9}, {6, 3}, {11, 5}, {4, 5}};
    for (int k = 0; k < 4; k++) {
        const int H = one_axis[k][0], W = one_axis[k][1];
        float a[2 * 11 * 9], b[2 * 11 * 9];
        assert_int_equal(samc__fast_resize_aa_scratch(2, 6, 5, H, W), 0);
        assert_int_equal(samc_resize_bilinear_aa(x, 2, 6, 5, H, W, a), SAMC_OK);
        assert_int_equal(samc__fast_resize_aa(3, x, 2, 6, 5, H, W, b, NULL), SAMC_OK);
        assert_memory_equal(a, b, (size_t)(2 * H * W) * sizeof *a);
    }
    free(x);
}

/* ---- connected components ------------------------------------------------ */

static uint8_t *mask_from(const char *const *rows, int H, int W)
{
    uint8_t *m = malloc((size_t)H * W);
    assert_non_null(m);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            m[y * W + x] = rows[y][x] == '#';
    return m;
}

/* Diagonal chains join (8-connectivity); labels are 1 + the smallest 2x2
 * block corner index of the component, as the CUDA kernel gives. */
static void test_cc_known(void **state)
{
    (void)state;
    static const char *const rows[] = {"#..#....", ".#.#..##", "..#...##", "........", "#......#", "##....#."};
    static const char *const areas[] = {"5..5....", ".5.5..44", "..5...44", "........", "3......2", "33....2."};
    uint8_t *m = mask_from(rows, 6, 8);
    int32_t labels[48], counts[48];
    assert_int_equal(samc_connected_components(m, 6, 8, labels, counts), SAMC_OK);
    for (int p = 0; p < 48; p++) {
        const char a = areas[p / 8][p % 8];
        assert_int_equal(counts[p], a == '.' ? 0 : a - '0');
        assert_int_equal(labels[p] == 0, a == '.');
    }
    assert_int_equal(labels[0], 1);      /* (0,0)...(2,2),(1,3),(0,3): block 0 */
    assert_int_equal(labels[1 * 8 + 6], 7); /* 2x2 square at (1,6): block (0,6) */
    assert_int_equal(labels[2 * 8 + 7], 7);
    assert_int_equal(labels[5 * 8 + 1], 33); /* blocks (4,0) */
    assert_int_equal(labels[5 * 8 + 6], 39); /* (4,7)-(5,6): block (4,6) */
    assert_int_equal(samc_connected_components(m, 0, 8, labels, counts), SAMC_ERR_ARG);
    free(m);
}

/* Flood fill (BFS) as an independent check of areas and labels on random
 * masks of odd and even sizes. */
static void flood(const uint8_t *m, int H, int W, int32_t *area, int32_t *label)
{
    int32_t *queue = malloc((size_t)H * W * sizeof *queue);
    uint8_t *seen = calloc((size_t)H * W, 1);
    assert_true(queue && seen);
    for (int s = 0; s < H * W; s++) {
        area[s] = label[s] = 0;
    }
    for (int s = 0; s < H * W; s++) {
        if (!m[s] || seen[s])
            continue;
        int head = 0, tail = 0, best = INT32_MAX;
        queue[tail++] = s, seen[s] = 1;
        while (head < tail) {
            const int p = queue[head++], y = p / W, x = p % W, blk = (y & ~1) * W + (x & ~1);
            best = blk < best ? blk : best;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    const int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < H && xx >= 0 && xx < W && m[yy * W + xx] && !seen[yy * W + xx])
                        queue[tail++] = yy * W + xx, seen[yy * W + xx] = 1;
                }
        }
        for (int i = 0; i < tail; i++)
            area[queue[i]] = tail, label[queue[i]] = best + 1;
    }
    free(queue);
    free(seen);
}

static void test_cc_random(void **state)
{
    (void)state;
    static const int sizes[][2] = {{16, 16}, {17, 9}, {1, 30}, {30, 1}, {64, 48}};
    for (int k = 0; k < 5; k++) {
        const int H = sizes[k][0], W = sizes[k][1];
        uint8_t *m = malloc((size_t)H * W);
        int32_t *l = malloc((size_t)H * W * 4), *c = malloc((size_t)H * W * 4);
        int32_t *l2 = malloc((size_t)H * W * 4), *c2 = malloc((size_t)H * W * 4);
        assert_true(m && l && c && l2 && c2);
        for (int i = 0; i < H * W; i++)
            m[i] = hval((uint32_t)i, 50 + (uint32_t)k) < 0.45f;
        assert_int_equal(samc_connected_components(m, H, W, l, c), SAMC_OK);
        flood(m, H, W, c2, l2);
        assert_memory_equal(c, c2, (size_t)H * W * 4);
        assert_memory_equal(l, l2, (size_t)H * W * 4);
        free(m), free(l), free(c), free(l2), free(c2);
    }
}

/* ---- hole / sprinkle filling ---------------------------------------------- */

/* '+' 1.0, '-' -1.0, '0' 0.0 (== threshold, so background). Background
 * components of area 1: (1,1), (3,2), the corner (7,7). Foreground: the
 * 18-pixel block, singles (1,5), (6,1), and {(6,6),(6,7),(7,6)} of area 3,
 * which is area 4 once the corner hole next to it is filled. */
static const char *const k_grid[] = {"++++----", "+-++-+--", "++++----", "++0+----",
                                     "++++----", "--------", "-+----++", "------+-"};

static samc_tensor grid_tensor(float hi, float lo)
{
    samc_tensor t = {0};
    assert_int_equal(samc_tensor_allocv(&t, NULL, 4, (int64_t)1, (int64_t)1, (int64_t)8, (int64_t)8), SAMC_OK);
    for (int p = 0; p < 64; p++) {
        const char ch = k_grid[p / 8][p % 8];
        t.data[p] = ch == '+' ? hi : ch == '-' ? lo : 0.0f;
    }
    return t;
}

static void expect_grid(const samc_tensor *t, const char *const *want, float hi, float lo, float fill_hi,
                        float fill_lo)
{
    for (int p = 0; p < 64; p++) {
        const char ch = want[p / 8][p % 8];
        const float v = ch == '+' ? hi : ch == '-' ? lo : ch == '0' ? 0.0f : ch == 'H' ? fill_hi : fill_lo;
        if (t->data[p] != v)
            fail_msg("(%d,%d): %g, want %g", p / 8, p % 8, t->data[p], v);
    }
}

static void test_fill_holes_image(void **state)
{
    (void)state;
    /* holes <= 1 filled with thr+10 ('H'); sprinkles <= 3 (found before the
     * hole fill) set to thr-10 ('S'). */
    static const char *const both[] = {"++++----", "+H++-S--", "++++----", "++H+----",
                                       "++++----", "--------", "-S----SS", "------SH"};
    samc_tensor t = grid_tensor(1.0f, -1.0f);
    assert_int_equal(samc_fill_holes_image_predictor(&t, 0.0f, 1.0, 3.0), SAMC_OK);
    expect_grid(&t, both, 1.0f, -1.0f, 10.0f, -10.0f);
    samc_tensor_release(&t);
    /* holes only, threshold 0.5: the '0' pixel and the -1s stay background */
    static const char *const holes[] = {"++++----", "+H++-+--", "++++----", "++H+----",
                                        "++++----", "--------", "-+----++", "------+H"};
    t = grid_tensor(1.0f, -1.0f);
    assert_int_equal(samc_fill_holes_image_predictor(&t, 0.5f, 1.0, 0.0), SAMC_OK);
    expect_grid(&t, holes, 1.0f, -1.0f, 10.5f, -9.5f);
    samc_tensor_release(&t);
    /* both off: untouched */
    t = grid_tensor(1.0f, -1.0f);
    assert_int_equal(samc_fill_holes_image_predictor(&t, 0.0f, 0.0, 0.0), SAMC_OK);
    expect_grid(&t, k_grid, 1.0f, -1.0f, 0, 0);
    samc_tensor_release(&t);
}

static void test_fill_holes_video(void **state)
{
    (void)state;
    static const char *const want[] = {"++++----", "+H++-+--", "++++----", "++H+----",
                                       "++++----", "--------", "-+----++", "------+H"};
    samc_tensor t = grid_tensor(2.0f, -3.0f);
    assert_int_equal(samc_fill_holes_video(&t, 2.0), SAMC_OK);
    expect_grid(&t, want, 2.0f, -3.0f, 0.1f, 0);
    /* large enough for the big background region too: every logit <= 0 becomes 0.1 */
    samc_tensor_release(&t);
    t = grid_tensor(2.0f, -3.0f);
    assert_int_equal(samc_fill_holes_video(&t, 1e9), SAMC_OK);
    for (int p = 0; p < 64; p++)
        assert_true(t.data[p] == 2.0f || t.data[p] == 0.1f);
    assert_int_equal(samc_fill_holes_video(&t, 0.0), SAMC_ERR_ARG);
    samc_tensor_release(&t);
}

/* ---- MaskDecoder.forward's selection ------------------------------------- */

static samc_mask_decoder sel_decoder(bool dynamic, bool multimask_token)
{
    return (samc_mask_decoder){.dim = 8, .num_mask_tokens = 4, .dynamic_multimask_via_stability = dynamic,
                               .use_multimask_token_for_obj_ptr = multimask_token,
                               .dynamic_multimask_stability_delta = 0.05f,
                               .dynamic_multimask_stability_thresh = 0.98f};
}

/* masks (4, 4, 10, 5): every mask k of batch b is filled with 100*b + k, then
 * mask 0 of each batch is set for its stability case. */
static void sel_inputs(samc_tensor *m, samc_tensor *iou)
{
    assert_int_equal(samc_tensor_allocv(m, NULL, 4, (int64_t)4, (int64_t)4, (int64_t)10, (int64_t)5), SAMC_OK);
    assert_int_equal(samc_tensor_allocv(iou, NULL, 2, (int64_t)4, (int64_t)4), SAMC_OK);
    for (int b = 0; b < 4; b++)
        for (int k = 0; k < 4; k++)
            for (int p = 0; p < 50; p++)
                m->data[(b * 4 + k) * 50 + p] = (float)(100 * b + k);
    float *m0 = m->data, *m1 = m->data + 4 * 50;
    for (int p = 0; p < 50; p++)
        m0[p] = m1[p] = 1.0f;
    m0[7] = 0.0f;                  /* b0: 49 > delta, 50 > -delta: 0.98, stable */
    m1[3] = 0.05f, m1[9] = -0.05f; /* b1: 48 / 49 = 0.9796 (0.05 and -0.05 are not "> +-delta") */
    for (int p = 0; p < 50; p++)   /* b2: nothing > -delta: area_u = 0 -> 1.0, stable */
        m->data[8 * 50 + p] = -1.0f;
    float *m3 = m->data + 12 * 50; /* b3: 1 / 50: unstable */
    for (int p = 1; p < 50; p++)
        m3[p] = 0.0f;
    const float ious[16] = {0.9f, 0.5f, 0.7f, 0.7f, 0.1f, 0.6f, 0.8f, 0.8f,
                            0.2f, 0.9f, 0.9f, 0.1f, 0.3f, 0.2f, 0.4f, 0.3f};
    memcpy(iou->data, ious, sizeof ious);
}

static void test_stability_and_argmax(void **state)
{
    (void)state;
    const float x[5] = {1.0f, 3.0f, 3.0f, 2.0f, 3.0f};
    assert_int_equal(samc_argmax_first(x, 5), 1);
    const float y[4] = {1.0f, NAN, 5.0f, NAN};
    assert_int_equal(samc_argmax_first(y, 4), 1);
    const float z[3] = {0.05f, 0.0500001f, -0.05f};
    assert_true(samc_mask_stability_score(z, 3, 0.05f) == 0.5f);
    const float neg[2] = {-0.05f, -1.0f};
    assert_true(samc_mask_stability_score(neg, 2, 0.05f) == 1.0f);
}

static void test_select(void **state)
{
    (void)state;
    samc_tensor m = {0}, iou = {0};
    sel_inputs(&m, &iou);
    int idx[12], tok = -1;
    /* dynamic fallback: b0 stable (0), b1 unstable -> first max of {0.6,0.8,0.8} (2),
     * b2 stable, b3 unstable -> max of {0.2,0.4,0.3} (2) */
    samc_mask_decoder d = sel_decoder(true, true);
    assert_int_equal(samc_mask_decoder_select_index(&d, &m, &iou, false, idx), SAMC_OK);
    assert_int_equal(idx[0], 0), assert_int_equal(idx[1], 2), assert_int_equal(idx[2], 0), assert_int_equal(idx[3], 2);
    samc_tensor mo = {0}, io = {0};
    assert_int_equal(samc_mask_decoder_select(&d, &m, &iou, false, &mo, &io, &tok, NULL), SAMC_OK);
    assert_int_equal(mo.shape[1], 1), assert_int_equal(io.shape[1], 1);
    assert_int_equal(tok, 0); /* sam_tokens_out is token 0 even after the fallback */
    assert_true(mo.data[1 * 50 + 20] == 102.0f && io.data[1] == 0.8f && io.data[3] == 0.4f);
    assert_true(mo.data[3 * 50 + 20] == 302.0f);
    samc_tensor_release(&mo), samc_tensor_release(&io);
    /* multimask: tokens 1..3 in order, not sorted; obj-ptr tokens from 1 */
    assert_int_equal(samc_mask_decoder_select(&d, &m, &iou, true, &mo, &io, &tok, NULL), SAMC_OK);
    assert_int_equal(mo.shape[1], 3), assert_int_equal(tok, 1);
    assert_true(io.data[0] == 0.5f && io.data[1] == 0.7f && mo.data[(2 * 3 + 2) * 50] == 203.0f);
    /* the preallocated outputs are reused; without the flag the token is 0 */
    d = sel_decoder(false, false);
    assert_int_equal(samc_mask_decoder_select(&d, &m, &iou, true, &mo, &io, &tok, NULL), SAMC_OK);
    assert_int_equal(tok, 0);
    samc_tensor_release(&mo), samc_tensor_release(&io);
    /* no dynamic fallback: mask 0 always */
    assert_int_equal(samc_mask_decoder_select(&d, &m, &iou, false, &mo, &io, NULL, NULL), SAMC_OK);
    assert_true(mo.data[3 * 50 + 20] == 0.0f && mo.data[1 * 50 + 20] == 1.0f && io.data[1] == 0.1f);
    /* wrong preallocated shape */
    samc_error err = {0};
    assert_int_equal(samc_mask_decoder_select(&d, &m, &iou, true, &mo, &io, NULL, &err), SAMC_ERR_SHAPE);
    samc_tensor_release(&mo), samc_tensor_release(&io), samc_tensor_release(&m), samc_tensor_release(&iou);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_small),
        cmocka_unit_test(test_resize_large),
        cmocka_unit_test(test_resize_identity_and_errors),
        cmocka_unit_test(test_cc_known),
        cmocka_unit_test(test_cc_random),
        cmocka_unit_test(test_fill_holes_image),
        cmocka_unit_test(test_fill_holes_video),
        cmocka_unit_test(test_stability_and_argmax),
        cmocka_unit_test(test_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
