/* SPDX-License-Identifier: Apache-2.0 */
/* test_ref_sam_heads.c - the ref/ prompt encoder, two-way transformer and
 * mask decoder heads on tiny modules with deterministic weights, against the
 * official PyTorch modules (torch 1.13, fp32, CPU).
 *
 * Weights and inputs come from an integer hash (hval) implemented the same
 * way here and in the script below; each tensor gets its own seed, in the
 * order of the official module's named_parameters(). The expected values
 * (24 samples, the sum, max |x| per output) were printed by this script:
 *
 *   /usr/bin/python3 heads_gen.py 2>/dev/null   (add any argument to list the seeds)
 *
 * # Expected values for tests/test_ref_sam_heads.c. Run with Debian's
 * # /usr/bin/python3 (torch 1.13) and the official code at /work/sam2src.
 * import math, sys, types
 * import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
 * sys.path.insert(0, "/work/sam2src")
 * hydra = types.ModuleType("hydra"); hydra.initialize_config_module = lambda *a, **k: None
 * gh = types.ModuleType("hydra.core.global_hydra")
 * gh.GlobalHydra = type("GH", (), {"instance": staticmethod(lambda: types.SimpleNamespace(is_initialized=lambda: True))})
 * tq = types.ModuleType("tqdm"); tq.tqdm = lambda x=None, *a, **k: x
 * sys.modules.update({"hydra": hydra, "hydra.core": types.ModuleType("hydra.core"), "hydra.core.global_hydra": gh, "tqdm": tq})
 * def sdpa(q, k, v, **kw):  # F.scaled_dot_product_attention (torch >= 2.0), math kernel
 *     return torch.matmul((torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))).softmax(-1), v)
 * F.scaled_dot_product_attention = sdpa
 * from sam2.modeling.sam.prompt_encoder import PromptEncoder
 * from sam2.modeling.sam.transformer import TwoWayTransformer
 * from sam2.modeling.sam.mask_decoder import MaskDecoder
 *
 * def hval(n, seed):  # same integer hash as hval() in the C tests
 *     i = np.arange(n, dtype=np.uint64)
 *     u = (i * 2654435761 + seed * 2246822519) & 0xffffffff
 *     u ^= u >> 13; u = (u * 3266489917) & 0xffffffff; u ^= u >> 16
 *     return ((u >> 8).astype(np.float64) / 16777216.0).astype(np.float32)
 * def gen(shape, seed, amp, off=0.0):  # gen() in the C test: off + (2u - 1) * amp, in float32
 *     n = int(np.prod(shape)); u = hval(n, seed)
 *     return torch.from_numpy((np.float32(off) + (np.float32(2) * u - np.float32(1)) * np.float32(amp)).reshape(shape))
 * def fill(mod, table):  # table: name -> (seed, amp, off)
 *     sd = dict(mod.named_parameters()); sd.update(dict(mod.named_buffers()))
 *     for name, t in sd.items():
 *         seed, amp, off = table(name)
 *         with torch.no_grad(): t.copy_(gen(tuple(t.shape), seed, amp, off))
 *         if VERBOSE: print("  %-48s seed %d amp %g off %g %s" % (name, seed, amp, off, tuple(t.shape)))
 * def std_table(base):  # weights by position in named order: seed base+k; norms ~1, biases small
 *     def f(name, _c={}):
 *         k = _c.setdefault(name, base + len(_c))
 *         if "norm" in name or name.startswith("output_upscaling.1") or name.startswith("mask_downscaling.1") or name.startswith("mask_downscaling.4"):
 *             return (k, 0.2, 1.0 if name.endswith("weight") else 0.0)
 *         if name.endswith("bias"): return (k, 0.1, 0.0)
 *         if "gaussian" in name: return (k, 3.0, 0.0)
 *         return (k, 0.5, 0.0)
 *     return f
 * def hx(v):
 *     m, e = float(v).hex().split("p"); m = m.rstrip("0").rstrip("."); return m + "p" + e + "f"
 * def check(name, t, K=24):
 *     y = t.detach().contiguous().numpy().astype(np.float32).ravel(); n = y.size
 *     K = min(K, n); idx = sorted(set([(j * n) // K + (j * 7) % max(1, n // K) for j in range(K)]))
 *     print("static const ref_check %s = {%d, %r, %r, %r, %d, {%s}, {%s}};" % (name, n, float(np.abs(y).max()) if n else 0.0,
 *           float(np.sum(y.astype(np.float64))), float(np.sum(np.abs(y).astype(np.float64))), len(idx),
 *           ", ".join(map(str, idx)), ", ".join(hx(y[i]) for i in idx)))
 * def names(mod):
 *     pass
 *
 * torch.set_grad_enabled(False)
 * VERBOSE = len(sys.argv) > 1
 * # ---- prompt encoder: D=16, embedding 4x5, input 64x80, mask_in_chans 8
 * pe = PromptEncoder(embed_dim=16, image_embedding_size=(4, 5), input_image_size=(64, 80), mask_in_chans=8)
 * names(pe); fill(pe, std_table(100))
 * check("k_dense_pe", pe.get_dense_pe())
 * pts = gen((2, 3, 2), 11, 40.0, 40.0); lab = torch.tensor([[1, 0, -1], [2, 3, 5]], dtype=torch.int32)
 * sp, de = pe((pts, lab), None, None)
 * check("k_pe_sparse1", sp); check("k_pe_dense1", de)
 * pts2 = gen((2, 1, 2), 12, 40.0, 40.0); lab2 = torch.tensor([[1], [0]], dtype=torch.int32)
 * box = gen((2, 4), 13, 40.0, 40.0); msk = gen((2, 1, 16, 20), 14, 3.0)
 * sp, de = pe((pts2, lab2), box, msk)
 * check("k_pe_sparse2", sp); check("k_pe_dense2", de)
 * sp, de = pe(None, None, msk[:1]); assert tuple(sp.shape) == (1, 0, 16); check("k_pe_dense3", de)
 *
 * # ---- two-way transformer: D=16, 2 heads, mlp 32, downsample 2; B=2, Nq=7, keys 4x5
 * tr = TwoWayTransformer(depth=2, embedding_dim=16, num_heads=2, mlp_dim=32)
 * names(tr); fill(tr, std_table(300))
 * B, D, h, w, Nq = 2, 16, 4, 5, 7
 * keys = gen((B, h * w, D), 21, 1.0); kpe = gen((1, h * w, D), 22, 1.0); toks = gen((B, Nq, D), 23, 1.0)
 * img = keys.reshape(B, h, w, D).permute(0, 3, 1, 2); imgpe = kpe.reshape(1, h, w, D).permute(0, 3, 1, 2).repeat(B, 1, 1, 1)
 * outs = {}
 * for i, l in enumerate(tr.layers):
 *     l.register_forward_hook(lambda m, a, o, i=i: outs.__setitem__(i, o))
 * q, k = tr(img, imgpe, toks)
 * check("k_tw_q0", outs[0][0]); check("k_tw_k0", outs[0][1]); check("k_tw_q1", outs[1][0]); check("k_tw_k1", outs[1][1])
 * check("k_tw_final", q)
 *
 * # ---- mask decoder heads, given hs and keys (the transformer is replaced by a stub)
 * class Fixed(nn.Module):
 *     def __init__(self, hs, keys): super().__init__(); self.hs, self.keys = hs, keys
 *     def forward(self, src, pos, tokens): return self.hs, self.keys
 * def decoder(hr, obj, obj_mlp, sig, base):
 *     dec = MaskDecoder(transformer_dim=16, transformer=Fixed(None, None), num_multimask_outputs=3, iou_head_depth=3,
 *                       iou_head_hidden_dim=16, use_high_res_features=hr, iou_prediction_use_sigmoid=sig,
 *                       pred_obj_scores=obj, pred_obj_scores_mlp=obj_mlp, use_multimask_token_for_obj_ptr=True)
 *     names(dec); fill(dec, std_table(base)); return dec
 * T = 9
 * hs = gen((B, T, D), 31, 1.0); mkeys = gen((B, h * w, D), 32, 1.0)
 * fs0 = gen((1, 2, 4 * h, 4 * w), 33, 1.0); fs1 = gen((1, 4, 2 * h, 2 * w), 34, 1.0)
 * fs0b = gen((B, 2, 4 * h, 4 * w), 35, 1.0); fs1b = gen((B, 4, 2 * h, 2 * w), 36, 1.0)
 * dummy = torch.zeros(B, D, h, w); sparse = torch.zeros(B, 1, D)
 * for tag, args, feats in [("a", (True, True, True, True, 500), [fs0, fs1]), ("b", (False, True, False, False, 600), None),
 *                          ("c", (True, False, False, True, 700), [fs0b, fs1b])]:
 *     dec = decoder(*args); dec.transformer = Fixed(hs, mkeys)
 *     m, iou, tok, ob = dec.predict_masks(dummy, dummy[:1], sparse, dummy, repeat_image=False, high_res_features=feats)
 *     check("k_md_masks_" + tag, m); check("k_md_iou_" + tag, iou); check("k_md_obj_" + tag, ob)
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

#include "core/base/error.h"
#include "ref/ref_ops.h"
#include "util/testutil.h"

typedef struct ref_check {
    int64_t numel;
    double maxabs, sum, abssum;
    int n;
    int64_t idx[24];
    float val[24];
} ref_check;

/* clang-format off */
static const ref_check k_dense_pe = {320, 0.9999937415122986, 14.646627083420753, 202.6584923802875, 24, {0, 20, 27, 48, 55, 75, 83, 103, 110, 131, 138, 158, 166, 173, 193, 201, 221, 228, 249, 256, 276, 284, 304, 311}, {0x1.ffe43ep-1f, 0x1.39c0bp-1f, 0x1.9c5aaap-1f, 0x1.6f0348p-1f, 0x1.99d42cp-1f, -0x1.22440ap-1f, 0x1.a0b974p-3f, 0x1.02e108p-1f, 0x1.ff8db4p-1f, -0x1.fc5c46p-1f, -0x1.c5ce4ap-1f, -0x1.6656acp-5f, -0x1.98c37ap-1f, -0x1.98c37ap-1f, -0x1.6e8e6ep-1f, -0x1.e2cd06p-1f, 0x1.a4ff68p-3f, 0x1.dc3686p-5f, -0x1.466656p-3f, 0x1.f549e4p-1f, 0x1.b9baf4p-1f, -0x1.30a8f8p-1f, -0x1.49d904p-2f, -0x1.faed1p-1f}};
static const ref_check k_pe_sparse1 = {128, 1.4332761764526367, 3.9339721649885178, 68.56986470520496, 24, {0, 7, 14, 17, 24, 26, 34, 41, 43, 51, 53, 60, 68, 70, 77, 80, 87, 94, 97, 104, 106, 114, 121, 123}, {0x1.13bafcp+0f, 0x1.0498b8p-2f, 0x1.a2336p-6f, 0x1.a40604p-2f, 0x1.434ee4p-1f, 0x1.48cefap-1f, 0x1.c341fcp-2f, -0x1.ffd46cp-2f, -0x1.bb6abp-4f, 0x1.c266c8p-2f, -0x1.ac54e8p-3f, 0x1.92c0d4p-2f, -0x1.6de3fep-1f, -0x1.0abe38p+0f, 0x1.1bdb6ap-1f, -0x1.2725f2p-1f, 0x1.3d4e04p+0f, 0x1.0e3608p+0f, 0x1.456798p-3f, -0x1.0e434ap-1f, 0x1.fa1p-1f, 0x1.c341fcp-2f, -0x1.ffd46cp-2f, -0x1.bb6abp-4f}};
static const ref_check k_pe_dense1 = {640, 0.4724486470222473, 54.680612087249756, 147.6599097251892, 24, {0, 33, 67, 101, 108, 142, 176, 209, 217, 251, 284, 318, 326, 359, 393, 401, 434, 468, 502, 509, 543, 577, 610, 618}, {-0x1.0356d8p-3f, 0x1.f9017p-4f, -0x1.53e0e4p-2f, 0x1.58da9p-4f, 0x1.58da9p-4f, 0x1.d33af4p-2f, 0x1.48c1acp-2f, 0x1.7a158p-3f, 0x1.7a158p-3f, -0x1.622fp-8f, 0x1.604bb8p-2f, 0x1.79304p-4f, -0x1.0356d8p-3f, 0x1.f9017p-4f, -0x1.53e0e4p-2f, 0x1.77a96p-3f, 0x1.58da9p-4f, 0x1.d33af4p-2f, -0x1.ce87ep-3f, -0x1.ce87ep-3f, 0x1.dfc238p-2f, -0x1.622fp-8f, 0x1.604bb8p-2f, 0x1.604bb8p-2f}};
static const ref_check k_pe_sparse2 = {96, 1.4736446142196655, -6.172490052878857, 66.98993169516325, 24, {0, 7, 10, 13, 16, 23, 26, 29, 32, 39, 42, 45, 48, 55, 58, 61, 64, 71, 74, 77, 80, 87, 90, 93}, {0x1.4dce98p+0f, -0x1.01a12cp+0f, -0x1.a75708p-1f, -0x1.3f93c6p-1f, 0x1.9ea54p-6f, -0x1.27cedcp+0f, 0x1.d9916cp-2f, -0x1.ab6bd2p-1f, 0x1.9d551p-4f, -0x1.6fd2d6p-1f, 0x1.aa9208p-1f, 0x1.0c4d9ap+0f, -0x1.c06d82p-2f, -0x1.156764p-2f, 0x1.830b84p-2f, -0x1.f9c59p-4f, 0x1.2bce1ap+0f, 0x1.ab1578p-3f, -0x1.c38686p-1f, -0x1.760978p-6f, -0x1.c10f1p-2f, -0x1.79dff4p-3f, 0x1.149952p+0f, -0x1.43c8p-3f}};
static const ref_check k_pe_dense2 = {640, 1.2901535034179688, -59.135525337886065, 235.89008908672258, 24, {0, 33, 67, 101, 108, 142, 176, 209, 217, 251, 284, 318, 326, 359, 393, 401, 434, 468, 502, 509, 543, 577, 610, 618}, {0x1.2157f2p-3f, 0x1.a2d7c8p-4f, 0x1.6caa0cp-4f, -0x1.7454c2p-3f, 0x1.c696e2p-3f, 0x1.bb8502p-2f, 0x1.5692bcp-3f, -0x1.2c7d84p-2f, 0x1.13af2p-5f, -0x1.1464a4p-1f, 0x1.12f7dp-3f, -0x1.4dbfeap-1f, -0x1.982a22p-2f, -0x1.a42b9cp-2f, -0x1.635cecp-2f, 0x1.2b72bp-2f, -0x1.25072ap-1f, 0x1.966886p-5f, 0x1.37342cp-3f, 0x1.2c0cc8p-1f, -0x1.e08bfep-2f, -0x1.d1e8c2p-2f, -0x1.719ca6p-1f, 0x1.23418ap-1f}};
static const ref_check k_pe_dense3 = {320, 1.2901533842086792, -31.331921046599746, 118.8552002813667, 24, {0, 20, 27, 48, 55, 75, 83, 103, 110, 131, 138, 158, 166, 173, 193, 201, 221, 228, 249, 256, 276, 284, 304, 311}, {0x1.2157f4p-3f, -0x1.a4caaep-2f, 0x1.28a5b4p-1f, 0x1.e1ca82p-3f, 0x1.9d4f7p-2f, 0x1.011d7cp-4f, 0x1.f9b394p-6f, -0x1.2c2d7p-1f, 0x1.0e5c66p-1f, -0x1.ea1c52p-1f, -0x1.b1819ep-1f, 0x1.bb7a5ep-2f, -0x1.f2fde8p-3f, -0x1.d2fb6ep-2f, -0x1.8d209p-3f, -0x1.18fa2ap-2f, -0x1.f29cc8p-4f, -0x1.bbe25ap-2f, -0x1.d1eb4ap-2f, -0x1.21cffep-2f, -0x1.8bc024p-2f, 0x1.12f7ccp-3f, 0x1.18420ap-4f, -0x1.4032d4p-2f}};
static const ref_check k_tw_q0 = {224, 2.563453435897827, 5.238473873119801, 175.2394472877495, 24, {0, 16, 23, 31, 38, 54, 62, 69, 76, 84, 100, 107, 115, 122, 138, 146, 153, 160, 168, 184, 191, 199, 206, 222}, {0x1.1f4ca8p+0f, 0x1.a4cdc8p+0f, -0x1.913fbep+0f, 0x1.02f2fcp-2f, 0x1.69ffcap-1f, 0x1.667522p-2f, 0x1.472f76p+0f, -0x1.ecd7e8p-3f, 0x1.c8e06ep-1f, -0x1.7ec63ep-1f, -0x1.74f5cep-1f, -0x1.b2673cp-2f, -0x1.2ee7a6p+0f, -0x1.e5ff66p-2f, -0x1.2e6236p+0f, -0x1.64fe0ap+0f, -0x1.6c8cbcp-1f, 0x1.0d33e4p-1f, 0x1.5cff0ep+0f, 0x1.e6a3b2p-1f, -0x1.3e52f2p+0f, 0x1.6716eep-2f, 0x1.7d410cp-3f, 0x1.0fe96cp+1f}};
static const ref_check k_tw_k0 = {640, 3.160107374191284, -11.978902262519114, 521.3560082969489, 24, {0, 33, 67, 101, 108, 142, 176, 209, 217, 251, 284, 318, 326, 359, 393, 401, 434, 468, 502, 509, 543, 577, 610, 618}, {-0x1.59fb46p+0f, -0x1.484aecp-2f, 0x1.6c6ae6p+0f, -0x1.b7ae96p-2f, -0x1.5c4222p-3f, -0x1.4ab7fep-1f, -0x1.f5d92p-1f, 0x1.a4d6p-1f, 0x1.deaf58p-1f, -0x1.ed7048p+0f, -0x1.5a120cp-1f, 0x1.190646p-5f, 0x1.d6888cp-11f, 0x1.bde27ap-1f, -0x1.2dc844p+0f, 0x1.0e108ap+0f, 0x1.14b4fep-6f, -0x1.289ab2p+0f, 0x1.2ba868p-2f, 0x1.93301p-3f, 0x1.b76d56p-1f, 0x1.7f2e6ap+0f, 0x1.5280bcp-1f, 0x1.8c4328p+0f}};
static const ref_check k_tw_q1 = {224, 2.7734949588775635, 8.173046852927655, 191.52812718739733, 24, {0, 16, 23, 31, 38, 54, 62, 69, 76, 84, 100, 107, 115, 122, 138, 146, 153, 160, 168, 184, 191, 199, 206, 222}, {-0x1.080646p-2f, -0x1.7aebd6p-1f, 0x1.0ad222p-2f, 0x1.b6a8e8p-2f, 0x1.0d36acp+0f, 0x1.ca7d26p-1f, -0x1.0398ap+0f, -0x1.d99d82p-1f, 0x1.c73266p+0f, 0x1.93bef6p-2f, 0x1.7f2a8p-2f, -0x1.0e38e2p-5f, -0x1.d47526p-1f, -0x1.8a7dfp-4f, -0x1.8c8246p-3f, -0x1.c0ddccp-1f, -0x1.f101f4p+0f, 0x1.150eb6p-4f, 0x1.e2997cp+0f, 0x1.b8bccp+0f, 0x1.81955ap-2f, 0x1.35e378p-1f, -0x1.975904p-1f, -0x1.284c8ap-7f}};
static const ref_check k_tw_k1 = {640, 3.1301612854003906, -29.570554851554334, 506.9068183666095, 24, {0, 33, 67, 101, 108, 142, 176, 209, 217, 251, 284, 318, 326, 359, 393, 401, 434, 468, 502, 509, 543, 577, 610, 618}, {-0x1.362eacp+1f, 0x1.70b8e6p-1f, 0x1.d2bc92p-2f, -0x1.927954p-2f, -0x1.42f074p-1f, -0x1.4064c2p+0f, -0x1.14ea8ap+1f, 0x1.19d99cp+0f, 0x1.fd0cc2p-1f, -0x1.e66ef6p-1f, -0x1.09572cp+0f, -0x1.fc31p-1f, 0x1.a52538p-1f, 0x1.0c403p-2f, -0x1.53fb72p-2f, 0x1.331dbep-1f, -0x1.6b488ap-2f, -0x1.c8a2b4p-3f, 0x1.4b82bep+0f, -0x1.455016p-1f, 0x1.4374ecp+0f, 0x1.cfbf5p-1f, -0x1.a48dcp-6f, 0x1.89cb7ap-1f}};
static const ref_check k_tw_final = {224, 2.2694361209869385, -4.881003397560562, 177.80921090483025, 24, {0, 16, 23, 31, 38, 54, 62, 69, 76, 84, 100, 107, 115, 122, 138, 146, 153, 160, 168, 184, 191, 199, 206, 222}, {-0x1.50b02ep-3f, -0x1.09bcb8p-1f, -0x1.135de2p-5f, -0x1.7441ccp-1f, 0x1.b1674cp-5f, 0x1.202c9ap-8f, -0x1.e59beep-1f, -0x1.82fdfep+0f, 0x1.400cbcp+0f, 0x1.ac04c4p-1f, 0x1.95b562p-1f, 0x1.828fcp+0f, -0x1.c878p-1f, 0x1.52fa4p-1f, 0x1.2efef2p-1f, -0x1.2eb078p+0f, -0x1.5d6dc4p+0f, -0x1.3b5e64p-4f, 0x1.71e86ap+0f, 0x1.5ac54cp+0f, -0x1.07d2p+0f, 0x1.8bcdecp-2f, -0x1.764352p-3f, 0x1.5f60bp-2f}};
static const ref_check k_md_masks_a = {2560, 2.3002817630767822, 8.948685139216877, 586.488150748449, 24, {0, 113, 227, 341, 454, 568, 682, 795, 909, 1023, 1136, 1250, 1364, 1477, 1591, 1705, 1712, 1826, 1940, 2053, 2167, 2281, 2394, 2508}, {-0x1.2fcdf6p-4f, 0x1.11528p-5f, 0x1.bd0284p-6f, -0x1.0a482ep-2f, -0x1.978332p-5f, 0x1.1b2eb6p-5f, -0x1.529508p-4f, 0x1.3fa688p+0f, -0x1.924c2p-3f, 0x1.3bcbbp-2f, 0x1.26a8fcp-2f, 0x1.3fef04p-3f, 0x1.eb16b8p-10f, -0x1.de1a6p-8f, 0x1.7ca53p-5f, 0x1.07e3bp+0f, -0x1.95aefep-5f, -0x1.a226b4p-3f, -0x1.3d19acp-5f, 0x1.e91966p-5f, -0x1.e4278cp-12f, 0x1.627c92p-6f, 0x1.5ca5a8p-3f, -0x1.0c5aap-3f}};
static const ref_check k_md_iou_a = {8, 0.631377100944519, 4.168949693441391, 4.168949693441391, 8, {0, 1, 2, 3, 4, 5, 6, 7}, {0x1.0680dp-1f, 0x1.3f9ffep-1f, 0x1.d161b8p-2f, 0x1.11aa54p-1f, 0x1.61afbep-2f, 0x1.051a72p-1f, 0x1.1cce68p-1f, 0x1.4343dcp-1f}};
static const ref_check k_md_obj_a = {2, 0.30620646476745605, -0.38763558864593506, 0.38763558864593506, 2, {0, 1}, {-0x1.4d88ap-4f, -0x1.398e3p-2f}};
static const ref_check k_md_masks_b = {2560, 0.681973934173584, 73.17933470728167, 236.81076890643453, 24, {0, 113, 227, 341, 454, 568, 682, 795, 909, 1023, 1136, 1250, 1364, 1477, 1591, 1705, 1712, 1826, 1940, 2053, 2167, 2281, 2394, 2508}, {0x1.c3382ap-3f, 0x1.ea9c14p-3f, 0x1.a5507ep-3f, -0x1.a6acd4p-4f, -0x1.427f16p-4f, 0x1.fac862p-7f, 0x1.97017cp-3f, 0x1.47046p-3f, 0x1.b20834p-2f, 0x1.42bd9ap-5f, -0x1.1b23e4p-4f, -0x1.af89a6p-5f, 0x1.0f9d16p-6f, 0x1.600d9ep-4f, 0x1.5c2828p-5f, 0x1.5f003ep-4f, -0x1.eef582p-5f, 0x1.4ab034p-6f, 0x1.d42eb6p-4f, -0x1.f5e0eep-5f, 0x1.072106p-4f, -0x1.3af44cp-2f, 0x1.49e0a8p-4f, 0x1.adfe96p-5f}};
static const ref_check k_md_iou_b = {8, 0.7207459211349487, -0.3666176125407219, 2.4241518452763557, 8, {0, 1, 2, 3, 4, 5, 6, 7}, {0x1.7cf444p-6f, 0x1.23ceap-3f, -0x1.326978p-3f, 0x1.7e1fc2p-5f, 0x1.c3ad04p-2f, 0x1.804d9p-2f, -0x1.0ccfe4p-1f, -0x1.71059cp-1f}};
static const ref_check k_md_obj_b = {2, 1.8821089267730713, -2.3139021396636963, 2.3139021396636963, 2, {0, 1}, {-0x1.ba28p-2f, -0x1.e1d1e4p+0f}};
static const ref_check k_md_masks_c = {2560, 1.387102723121643, -47.38372175535187, 357.7479153967579, 24, {0, 113, 227, 341, 454, 568, 682, 795, 909, 1023, 1136, 1250, 1364, 1477, 1591, 1705, 1712, 1826, 1940, 2053, 2167, 2281, 2394, 2508}, {0x1.749192p-5f, -0x1.068a42p-6f, -0x1.47336ap-5f, 0x1.07026cp-5f, -0x1.16783cp-7f, 0x1.9d045cp-7f, 0x1.02c8ap-1f, -0x1.8fef0cp-5f, -0x1.167a6ep-4f, -0x1.02e246p-3f, 0x1.292be4p-4f, -0x1.22edfcp-3f, -0x1.e334d4p-7f, -0x1.6512ap-6f, -0x1.a5df6p-5f, 0x1.88d71ep-3f, -0x1.d1d152p-3f, 0x1.18525ep-6f, 0x1.aa114ap-6f, 0x1.018f54p-5f, -0x1.b6d824p-5f, -0x1.9c0f6p-3f, -0x1.7ab066p-6f, -0x1.7edbb4p-11f}};
static const ref_check k_md_iou_c = {8, 0.6460832357406616, 4.127951234579086, 4.127951234579086, 8, {0, 1, 2, 3, 4, 5, 6, 7}, {0x1.75c6c2p-2f, 0x1.06bc1ep-1f, 0x1.1eeecp-1f, 0x1.4acb6cp-1f, 0x1.59a9d4p-2f, 0x1.f6dadcp-2f, 0x1.34736p-1f, 0x1.39737p-1f}};
static const ref_check k_md_obj_c = {2, 10.0, 20.0, 20.0, 2, {0, 1}, {0x1.4p+3f, 0x1.4p+3f}};
/* clang-format on */

