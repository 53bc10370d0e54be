/* SPDX-License-Identifier: Apache-2.0 */
/* video_file_decode.c - frames of an opened video file on demand: the
 * decode loop, seeking to the key frame before a frame, the frame cache and
 * the conversion to RGB as OpenCV's VideoCapture does it (video_file.h). */
#include <libavutil/imgutils.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/image_io.h"
#include "core/io/video_file_internal.h"
#include "core/nn/resize_cv2.h"

/* A frame this far past the last one decoded is reached by decoding
 * forward; farther (or backwards) by seeking. */
enum { FORWARD_WINDOW = 64 };

/* The index of timestamp ts, -1 when the container did not list it. */
static int frame_of(const samc_video_file *v, int64_t ts)
{
    int lo = 0, hi = v->count - 1;
    while (lo <= hi) {
        const int mid = lo + (hi - lo) / 2;
        if (v->ts[mid] == ts)
            return mid;
        if (v->ts[mid] < ts)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The next decoded frame into v->frame: 0, AVERROR_EOF at the end of the
 * stream, or the decoder's error. A packet the decoder refuses is skipped
 * (its frame never comes out; the reader names it); `refused` keeps why. */
static int decode_one(samc_video_file *v, int *refused)
{
    for (;;) {
        int r = avcodec_receive_frame(v->dec, v->frame);
        if (r != AVERROR(EAGAIN) || v->demux_done)
            return r == AVERROR(EAGAIN) ? AVERROR_EOF : r;
        r = av_read_frame(v->fmt, v->pkt);
        if (r < 0) { /* the end, or a damaged tail the index already reported */
            avcodec_send_packet(v->dec, NULL);
            v->demux_done = true;
            continue;
        }
        if (v->pkt->stream_index == v->stream && (r = avcodec_send_packet(v->dec, v->pkt)) < 0)
            *refused = r;
        av_packet_unref(v->pkt);
    }
}

static samc_status seek_to(samc_video_file *v, int t, samc_error *err)
{
    int r = av_seek_frame(v->fmt, v->stream, v->ts[t], AVSEEK_FLAG_BACKWARD);
    if (r < 0)
        r = avformat_seek_file(v->fmt, v->stream, INT64_MIN, v->ts[t], v->ts[t], 0);
    if (r < 0) {
        char b[128];
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot seek to frame %d: %s", v->what, t,
                         samc__av_err(r, b, sizeof b));
    }
    avcodec_flush_buffers(v->dec);
    v->demux_done = false;
    v->last_out = -1;
    /* Frames a decoder outputs before the key frame it restarted from may
     * reference pictures before the seek point (open GOPs): not trusted. */
    v->after_seek = t > 0;
    return SAMC_OK;
}

/* v->frame to RGB: libswscale to BGR24 with SWS_BICUBIC over the coded
 * size, then the displayed part with R and B swapped (cv2.VideoCapture's
 * retrieveFrame, then cv2.cvtColor BGR2RGB). */
static samc_status to_rgb(samc_video_file *v, uint8_t *rgb, samc_error *err)
{
    const AVFrame *f = v->frame;
    if (f->width != v->fw || f->height != v->fh)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: the frame size changes from %dx%d to %dx%d mid-stream",
                         v->what, v->fw, v->fh, f->width, f->height);
    const int cw = v->dec->coded_width > f->width ? v->dec->coded_width : f->width;
    const int ch = v->dec->coded_height > f->height ? v->dec->coded_height : f->height;
    v->sws = sws_getCachedContext(v->sws, cw, ch, f->format, cw, ch, AV_PIX_FMT_BGR24, SWS_BICUBIC, NULL, NULL, NULL);
    if (!v->sws)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: cannot convert pixel format %s to RGB", v->what,
                         av_get_pix_fmt_name(f->format));
    if (!v->bgr || v->bgr_w != cw || v->bgr_h != ch) {
        av_free(v->bgr);
        v->bgr_w = v->bgr_h = 0;
        /* libswscale's SIMD may write a little past a row: padded */
        if (!(v->bgr = av_malloc((size_t)cw * ch * 3 + 64)))
            return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        v->bgr_w = cw, v->bgr_h = ch;
    }
    uint8_t *dst[4] = {v->bgr, NULL, NULL, NULL};
    const int ls[4] = {cw * 3, 0, 0, 0};
    if (sws_scale(v->sws, (const uint8_t *const *)f->data, f->linesize, 0, ch, dst, ls) < 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: pixel conversion failed", v->what);
    for (int y = 0; y < v->fh; y++)
        for (int x = 0; x < v->fw; x++) {
            const uint8_t *s = v->bgr + ((size_t)y * cw + x) * 3;
            int X = x, Y = y; /* where (x, y) lands after the rotation (cv::rotate) */
            if (v->rotation == 90)
                X = v->fh - 1 - y, Y = x;
            else if (v->rotation == 180)
                X = v->fw - 1 - x, Y = v->fh - 1 - y;
            else if (v->rotation == 270)
                X = y, Y = v->fw - 1 - x;
            uint8_t *d = rgb + ((size_t)Y * v->w + X) * 3;
            d[0] = s[2], d[1] = s[1], d[2] = s[0];
        }
    return SAMC_OK;
}

/* ---- the frame cache ------------------------------------------------------- */

