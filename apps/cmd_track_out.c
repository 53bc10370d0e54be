/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_track_out.c - `samc track --out-video` and `--palette-png` (cmd_track.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cmd_track.h"
#include "core/base/error.h"

samc_status track_palette_png(const char *dir, const char *stem, const samc_frame_masks *m, samc_error *err)
{
    const int64_t hw = (int64_t)m->height * m->width;
    uint8_t *idx = calloc((size_t)hw, 1);
    if (!idx)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    /* The largest id first, so smaller ids are written over it. */
    int done = 0, last = TRACK_PALETTE_MAX_ID + 1;
    while (done < m->n_obj) {
        int k = -1;
        for (int j = 0; j < m->n_obj; j++)
            if (m->obj_ids[j] < last && (k < 0 || m->obj_ids[j] > m->obj_ids[k]))
                k = j;
        if (k < 0)
            break;
        const float *lg = m->logits + (int64_t)k * hw;
        for (int64_t i = 0; i < hw; i++)
            if (lg[i] > 0.0f)
                idx[i] = (uint8_t)m->obj_ids[k];
        last = m->obj_ids[k];
        done++;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.png", dir, stem);
    samc_status st = samc_write_palette_png(path, idx, m->height, m->width, NULL, 0, err);
    free(idx);
    return st;
}

samc_status track_video_open(track_video *v, const char *path, int h, int w, double fps, samc_error *err)
{
    *v = (track_video){0};
    return path ? samc_video_writer_open(path, h, w, fps, &v->w, err) : SAMC_OK;
}

samc_status track_video_add(track_video *v, const uint8_t *rgb, samc_error *err)
{
    samc_status st = v->w ? samc_video_writer_add(v->w, rgb, err) : SAMC_OK;
    v->frames += v->w && !st;
    return st;
}

samc_status track_video_close(track_video *v, samc_error *err)
{
    samc_status st = SAMC_OK;
    if (v->w && v->frames)
        st = samc_video_writer_close(v->w, err);
    else
        samc_video_writer_abort(v->w);
    v->w = NULL;
    return st;
}