/* ---- deterministic inputs and weights (same as gen() in the script) ----- */

static float hval(uint32_t i, uint32_t seed)
{
    uint32_t u = i * 2654435761u + seed * 2246822519u;
    u ^= u >> 13;
    u *= 3266489917u;
    u ^= u >> 16;
    return (float)(u >> 8) / 16777216.0f;
}

#define MAX_ARRAYS 512
typedef struct wgen {
    float *arrays[MAX_ARRAYS];
    int n;
    uint32_t seed; /* next weight seed: named_parameters() order */
} wgen;

static float *gen(wgen *g, int64_t n, uint32_t seed, float amp, float off)
{
    assert_true(g->n < MAX_ARRAYS);
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = off + (2.0f * hval((uint32_t)i, seed) - 1.0f) * amp;
    g->arrays[g->n++] = p;
    return p;
}

static void wgen_free(wgen *g)
{
    for (int i = 0; i < g->n; i++)
        free(g->arrays[i]);
    g->n = 0;
}

/* std_table() of the script: weights 0.5, biases 0.1, norms 1 +- 0.2 / +- 0.2. */
static float *w_mat(wgen *g, int64_t n) { return gen(g, n, g->seed++, 0.5f, 0.0f); }
static float *w_bias(wgen *g, int64_t n) { return gen(g, n, g->seed++, 0.1f, 0.0f); }