static int cache_slots(const samc_video_file *v)
{
    const size_t per = (size_t)v->w * v->h * 3, n = SAMC_VIDEO_CACHE_BYTES / per;
    return n < 2 ? 2 : n > SAMC_VIDEO_CACHE_MAX ? SAMC_VIDEO_CACHE_MAX : (int)n;
}

static samc_video_cached *cache_find(samc_video_file *v, int t)
{
    for (int i = 0; i < v->cache_n; i++)
        if (v->cache[i].idx == t) {
            v->cache[i].used = ++v->clock;
            return &v->cache[i];
        }
    return NULL;
}

/* A slot for frame t: a new one while under the budget, else the least
 * recently used. */
static samc_video_cached *cache_take(samc_video_file *v, int t, samc_error *err)
{
    samc_video_cached *c = NULL;
    if (v->cache_n < cache_slots(v)) {
        c = &v->cache[v->cache_n];
        if (!(c->rgb = malloc((size_t)v->w * v->h * 3))) {
            samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        v->cache_n++;
    } else {
        c = &v->cache[0];
        for (int i = 1; i < v->cache_n; i++)
            if (v->cache[i].used < c->used)
                c = &v->cache[i];
    }
    c->idx = t, c->used = ++v->clock;
    return c;
}

/* ---- reading a frame ------------------------------------------------------- */

static samc_status not_decoded(const samc_video_file *v, int t, int refused, samc_error *err)
{
    char b[128];
    if (refused)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: frame %d cannot be decoded (%s)", v->what, t,
                         samc__av_err(refused, b, sizeof b));
    return samc_fail(err, SAMC_ERR_FORMAT, "%s: frame %d cannot be decoded (the decoder skipped it)", v->what, t);
}

/* Decode forward until frame t is in the cache. */
static samc_status decode_until(samc_video_file *v, int t, samc_video_cached **hit, samc_error *err)
{
    int refused = 0;
    for (;;) {
        const int r = decode_one(v, &refused);
        if (r == AVERROR_EOF)
            return not_decoded(v, t, refused, err);
        if (r < 0) {
            char b[128];
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: decoding frame %d failed: %s", v->what, t,
                             samc__av_err(r, b, sizeof b));
        }
        const int idx = frame_of(v, v->frame->best_effort_timestamp);
        if (v->after_seek && !v->frame->key_frame) {
            av_frame_unref(v->frame);
            continue;
        }
        v->after_seek = false;
        samc_status st = SAMC_OK;
        if (idx < 0)
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: a decoded frame's timestamp is not in the container's index",
                           v->what);
        else if (idx > t)
            st = not_decoded(v, t, refused, err);
        samc_video_cached *c = st ? NULL : cache_find(v, idx);
        if (!st && !c && (!(c = cache_take(v, idx, err)) || (st = to_rgb(v, c->rgb, err)))) {
            if (c)
                c->idx = -1;
            st = st ? st : SAMC_ERR_NOMEM;
        }
        const bool concealed = v->frame->decode_error_flags || (v->frame->flags & AV_FRAME_FLAG_CORRUPT);
        av_frame_unref(v->frame);
        if (st)
            return st;
        if (concealed && (v->first_concealed < 0 || idx < v->first_concealed))
            v->first_concealed = idx;
        v->last_out = idx;
        if (idx == t) {
            *hit = c;
            return SAMC_OK;
        }
    }
}

samc_status samc_video_file_frame(samc_video_file *v, int t, const uint8_t **rgb, samc_error *err)
{
    *rgb = NULL;
    if (t < 0 || t >= v->count)
        return samc_fail(err, SAMC_ERR_ARG, "%s: frame %d is outside 0..%d", v->what, t, v->count - 1);
    samc_video_cached *c = cache_find(v, t);
    samc_status st = SAMC_OK;
    if (!c) {
        const bool forward = (v->last_out >= 0 && t > v->last_out && t - v->last_out <= FORWARD_WINDOW) ||
                             (v->at_start && t <= FORWARD_WINDOW);
        if (!forward && (st = seek_to(v, t, err)))
            return st;
        v->at_start = false;
        st = decode_until(v, t, &c, err);
    }
    if (!st)
        *rgb = c->rgb;
    return st;
}

samc_status samc_video_file_resized(samc_video_file *v, int t, int S, const uint8_t **rgb, samc_error *err)
{
    *rgb = NULL;
    if (S < 1 || S > SAMC_IMAGE_MAX_SIDE)
        return samc_fail(err, SAMC_ERR_ARG, "%s: resize to %d x %d", v->what, S, S);
    if (v->resized_idx != t || v->resized_S != S) {
        const uint8_t *src = NULL;
        samc_status st = samc_video_file_frame(v, t, &src, err);
        if (st)
            return st;
        if (v->resized_S != S) {
            free(v->resized);
            v->resized_S = 0, v->resized_idx = -1;
            if (!(v->resized = malloc((size_t)S * S * 3)))
                return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            v->resized_S = S;
        }
        if (samc_resize_cv2_cubic_rgb(src, v->h, v->w, S, S, v->resized))
            return samc_fail(err, SAMC_ERR_NOMEM, "%s: frame %d: resize failed", v->what, t);
        v->resized_idx = t;
    }
    *rgb = v->resized;
    return SAMC_OK;
}
