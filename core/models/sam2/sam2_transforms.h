/* SPDX-License-Identifier: Apache-2.0 */
/* sam2_transforms.h - the video loader's frame transform, shared by the ref
 * and fast bodies of @preprocess (video). */
#ifndef SAMC_MODELS_SAM2_TRANSFORMS_H
#define SAMC_MODELS_SAM2_TRANSFORMS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/tensor.h"

/* misc._load_img_as_tensor + load_video_frames_from_jpg_images: PIL bicubic
 * to S x S on uint8, / 255.0 in float64 stored as float32, then
 * (x - mean) / std in float32 -> out (1,3,S,S), allocated by the caller. */
samc_status samc_sam2_frame_to_tensor(const uint8_t *rgb, int h, int w, int S, samc_tensor *out, samc_error *err);

#endif