static samc_linear mk_linear(wgen *g, int in, int out)
{
    samc_linear l = {.in = in, .out = out};
    l.w = w_mat(g, (int64_t)in * out);
    l.b = w_bias(g, out);
    return l;
}

static samc_norm mk_norm(wgen *g, int dim, float eps)
{
    samc_norm n = {.dim = dim, .eps = eps};
    n.w = gen(g, dim, g->seed++, 0.2f, 1.0f);
    n.b = gen(g, dim, g->seed++, 0.2f, 0.0f);
    return n;
}

static samc_mlp mk_mlp(wgen *g, int in, int hidden, int out, int layers, bool sigmoid)
{
    samc_mlp m = {.num_layers = layers, .sigmoid_output = sigmoid};
    for (int i = 0; i < layers; i++)
        m.layers[i] = mk_linear(g, i == 0 ? in : hidden, i == layers - 1 ? out : hidden);
    return m;
}

static samc_attention mk_attention(wgen *g, int D, int downsample, int heads)
{
    samc_attention a = {.heads = heads, .internal_dim = D / downsample};
    a.q = mk_linear(g, D, a.internal_dim);
    a.k = mk_linear(g, D, a.internal_dim);
    a.v = mk_linear(g, D, a.internal_dim);
    a.out = mk_linear(g, a.internal_dim, D);
    return a;
}

