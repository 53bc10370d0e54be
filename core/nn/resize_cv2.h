/* SPDX-License-Identifier: Apache-2.0 */
/* resize_cv2.h - OpenCV's cv2.resize(INTER_CUBIC) on 8-bit RGB, bit-exact.
 *
 * SAM 3's video-file loader (sam3/model/io_utils.py,
 * load_video_frames_from_video_file_using_cv2, the official default) resizes
 * each decoded frame to the model's square input with
 * cv2.resize(frame, (S, S), interpolation=cv2.INTER_CUBIC); samc's video
 * files go through the same arithmetic (docs/video.md says why this loader).
 * OpenCV 4.6 (imgproc/src/resize.cpp, resizeGeneric_ with HResizeCubic and
 * VResizeCubic): Keys' cubic with A = -0.75 on the source positions
 * (dx + 0.5) * scale - 0.5 (float), the four taps per axis as int16 with 11
 * fraction bits, edge pixels replicated, a horizontal pass into int32 rows,
 * then a vertical pass that OpenCV's SSE2 build evaluates in float for whole
 * 16-byte groups (VResizeCubicVec_32s8u) and in integers for the rest of a
 * row (FixedPtCast, 22 bits). */
#ifndef SAMC_CORE_RESIZE_CV2_H
#define SAMC_CORE_RESIZE_CV2_H

#include <stdint.h>

#include "samc_status.h"

/* rgb (h, w, 3) -> out (H, W, 3). */
samc_status samc_resize_cv2_cubic_rgb(const uint8_t *rgb, int h, int w, int H, int W, uint8_t *out);

#endif
