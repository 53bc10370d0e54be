/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_inst.h - SAM 3's SAM 1 task on an image (Sam3Image.predict_inst,
 * SAM3InteractiveImagePredictor; docs/sam3_video.md 9): points, a box and
 * a mask input through the tracker's SAM heads on the image's tracker
 * neck, with the predictor's own hole filling. Runs on an exec of the inst
 * family (samc_sam3_inst_exec_init) of a model with its tracker. */
#ifndef SAMC_CORE_MODELS_SAM3_INST_H
#define SAMC_CORE_MODELS_SAM3_INST_H

#include "core/models/sam3/sam3_predict.h"
#include "core/models/tracker/image_predict.h"

/* The part of the @inst_features record (mounted at the root). */
extern const samc_part_def samc_sam3_inst_part;

/* Sam3Processor.set_image's tracker features of an image encoded with its
 * tracker neck: conv_s0 / conv_s1 on levels 0 / 1 (float32: no bfloat16
 * here), level 2 + no_mem_embed. */
samc_status samc_sam3_inst_features(samc_exec *x, const samc_sam3_image *img, samc_frame_features *f,
                                    samc_error *err);
/* predict_inst(return_logits=True) on those features: the prompt in image
 * pixels; masks at the image size, IoUs, low-res logits. */
samc_status samc_sam3_predict_inst(samc_exec *x, const samc_frame_features *f, const samc_sam_prompt *p,
                                   samc_sam_prediction *out, samc_error *err);
/* An exec of the inst family (sam3_video_model.c). */
samc_status samc_sam3_inst_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err);

#endif