static samc_tensor tensor_gen(wgen *g, int ndim, const int64_t *shape, uint32_t seed, float amp,
                              float off)
{
    const int64_t n = samc_shape_numel(ndim, shape);
    samc_tensor t = samc_tensor_view(gen(g, n, seed, amp, off), ndim, shape);
    return t;
}

static samc_tensor tensor_zeros(int ndim, const int64_t *shape)
{
    samc_tensor t = {0};
    assert_int_equal(samc_tensor_alloc(&t, ndim, shape, NULL), SAMC_OK);
    return t;
}

/* ---- comparison ----------------------------------------------------------- */

/* Sampled values within 1e-5 relative (floor: 1% of the tensor's max |x|),
 * sum within 1e-5 of the sum of |x|. */
static void check_ref(const ref_check *r, const samc_tensor *t, const char *what)
{
    assert_int_equal(samc_numel(t), r->numel);
    double worst = 0;
    for (int i = 0; i < r->n; i++) {
        const double e = r->val[i], got = t->data[r->idx[i]];
        const double rel = fabs(got - e) / fmax(fabs(e), 1e-2 * r->maxabs);
        worst = fmax(worst, rel);
        if (rel > 1e-5)
            fail_msg("%s[%lld]: got %.9g, want %.9g (rel %.3g)", what, (long long)r->idx[i], got, e, rel);
    }
    double sum = 0;
    for (int64_t i = 0; i < r->numel; i++)
        sum += t->data[i];
    if (fabs(sum - r->sum) > 1e-5 * r->abssum + 1e-12)
        fail_msg("%s: sum %.9g, want %.9g", what, sum, r->sum);
    printf("  %-14s max rel err of samples %.2e\n", what, worst);
}

