/* ops_table.c - the SAM 2 tables of the scalar reference: every kind's body
 * samc_ref_<kind> (generated from the kind lists of sam2_layers.h). */
#include "ref/sam2/ref_sam2.h"

const samc_sam2_image_ops samc_ref_sam2_image_ops = {
#define SAMC_X(kind) .kind = samc_ref_##kind,
    SAMC_SAM2_IMAGE_OPS(SAMC_X)
#undef SAMC_X
};

const samc_sam2_video_ops samc_ref_sam2_video_ops = {
#define SAMC_X(kind) .kind = samc_ref_##kind,
    SAMC_SAM2_VIDEO_OPS(SAMC_X)
#undef SAMC_X
};
