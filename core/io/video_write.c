/* SPDX-License-Identifier: Apache-2.0 */
/* video_write.c - RGB frames to a video file (video_write.h). */
#include "core/io/video_write.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/error.h"
#include "core/io/image_io.h"
#include "core/io/video_file_internal.h"

struct samc_video_out {
    char path[4096], tmp[4200];
    AVFormatContext *oc;
    AVCodecContext *enc;
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    uint8_t *padded;            /* the RGB frame at the even size */
    int h, w, eh, ew;           /* given and encoded (even) size */
    int n;
};

int samc_video_out_count(const samc_video_out *o) { return o->n; }

static samc_status av_fail(const samc_video_out *o, samc_error *err, const char *what, int code)
{
    char b[128];
    return samc_fail(err, SAMC_ERR_IO, "%s: %s: %s", o->path, what, samc__av_err(code, b, sizeof b));
}

void samc_video_out_abort(samc_video_out *o)
{
    if (!o)
        return;
    if (o->oc && o->oc->pb)
        avio_closep(&o->oc->pb);
    if (o->tmp[0])
        remove(o->tmp);
    avformat_free_context(o->oc);
    avcodec_free_context(&o->enc);
    av_frame_free(&o->frame);
    av_packet_free(&o->pkt);
    sws_freeContext(o->sws);
    free(o->padded);
    free(o);
}

/* The container's usual encoder that this libavcodec has: the format's
 * default (H.264 is libx264, which a build may lack), else MPEG-4 part 2
 * (VP8 for WebM). */
static const AVCodec *pick_encoder(const AVOutputFormat *fmt)
{
    const AVCodec *c = fmt->video_codec != AV_CODEC_ID_NONE ? avcodec_find_encoder(fmt->video_codec) : NULL;
    if (!c)
        c = avcodec_find_encoder(strstr(fmt->name, "webm") ? AV_CODEC_ID_VP8 : AV_CODEC_ID_MPEG4);
    return c;
}

static samc_status open_encoder(samc_video_out *o, double fps, samc_error *err)
{
    const AVCodec *codec = pick_encoder(o->oc->oformat);
    if (!codec)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: no video encoder for the %s container", o->path,
                         o->oc->oformat->name);
    if (!(o->st = avformat_new_stream(o->oc, NULL)) || !(o->enc = avcodec_alloc_context3(codec)))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    const AVRational rate = av_d2q(fps > 0 ? fps : 25.0, 100000);
    o->enc->width = o->ew, o->enc->height = o->eh;
    o->enc->pix_fmt = AV_PIX_FMT_YUV420P;
    o->enc->time_base = av_inv_q(rate);
    o->enc->framerate = rate;
    o->enc->gop_size = 12;
    if (o->oc->oformat->flags & AVFMT_GLOBALHEADER)
        o->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (codec->id == AV_CODEC_ID_H264) /* overlays: visually lossless, encoded quickly */
        av_opt_set(o->enc->priv_data, "crf", "18", 0), av_opt_set(o->enc->priv_data, "preset", "fast", 0);
    else if (codec->id == AV_CODEC_ID_MPEG4)
        o->enc->bit_rate = 8 * (int64_t)o->ew * o->eh * 3 / 2; /* ~4 bits a pixel a second at 25 fps */
    else /* VP8, VP9: constant quality */
        av_opt_set(o->enc->priv_data, "crf", "20", 0), o->enc->bit_rate = 0;
    int r = avcodec_open2(o->enc, codec, NULL);
    if (r < 0)
        return av_fail(o, err, "cannot open the video encoder", r);
    if ((r = avcodec_parameters_from_context(o->st->codecpar, o->enc)) < 0)
        return av_fail(o, err, "encoder parameters", r);
    o->st->time_base = o->enc->time_base;
    o->st->avg_frame_rate = rate;
    return SAMC_OK;
}