/* ---- prompt encoder: D=16, embedding 4x5, input 64x80, mask_in_chans 8 -- */

static samc_prompt_encoder mk_prompt_encoder(wgen *g)
{
    samc_prompt_encoder pe = {.embed_dim = 16, .emb_h = 4, .emb_w = 5, .input_h = 64, .input_w = 80};
    g->seed = 100;
    for (int i = 0; i < 4; i++)
        pe.point_embed[i] = w_mat(g, 16);
    pe.not_a_point = w_mat(g, 16);
    pe.md_conv0 = (samc_conv2d){.cin = 1, .cout = 2, .kh = 2, .kw = 2, .stride = 2, .groups = 1};
    pe.md_conv0.w = w_mat(g, 2 * 1 * 4);
    pe.md_conv0.b = w_bias(g, 2);
    pe.md_norm1 = mk_norm(g, 2, 1e-6f);
    pe.md_conv3 = (samc_conv2d){.cin = 2, .cout = 8, .kh = 2, .kw = 2, .stride = 2, .groups = 1};
    pe.md_conv3.w = w_mat(g, 8 * 2 * 4);
    pe.md_conv3.b = w_bias(g, 8);
    pe.md_norm4 = mk_norm(g, 8, 1e-6f);
    pe.md_conv6 = (samc_conv2d){.cin = 8, .cout = 16, .kh = 1, .kw = 1, .stride = 1, .groups = 1};
    pe.md_conv6.w = w_mat(g, 16 * 8);
    pe.md_conv6.b = w_bias(g, 16);
    pe.no_mask = w_mat(g, 16);
    pe.gauss = gen(g, 2 * 8, g->seed++, 3.0f, 0.0f); /* buffers come after parameters */
    return pe;
}

