/* ref_sam2.h - the ref/ bodies of every SAM 2 layer kind, one file per
 * official module (contracts: core/models/sam2/sam2_layers.h). The
 * declarations come from the kind lists, so adding a kind adds a body file
 * and nothing here. */
#ifndef SAMC_REF_SAM2_H
#define SAMC_REF_SAM2_H

#include "core/models/sam2/sam2_layers.h"

#define SAMC_X(kind) samc_sam2_##kind##_fn samc_ref_##kind;
SAMC_SAM2_IMAGE_OPS(SAMC_X)
SAMC_SAM2_VIDEO_OPS(SAMC_X)
#undef SAMC_X

extern const samc_sam2_image_ops samc_ref_sam2_image_ops;
extern const samc_sam2_video_ops samc_ref_sam2_video_ops;

#endif