samc_status samc_video_out_open(const char *path, int h, int w, double fps, samc_video_out **out, samc_error *err)
{
    *out = NULL;
    if (h < 1 || w < 1 || (int64_t)h * w > SAMC_IMAGE_MAX_PIXELS || h > SAMC_IMAGE_MAX_SIDE || w > SAMC_IMAGE_MAX_SIDE)
        return samc_fail(err, SAMC_ERR_ARG, "%s: cannot write a %dx%d video", path, w, h);
    samc_video_out *o = calloc(1, sizeof *o);
    if (!o)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    snprintf(o->path, sizeof o->path, "%s", path);
    o->h = h, o->w = w, o->eh = h + (h & 1), o->ew = w + (w & 1);
    const AVOutputFormat *fmt = av_guess_format(NULL, path, NULL);
    samc_status st = SAMC_OK;
    if (!fmt || fmt->video_codec == AV_CODEC_ID_NONE)
        st = samc_fail(err, SAMC_ERR_ARG, "%s: not a video file name (use .mp4, .mkv, .mov, .webm or .avi)", path);
    if (!st && avformat_alloc_output_context2(&o->oc, fmt, NULL, NULL) < 0)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        st = open_encoder(o, fps, err);
    if (!st && (!(o->frame = av_frame_alloc()) || !(o->pkt = av_packet_alloc()) ||
                !(o->padded = malloc((size_t)o->eh * o->ew * 3))))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) {
        o->frame->format = o->enc->pix_fmt, o->frame->width = o->ew, o->frame->height = o->eh;
        if (av_frame_get_buffer(o->frame, 0) < 0)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    if (!st && !(o->sws = sws_getContext(o->ew, o->eh, AV_PIX_FMT_RGB24, o->ew, o->eh, o->enc->pix_fmt, SWS_BICUBIC,
                                         NULL, NULL, NULL)))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: no RGB to YUV conversion", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp%d", path, (int)getpid());
    int r = 0;
    if (!st && !(o->oc->url = av_strdup(o->tmp))) /* mp4's faststart pass reopens the file by this name */
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st && (r = avio_open(&o->oc->pb, o->tmp, AVIO_FLAG_WRITE)) < 0)
        st = av_fail(o, err, "cannot write", r);
    AVDictionary *mux = NULL;
    av_dict_set(&mux, "movflags", "+faststart", 0); /* mp4/mov: the index first, playable while loading */
    if (!st && (r = avformat_write_header(o->oc, &mux)) < 0)
        st = av_fail(o, err, "cannot write the header", r);
    av_dict_free(&mux);
    if (st) {
        samc_video_out_abort(o);
        return st;
    }
    *out = o;
    return SAMC_OK;
}

/* Send a frame (NULL: the end) and write the packets that come out. */
static samc_status encode(samc_video_out *o, AVFrame *f, samc_error *err)
{
    int r = avcodec_send_frame(o->enc, f);
    if (r < 0)
        return av_fail(o, err, "encoding failed", r);
    while ((r = avcodec_receive_packet(o->enc, o->pkt)) >= 0) {
        av_packet_rescale_ts(o->pkt, o->enc->time_base, o->st->time_base);
        o->pkt->stream_index = o->st->index;
        r = av_interleaved_write_frame(o->oc, o->pkt);
        if (r < 0)
            return av_fail(o, err, "cannot write", r);
    }
    return r == AVERROR(EAGAIN) || r == AVERROR_EOF ? SAMC_OK : av_fail(o, err, "encoding failed", r);
}

samc_status samc_video_out_add(samc_video_out *o, const uint8_t *rgb, samc_error *err)
{
    for (int y = 0; y < o->eh; y++) { /* the odd edge replicated */
        const uint8_t *src = rgb + (size_t)(y < o->h ? y : o->h - 1) * o->w * 3;
        uint8_t *dst = o->padded + (size_t)y * o->ew * 3;
        memcpy(dst, src, (size_t)o->w * 3);
        if (o->ew > o->w)
            memcpy(dst + (size_t)o->w * 3, src + (size_t)(o->w - 1) * 3, 3);
    }
    if (av_frame_make_writable(o->frame) < 0)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    const uint8_t *src[4] = {o->padded, NULL, NULL, NULL};
    const int ls[4] = {o->ew * 3, 0, 0, 0};
    sws_scale(o->sws, src, ls, 0, o->eh, o->frame->data, o->frame->linesize);
    o->frame->pts = o->n;
    samc_status st = encode(o, o->frame, err);
    if (!st)
        o->n++;
    return st;
}

samc_status samc_video_out_close(samc_video_out *o, samc_error *err)
{
    samc_status st = encode(o, NULL, err);
    int r = 0;
    if (!st && (r = av_write_trailer(o->oc)) < 0)
        st = av_fail(o, err, "cannot finish the file", r);
    if (!st && (r = avio_closep(&o->oc->pb)) < 0)
        st = av_fail(o, err, "cannot write", r);
    if (!st && rename(o->tmp, o->path))
        st = samc_fail(err, SAMC_ERR_IO, "%s: cannot rename the finished video into place", o->path);
    if (!st)
        o->tmp[0] = 0; /* in place: nothing to remove */
    samc_video_out_abort(o);
    return st;
}