static void test_dense_pe(void **state)
{
    (void)state;
    wgen g = {0};
    samc_prompt_encoder pe = mk_prompt_encoder(&g);
    samc_tensor out = tensor_zeros(4, (int64_t[]){1, 16, 4, 5});
    assert_int_equal(samc_ref_dense_pe(tu_ctx(), &pe, &out), SAMC_OK);
    check_ref(&k_dense_pe, &out, "dense_pe");
    samc_tensor bad = tensor_zeros(4, (int64_t[]){1, 16, 5, 4});
    assert_int_equal(samc_ref_dense_pe(tu_ctx(), &pe, &bad), SAMC_ERR_SHAPE);
    samc_tensor_release(&out), samc_tensor_release(&bad), wgen_free(&g);
}

/* Points with every label kind (1, 0, -1 / 2, 3, 5), no box, no mask. */
static void test_prompt_points(void **state)
{
    (void)state;
    wgen g = {0};
    samc_prompt_encoder pe = mk_prompt_encoder(&g);
    const float *pts = gen(&g, 2 * 3 * 2, 11, 40.0f, 40.0f);
    const int32_t labels[6] = {1, 0, -1, 2, 3, 5};
    samc_tensor sparse = tensor_zeros(3, (int64_t[]){2, 4, 16}), dense = tensor_zeros(4, (int64_t[]){2, 16, 4, 5});
    assert_int_equal(samc_ref_prompt_encoder(tu_ctx(), &pe, pts, labels, 2, 3, NULL, NULL, &sparse, &dense), SAMC_OK);
    check_ref(&k_pe_sparse1, &sparse, "sparse1");
    check_ref(&k_pe_dense1, &dense, "dense1");
    samc_tensor_release(&sparse), samc_tensor_release(&dense), wgen_free(&g);
}

