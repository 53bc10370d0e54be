/* ops_table.c - the SAM 2 tables of the fast implementation: every kind's body
 * samc_fast_<kind> (generated from the kind lists of sam2_layers.h). */
#include "fast/sam2/fast_sam2.h"

const samc_sam2_image_ops samc_fast_sam2_image_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_SAM2_IMAGE_OPS(SAMC_X)
#undef SAMC_X
};

const samc_sam2_video_ops samc_fast_sam2_video_ops = {
#define SAMC_X(kind) .kind = samc_fast_##kind,
    SAMC_SAM2_VIDEO_OPS(SAMC_X)
#undef SAMC_X
};
