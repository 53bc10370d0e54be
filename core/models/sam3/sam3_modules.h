/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_modules.h - the weights of the modules several SAM 3 parts hold:
 * nn.MultiheadAttention with its packed in_proj (text blocks, the DETR
 * layers, the segmentation head) and encoder.TransformerEncoderLayer (the
 * geometry and fusion encoders, with its isolated runner). Internal to
 * core/models/sam3/. */
#ifndef SAMC_CORE_MODELS_SAM3_MODULES_H
#define SAMC_CORE_MODELS_SAM3_MODULES_H

#include "core/models/sam3/sam3_config.h"
#include "core/models/sam3/sam3_layers.h"
#include "core/runtime/exec.h"
#include "core/runtime/statedict.h"

/* nn.MultiheadAttention at `name` (under the walk's prefix): in_proj_weight
 * (3d, d) bound as three row views, out_proj. */
void samc__sam3_sd_mha(samc_sd *sd, samc_attention *a, const char *name, int d, int heads);
/* A TransformerEncoderLayer under the walk's prefix. */
void samc__sam3_sd_enc_layer(samc_sd *sd, samc_sam3_enc_layer *l, const samc_sam3_enc_layer_config *c);
/* The isolated runner of a TransformerEncoderLayer row (`l` its record):
 * in/tgt, memory, and the optional padding masks and positions. */
samc_status samc__sam3_iso_enc_layer(samc_exec *x, const samc_layer *L, const samc_sam3_enc_layer *l,
                                     const samc_layer_io *in, samc_layer_out *out, samc_error *err);
/* samc_sine_pe of a PositionEmbeddingSine config (scale None: 2 pi). */
samc_sine_pe samc__sam3_sine_pe(const samc_sine_pe_config *c);

#endif