/* One point + a box (no padding point) + a mask input. */
static void test_prompt_box_mask(void **state)
{
    (void)state;
    wgen g = {0};
    samc_prompt_encoder pe = mk_prompt_encoder(&g);
    const float *pts = gen(&g, 2 * 1 * 2, 12, 40.0f, 40.0f), *box = gen(&g, 2 * 4, 13, 40.0f, 40.0f);
    const int32_t labels[2] = {1, 0};
    samc_tensor mask = tensor_gen(&g, 4, (int64_t[]){2, 1, 16, 20}, 14, 3.0f, 0.0f);
    samc_tensor sparse = tensor_zeros(3, (int64_t[]){2, 3, 16}), dense = tensor_zeros(4, (int64_t[]){2, 16, 4, 5});
    assert_int_equal(samc_ref_prompt_encoder(tu_ctx(), &pe, pts, labels, 2, 1, box, &mask, &sparse, &dense), SAMC_OK);
    check_ref(&k_pe_sparse2, &sparse, "sparse2");
    check_ref(&k_pe_dense2, &dense, "dense2");
    /* points=None, boxes=None, the first mask only: no sparse tokens. */
    samc_tensor mask1 = samc_tensor_view(mask.data, 4, (int64_t[]){1, 1, 16, 20});
    samc_tensor sp0 = tensor_zeros(3, (int64_t[]){1, 0, 16}), d1 = tensor_zeros(4, (int64_t[]){1, 16, 4, 5});
    assert_int_equal(samc_ref_prompt_encoder(tu_ctx(), &pe, NULL, NULL, 1, 0, NULL, &mask1, &sp0, &d1), SAMC_OK);
    check_ref(&k_pe_dense3, &d1, "dense3");
    /* a sparse tensor without the padding token is refused */
    assert_int_equal(samc_ref_prompt_encoder(tu_ctx(), &pe, pts, labels, 2, 1, NULL, NULL, &sparse, &dense), SAMC_ERR_SHAPE);
    samc_tensor_release(&sparse), samc_tensor_release(&dense), samc_tensor_release(&sp0);
    samc_tensor_release(&d1), wgen_free(&g);
}

/* ---- two-way transformer: D=16, 2 heads, mlp 32, downsample 2 ----------- */

static samc_twoway_transformer mk_transformer(wgen *g)
{
    samc_twoway_transformer tr = {.depth = 2};
    g->seed = 300;
    for (int i = 0; i < 2; i++) {
        samc_twoway_block *b = &tr.layers[i];
        b->skip_first_layer_pe = i == 0;
        b->self_attn = mk_attention(g, 16, 1, 2);
        b->norm1 = mk_norm(g, 16, 1e-5f);
        b->cross_t2i = mk_attention(g, 16, 2, 2);
        b->norm2 = mk_norm(g, 16, 1e-5f);
        b->mlp_fc1 = mk_linear(g, 16, 32);
        b->mlp_fc2 = mk_linear(g, 32, 16);
        b->norm3 = mk_norm(g, 16, 1e-5f);
        b->norm4 = mk_norm(g, 16, 1e-5f);
        b->cross_i2t = mk_attention(g, 16, 2, 2);
    }
    tr.final_attn = mk_attention(g, 16, 2, 2);
    tr.norm_final = mk_norm(g, 16, 1e-5f);
    return tr;
}

/* Both layers and the tail; key_pe has batch 1 (broadcast). */
static void test_twoway(void **state)
{
    (void)state;
    wgen g = {0};
    samc_twoway_transformer tr = mk_transformer(&g);
    const int64_t ks[3] = {2, 20, 16}, kps[3] = {1, 20, 16}, qs[3] = {2, 7, 16};
    samc_tensor keys = tensor_gen(&g, 3, ks, 21, 1.0f, 0.0f), kpe = tensor_gen(&g, 3, kps, 22, 1.0f, 0.0f);
    samc_tensor toks = tensor_gen(&g, 3, qs, 23, 1.0f, 0.0f);
    samc_tensor q0 = tensor_zeros(3, qs), k0 = tensor_zeros(3, ks), q1 = tensor_zeros(3, qs);
    samc_tensor k1 = tensor_zeros(3, ks), fin = tensor_zeros(3, qs);
    assert_int_equal(samc_ref_twoway_block(tu_ctx(), &tr.layers[0], &toks, &keys, &toks, &kpe, &q0, &k0), SAMC_OK);
    check_ref(&k_tw_q0, &q0, "layer0 q");
    check_ref(&k_tw_k0, &k0, "layer0 k");
    assert_int_equal(samc_ref_twoway_block(tu_ctx(), &tr.layers[1], &q0, &k0, &toks, &kpe, &q1, &k1), SAMC_OK);
    check_ref(&k_tw_q1, &q1, "layer1 q");
    check_ref(&k_tw_k1, &k1, "layer1 k");
    assert_int_equal(samc_ref_twoway_final(tu_ctx(), &tr, &q1, &k1, &toks, &kpe, &fin), SAMC_OK);
    check_ref(&k_tw_final, &fin, "final q");
    assert_int_equal(samc_ref_twoway_final(tu_ctx(), &tr, &q1, &k1, &toks, &kpe, &k0), SAMC_ERR_SHAPE);
    samc_tensor_release(&q0), samc_tensor_release(&k0), samc_tensor_release(&q1);
    samc_tensor_release(&k1), samc_tensor_release(&fin), wgen_free(&g);
}

