/* position_encoding.h - sam2/modeling/position_encoding.py:
 * PositionEmbeddingSine._pe, used by the FPN neck (d = 256) and the memory
 * encoder (d = 64). */
#ifndef SAMC_CORE_POSITION_ENCODING_H
#define SAMC_CORE_POSITION_ENCODING_H

#include "layers.h"

/* One image's encoding, (d, H, W) with d = pe->num_pos_feats, in the float32
 * arithmetic and order of the official code. The official forward repeats
 * it over the batch. Returns SAMC_ERR_UNSUPPORTED when d is not a multiple of
 * 4 (the official torch.stack of the sin/cos halves then fails), SAMC_ERR_ARG
 * for H or W < 1. */
samc_status samc_sine_pe_fill(const samc_sine_pe *pe, int H, int W, float *out);

#endif
