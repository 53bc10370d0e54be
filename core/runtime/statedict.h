/* SPDX-License-Identifier: Apache-2.0 */
/* statedict.h - a model's state_dict described once.
 *
 * A family describes its weights in one walk (core/models/<family>/):
 * every expected key with its shape, in the order of the official module
 * tree, binding each record as it goes:
 *
 *   samc_sd_mount(sd, "image_encoder");         (the part's root, once)
 *   samc_sd_prefix(sd, "trunk.blocks.%d.", i);  (relative to the root)
 *   samc_sd_norm(sd, &blk->norm1, "norm1", dim, 1e-6f);
 *   samc_sd_linear(sd, &blk->qkv, "attn.qkv", dim, 3 * dim_out);
 *
 * The same walk serves three purposes: against a weight store it checks
 * (like load_state_dict(strict=True): every key present with its shape, no
 * unexpected key) and binds; without one it only lists the keys
 * (checkpoint makers, `samc info --keys`). A mismatch never stops the walk
 * (the records of a failed walk are thrown away before any compute);
 * samc_sd_finish() gives the verdict, naming the first mis-shaped or missing
 * key with expected and actual shapes, or the unexpected keys.
 */
#ifndef SAMC_CORE_RUNTIME_STATEDICT_H
#define SAMC_CORE_RUNTIME_STATEDICT_H

#include <stdbool.h>

#include "core/base/error.h"
#include "core/io/weights.h"
#include "core/runtime/exec.h"
#include "core/runtime/impl.h"

typedef struct samc_key_spec {
    char key[160];
    int ndim;
    int64_t shape[4];
} samc_key_spec;

typedef struct samc_key_list {
    samc_key_spec *items;
    int count, cap;
} samc_key_list;

void samc_key_list_free(samc_key_list *l);

typedef struct samc_sd {
    const samc_weights *w;      /* NULL: describe only */
    const char *base;           /* prepended to every key ("detector." in sam3.pt), "" by default */
    samc_param_list *params;    /* bound linear/conv records are added here (may be NULL) */
    char root[128];             /* the mounted part's root with its '.', "" at the top */
    char prefix[160];
    samc_key_list keys;         /* every key described, in walk order */
    samc_status st;             /* SAMC_ERR_NOMEM when a list could not grow */
    int missing, first_missing; /* index into keys, -1 */
    int first_bad_shape;        /* index into keys, -1 */
} samc_sd;

/* Start a walk over `w` (NULL: describe only), keys prefixed by `base`. */
void samc_sd_begin(samc_sd *sd, const samc_weights *w, const char *base, samc_param_list *params);
void samc_sd_free(samc_sd *sd);
/* The part mounted at `root` describes its keys next (relative to root;
 * the prefix is cleared). */
void samc_sd_mount(samc_sd *sd, const char *root);
/* The prefix of the following keys (after `base` and the root). */
void samc_sd_prefix(samc_sd *sd, const char *fmt, ...) SAMC_PRINTF(2, 3);

/* The data of "<base><prefix><name>", which must have `shape` (up to 4
 * dims); NULL when it is missing or mis-shaped, or when describing. */
const float *samc_sd_tensor(samc_sd *sd, int ndim, const int64_t *shape, const char *fmt, ...) SAMC_PRINTF(4, 5);

/* nn.Linear(in, out) (bias or not). */
void samc_sd_linear(samc_sd *sd, samc_linear *l, const char *name, int in, int out, bool bias);
/* LayerNorm / LayerNorm2d / GroupNorm affine parameters of `dim`. */
void samc_sd_norm(samc_sd *sd, samc_norm *n, const char *name, int dim, float eps);
/* nn.Conv2d(cin, cout, k, stride, pad, groups) (bias or not). */
void samc_sd_conv(samc_sd *sd, samc_conv2d *c, const char *name, int cin, int cout, int k, int stride, int pad,
                  int groups, bool bias);
/* nn.ConvTranspose2d(cin, cout, k, stride=k) with bias. */
void samc_sd_conv_t(samc_sd *sd, samc_conv_t2d *c, const char *name, int cin, int cout, int k);
/* sam2_utils.MLP(in, hidden, out, n): "<name>.layers.<i>". */
void samc_sd_mlp(samc_sd *sd, samc_mlp *m, const char *name, int in, int hidden, int out, int n, bool sigmoid);
/* sam.transformer.Attention: q_proj/k_proj/v_proj/out_proj, kv_in for k and v. */
void samc_sd_attention(samc_sd *sd, samc_attention *a, const char *name, int dim, int internal, int kv_in,
                       int heads);

/* Every part of a family, in mount order, each mounted at its root (or
 * its `keys` root where the mount gives one):
 * part->describe(sd, model + offset, model + cfg_offset). Stops at the
 * first part that fails (a config it cannot describe); a missing or
 * mis-shaped key never stops the walk (samc_sd_finish reports it). */
samc_status samc_sd_family(samc_sd *sd, const samc_layer_family *fam, void *model, samc_error *err);

/* The verdict of a checking walk: SAMC_OK, or an error naming the source,
 * the first mis-shaped key (expected and actual shape), else the first
 * missing key (and how many are missing), else the unexpected keys.
 * `what` names the config in messages. Keys of `w` outside `base` are not
 * unexpected when `base` is set (a sam3.pt holds detector.* and tracker.*). */
samc_status samc_sd_finish(samc_sd *sd, const char *what, samc_error *err);

#endif
