/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_video_file.c - video files from hostile bytes (core/io/video_file*.c
 * on FFmpeg's demuxers and decoders, read from memory as samc serve reads an
 * upload): open, then read frames forward, one backwards (a seek) and one
 * resized to a model input. Invariants: a refusal has a message; an opened
 * video has frames and a size within samc's limits, and every frame read is
 * that size (each byte read, so ASan sees a short buffer). Videos larger than
 * 2 megapixels are opened but not decoded (fuzzing speed). Seeds:
 * fuzz/seeds/video_file/. */
#include <stdlib.h>

#include "core/io/image_io.h"
#include "core/io/video_file.h"
#include "fuzz_common.h"

static void read_frame(samc_video_file *v, int t)
{
    const uint8_t *rgb = NULL;
    samc_error e = {0};
    samc_status st = samc_video_file_frame(v, t, &rgb, &e);
    fuzz_check_error(st, &e, "fuzz", "video frame");
    if (!st)
        fuzz_touch_bytes(rgb, (size_t)samc_video_file_width(v) * samc_video_file_height(v) * 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samc_video_file *v = NULL;
    samc_error e = {0};
    samc_status st = samc_video_file_open_memory(data, size, "fuzz", &v, &e);
    fuzz_check_error(st, &e, "fuzz", "video open");
    if (st)
        return 0;
    const int n = samc_video_file_count(v), w = samc_video_file_width(v), h = samc_video_file_height(v);
    if (n < 1 || w < 1 || h < 1 || (long long)w * h > SAMC_IMAGE_MAX_PIXELS)
        abort();
    if ((long long)w * h <= 2000000) {
        for (int t = 0; t < n && t < 6; t++)
            read_frame(v, t);
        read_frame(v, 0);
        read_frame(v, n - 1);
        const uint8_t *rs = NULL;
        st = samc_video_file_resized(v, n / 2, 32, &rs, &e);
        fuzz_check_error(st, &e, "fuzz", "video resize");
        if (!st)
            fuzz_touch_bytes(rs, 32 * 32 * 3);
    }
    samc_video_file_free(v);
    return 0;
}