/* ---- mask decoder heads: D=16, 4 mask tokens, embedding 4x5 ------------- */

static samc_mask_decoder mk_decoder(wgen *g, uint32_t base, bool hr, bool obj, bool obj_mlp, bool sig)
{
    samc_mask_decoder d = {.dim = 16, .num_mask_tokens = 4, .pred_obj_scores = obj,
                           .pred_obj_scores_mlp = obj_mlp, .use_high_res_features = hr, .iou_sigmoid = sig};
    g->seed = base; /* MaskDecoder.named_parameters() order */
    d.iou_token = w_mat(g, 16);
    d.mask_tokens = w_mat(g, 4 * 16);
    d.obj_score_token = obj ? w_mat(g, 16) : NULL;
    d.up0 = (samc_conv_t2d){.cin = 16, .cout = 4, .k = 2};
    d.up0.w = w_mat(g, 16 * 4 * 4);
    d.up0.b = w_bias(g, 4);
    d.up_norm = mk_norm(g, 4, 1e-6f);
    d.up1 = (samc_conv_t2d){.cin = 4, .cout = 2, .k = 2};
    d.up1.w = w_mat(g, 4 * 2 * 4);
    d.up1.b = w_bias(g, 2);
    if (hr)
        g->seed += 4; /* conv_s0 / conv_s1: run by forward_image, not by the heads */
    for (int t = 0; t < 4; t++)
        d.hyper[t] = mk_mlp(g, 16, 16, 2, 3, false);
    d.iou_head = mk_mlp(g, 16, 16, 4, 3, false); /* the sigmoid comes from iou_sigmoid */
    if (obj)
        d.obj_head = obj_mlp ? mk_mlp(g, 16, 16, 1, 3, false) : mk_mlp(g, 16, 0, 1, 1, false);
    return d;
}

static void run_decoder(const samc_mask_decoder *d, const samc_tensor *f0, const samc_tensor *f1,
                        const ref_check *rm, const ref_check *ri, const ref_check *ro, const char *tag)
{
    wgen g = {0};
    samc_tensor hs = tensor_gen(&g, 3, (int64_t[]){2, 9, 16}, 31, 1.0f, 0.0f);
    samc_tensor keys = tensor_gen(&g, 3, (int64_t[]){2, 20, 16}, 32, 1.0f, 0.0f);
    samc_tensor masks = tensor_zeros(4, (int64_t[]){2, 4, 16, 20}), iou = tensor_zeros(2, (int64_t[]){2, 4});
    samc_tensor obj = tensor_zeros(2, (int64_t[]){2, 1});
    assert_int_equal(samc_ref_mask_decoder_heads(tu_ctx(), d, &hs, &keys, 4, 5, f0, f1, &masks, &iou, &obj), SAMC_OK);
    printf(" decoder %s\n", tag);
    check_ref(rm, &masks, "masks");
    check_ref(ri, &iou, "iou");
    check_ref(ro, &obj, "object score");
    samc_tensor_release(&masks), samc_tensor_release(&iou), samc_tensor_release(&obj), wgen_free(&g);
}

/* a: high-res features broadcast from batch 1, MLP object head, IoU sigmoid;
 * b: no high-res features, Linear object head, no sigmoid;
 * c: per-batch high-res features, no object scores (constant 10). */
static void test_mask_decoder_heads(void **state)
{
    (void)state;
    wgen g = {0};
    samc_tensor f0 = tensor_gen(&g, 4, (int64_t[]){1, 2, 16, 20}, 33, 1.0f, 0.0f);
    samc_tensor f1 = tensor_gen(&g, 4, (int64_t[]){1, 4, 8, 10}, 34, 1.0f, 0.0f);
    samc_tensor f0b = tensor_gen(&g, 4, (int64_t[]){2, 2, 16, 20}, 35, 1.0f, 0.0f);
    samc_tensor f1b = tensor_gen(&g, 4, (int64_t[]){2, 4, 8, 10}, 36, 1.0f, 0.0f);
    samc_mask_decoder a = mk_decoder(&g, 500, true, true, true, true);
    run_decoder(&a, &f0, &f1, &k_md_masks_a, &k_md_iou_a, &k_md_obj_a, "a");
    samc_mask_decoder b = mk_decoder(&g, 600, false, true, false, false);
    run_decoder(&b, NULL, NULL, &k_md_masks_b, &k_md_iou_b, &k_md_obj_b, "b");
    samc_mask_decoder c = mk_decoder(&g, 700, true, false, false, true);
    run_decoder(&c, &f0b, &f1b, &k_md_masks_c, &k_md_iou_c, &k_md_obj_c, "c");
    /* high-res features missing while the decoder wants them */
    samc_tensor hs = tensor_zeros(3, (int64_t[]){2, 9, 16}), keys = tensor_zeros(3, (int64_t[]){2, 20, 16});
    samc_tensor masks = tensor_zeros(4, (int64_t[]){2, 4, 16, 20}), iou = tensor_zeros(2, (int64_t[]){2, 4});
    samc_tensor obj = tensor_zeros(2, (int64_t[]){2, 1});
    assert_int_equal(samc_ref_mask_decoder_heads(tu_ctx(), &a, &hs, &keys, 4, 5, NULL, NULL, &masks, &iou, &obj),
                     SAMC_ERR_SHAPE);
    samc_tensor_release(&hs), samc_tensor_release(&keys), samc_tensor_release(&masks);
    samc_tensor_release(&iou), samc_tensor_release(&obj), wgen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_pe),
        cmocka_unit_test(test_prompt_points),
        cmocka_unit_test(test_prompt_box_mask),
        cmocka_unit_test(test_twoway),
        cmocka_unit_test(test_mask_decoder_heads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
