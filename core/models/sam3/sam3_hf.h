/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_hf.h - SAM 3 checkpoints in the transformers naming (sam3_hf.c). */
#ifndef SAMC_MODELS_SAM3_HF_H
#define SAMC_MODELS_SAM3_HF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/io/weights.h"

/* The transformers converter's name of an official SAM 3 detector key (the
 * image model's own name, without "detector."), before split_qkv. */
void samc_sam3_hf_key(const char *official, char *out, size_t n);
/* Whether `w` holds a SAM 3 image model in the transformers naming. */
bool samc_sam3_is_hf(const samc_weights *w);
/* Make such a store answer to the official names: q/k/v fused back, the
 * pos_embed cls row and the text projection's orientation restored, the
 * key map set as its naming. */
samc_status samc_sam3_hf_adapt(samc_weights *w, samc_error *err);

#endif
