/* SPDX-License-Identifier: Apache-2.0 */
/* video_file.c - opening a video file (a path or bytes in memory), the
 * index of its frames, and what it reports (video_file.h). Decoding is
 * video_file_decode.c. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/io/image_io.h"
#include "core/io/video_file_internal.h"

enum { AVIO_BUF = 1 << 16 };
/* The demuxers tried (libavformat names; "mov" is mp4/mov/m4v/3gp). */
#define VIDEO_FORMATS "mov,matroska,webm,avi,mpegts,mpeg,flv,ogg,asf,nut,ivf,gif"

const char *samc__av_err(int code, char *buf, size_t n)
{
    if (av_strerror(code, buf, n) < 0)
        snprintf(buf, n, "error %d", code);
    return buf;
}

int samc_video_file_count(const samc_video_file *v) { return v->count; }
int samc_video_file_width(const samc_video_file *v) { return v->w; }
int samc_video_file_height(const samc_video_file *v) { return v->h; }
double samc_video_file_fps(const samc_video_file *v) { return v->fps; }
const char *samc_video_file_codec(const samc_video_file *v) { return avcodec_get_name(v->dec->codec_id); }
const char *samc_video_file_damage(const samc_video_file *v) { return v->damage[0] ? v->damage : NULL; }
int samc_video_file_first_concealed(const samc_video_file *v) { return v->first_concealed; }

void samc_video_file_free(samc_video_file *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->cache_n; i++)
        free(v->cache[i].rgb);
    free(v->resized);
    av_free(v->bgr);
    sws_freeContext(v->sws);
    av_frame_free(&v->frame);
    av_packet_free(&v->pkt);
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    if (v->avio)
        av_freep(&v->avio->buffer);
    avio_context_free(&v->avio);
    free(v->ts);
    free(v);
}

/* ---- bytes in memory as an AVIOContext ------------------------------------ */

static int mem_read(void *opaque, uint8_t *buf, int n)
{
    samc_video_file *v = opaque;
    const size_t left = v->mem_n - v->mem_pos, k = (size_t)n < left ? (size_t)n : left;
    if (k == 0)
        return AVERROR_EOF;
    memcpy(buf, v->mem + v->mem_pos, k);
    v->mem_pos += k;
    return (int)k;
}

static int64_t mem_seek(void *opaque, int64_t offset, int whence)
{
    samc_video_file *v = opaque;
    if (whence & AVSEEK_SIZE)
        return (int64_t)v->mem_n;
    int64_t base = 0;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)v->mem_pos; break;
    case SEEK_END: base = (int64_t)v->mem_n; break;
    default: return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base || base + offset < 0 || base + offset > (int64_t)v->mem_n)
        return AVERROR(EINVAL);
    v->mem_pos = (size_t)(base + offset);
    return (int64_t)v->mem_pos;
}

/* ---- opening ---------------------------------------------------------------- */

static samc_status av_fail(samc_video_file *v, samc_error *err, samc_status st, const char *what, int code)
{
    char b[128];
    return samc_fail(err, st, "%s: %s: %s", v->what, what, samc__av_err(code, b, sizeof b));
}

/* The rotation a phone's display matrix asks for, applied clockwise as
 * OpenCV's VideoCapture does by default (CAP_PROP_ORIENTATION_AUTO): 90,
 * 180 or 270 degrees, else 0. (OpenCV turns the angle libavutil reports,
 * counterclockwise by its documentation, clockwise; samc does the same, so
 * the frames are OpenCV's.) */
static int display_rotation(const AVStream *s)
{
    const uint8_t *m = av_stream_get_side_data(s, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (!m)
        return 0;
    const double ccw = av_display_rotation_get((const int32_t *)m);
    if (ccw != ccw)
        return 0;
    int deg = (int)lrint(ccw) % 360;
    deg = deg < 0 ? deg + 360 : deg;
    return deg == 90 || deg == 180 || deg == 270 ? deg : 0;
}

static samc_status open_decoder(samc_video_file *v, samc_error *err)
{
    int r = avformat_find_stream_info(v->fmt, NULL);
    if (r < 0)
        return av_fail(v, err, SAMC_ERR_FORMAT, "not a readable video", r);
    const AVCodec *codec = NULL;
    r = av_find_best_stream(v->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (r < 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: no decodable video stream (%s container)", v->what,
                         v->fmt->iformat->name);
    v->stream = r;
    AVStream *s = v->fmt->streams[r];
    if (!(v->dec = avcodec_alloc_context3(codec)) || !(v->pkt = av_packet_alloc()) || !(v->frame = av_frame_alloc()))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if ((r = avcodec_parameters_to_context(v->dec, s->codecpar)) < 0 || (r = avcodec_open2(v->dec, codec, NULL)) < 0)
        return av_fail(v, err, SAMC_ERR_FORMAT, "cannot open the video decoder", r);
    v->fw = s->codecpar->width, v->fh = s->codecpar->height;
    if (v->fw < 1 || v->fh < 1 || (long long)v->fw * v->fh > SAMC_IMAGE_MAX_PIXELS || v->fw > SAMC_IMAGE_MAX_SIDE ||
        v->fh > SAMC_IMAGE_MAX_SIDE)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: video frames of %dx%d are empty or larger than samc accepts", v->what,
                         v->fw, v->fh);
    v->rotation = display_rotation(s);
    const bool turned = v->rotation == 90 || v->rotation == 270;
    v->w = turned ? v->fh : v->fw, v->h = turned ? v->fw : v->fh;
    const AVRational fr = s->avg_frame_rate.num > 0 && s->avg_frame_rate.den > 0 ? s->avg_frame_rate : s->r_frame_rate;
    v->fps = fr.num > 0 && fr.den > 0 ? av_q2d(fr) : 0.0;
    return SAMC_OK;
}

static int cmp_ts(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A file cut short without a read error (Matroska, AVI just end): the
 * frame count the container declares, else the duration it declares,
 * against the frames found. */
static void check_length(samc_video_file *v)
{
    const AVStream *s = v->fmt->streams[v->stream];
    if (s->nb_frames > 0) {
        if (s->nb_frames > v->count)
            snprintf(v->damage, sizeof v->damage, "the file declares %lld frames but only %d can be read (truncated?)",
                     (long long)s->nb_frames, v->count);
        return;
    }
    int64_t declared = AV_NOPTS_VALUE; /* microseconds */
    if (s->duration != AV_NOPTS_VALUE && s->duration > 0)
        declared = av_rescale_q(s->duration, s->time_base, AV_TIME_BASE_Q);
    else if (v->fmt->nb_streams == 1 && v->fmt->duration > 0)
        declared = v->fmt->duration;
    if (declared == AV_NOPTS_VALUE || v->fps <= 0)
        return;
    const double frame_s = 1.0 / v->fps;
    const double found = av_q2d(s->time_base) * (double)(v->ts[v->count - 1] - v->ts[0]) + frame_s;
    const double want = (double)declared / AV_TIME_BASE;
    if (want - found > (3 * frame_s > 0.5 ? 3 * frame_s : 0.5))
        snprintf(v->damage, sizeof v->damage,
                 "the file declares %.2f s of video but its %d frames end at %.2f s (truncated?)", want, v->count, found);
}

/* Demux every packet of the stream once: the frame count, the timestamps
 * in presentation order, and where a damaged file stops being readable. */
static samc_status build_index(samc_video_file *v, samc_error *err)
{
    int cap = 0, r;
    char b[128];
    while ((r = av_read_frame(v->fmt, v->pkt)) >= 0) {
        const bool ours = v->pkt->stream_index == v->stream, corrupt = v->pkt->flags & AV_PKT_FLAG_CORRUPT;
        const int64_t ts = v->pkt->pts != AV_NOPTS_VALUE ? v->pkt->pts : v->pkt->dts;
        av_packet_unref(v->pkt);
        if (!ours)
            continue;
        if (corrupt) {
            snprintf(v->damage, sizeof v->damage, "the packet of frame %d is corrupt or cut short", v->count);
            break;
        }
        if (ts == AV_NOPTS_VALUE)
            return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: frame %d has no timestamp (a raw stream?); remux it into "
                             "a container (mp4, mkv)", v->what, v->count);
        if (v->count == SAMC_VIDEO_MAX_FRAMES)
            return samc_fail(err, SAMC_ERR_ARG, "%s: more than %d frames", v->what, SAMC_VIDEO_MAX_FRAMES);
        if (v->count == cap) {
            cap = cap ? 2 * cap : 256;
            int64_t *n = realloc(v->ts, (size_t)cap * sizeof *n);
            if (!n)
                return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            v->ts = n;
        }
        v->ts[v->count++] = ts;
    }
    if (r != AVERROR_EOF && !v->damage[0])
        snprintf(v->damage, sizeof v->damage, "reading stopped after frame %d: %s", v->count - 1,
                 samc__av_err(r, b, sizeof b));
    if (v->count == 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: no readable video frame%s%s", v->what, v->damage[0] ? ": " : "",
                         v->damage);
    qsort(v->ts, (size_t)v->count, sizeof *v->ts, cmp_ts);
    if (!v->damage[0])
        check_length(v);
    for (int i = 1; i < v->count; i++)
        if (v->ts[i] == v->ts[i - 1])
            return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: two frames share the timestamp %lld", v->what,
                             (long long)v->ts[i]);
    /* Back to the start for decoding. */
    if ((r = av_seek_frame(v->fmt, v->stream, v->ts[0], AVSEEK_FLAG_BACKWARD)) < 0 &&
        (r = avformat_seek_file(v->fmt, -1, INT64_MIN, 0, 0, 0)) < 0)
        return av_fail(v, err, SAMC_ERR_FORMAT, "cannot seek back to the first frame", r);
    return SAMC_OK;
}

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

/* FFmpeg logs to stderr by default; samc's callers get its failures as
 * samc messages instead (the process-wide level, set once). */
static void quiet_av_log(void) { av_log_set_level(AV_LOG_QUIET); }

static samc_status open_any(samc_video_file *v, const char *url, samc_error *err)
{
    pthread_once(&quiet_once, quiet_av_log);
    /* Video containers only, and no protocol but the local file: a playlist
     * or concat list inside a hostile file opens nothing else. */
    AVDictionary *opt = NULL;
    av_dict_set(&opt, "format_whitelist", VIDEO_FORMATS, 0);
    av_dict_set(&opt, "protocol_whitelist", v->mem ? "none" : "file", 0);
    int r = avformat_open_input(&v->fmt, url, NULL, &opt);
    av_dict_free(&opt);
    if (r < 0)
        return av_fail(v, err, r == AVERROR(ENOENT) ? SAMC_ERR_IO : SAMC_ERR_FORMAT, "cannot open as a video", r);
    samc_status st = open_decoder(v, err);
    if (!st)
        st = build_index(v, err);
    v->last_out = -1, v->resized_idx = -1, v->at_start = true, v->first_concealed = -1;
    for (int i = 0; i < SAMC_VIDEO_CACHE_MAX; i++)
        v->cache[i].idx = -1;
    return st;
}

samc_status samc_video_file_open(const char *path, samc_video_file **out, samc_error *err)
{
    *out = NULL;
    samc_video_file *v = calloc(1, sizeof *v);
    if (!v)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    snprintf(v->what, sizeof v->what, "%s", path);
    /* "file:" keeps a name like "http://..." or "concat:..." a local path:
     * samc reads files, never URLs or protocol strings. */
    char *url = malloc(strlen(path) + 6);
    samc_status st = url ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st) {
        snprintf(url, strlen(path) + 6, "file:%s", path);
        st = open_any(v, url, err);
    }
    free(url);
    if (st)
        samc_video_file_free(v);
    else
        *out = v;
    return st;
}

samc_status samc_video_file_open_memory(const void *data, size_t n, const char *what, samc_video_file **out,
                                        samc_error *err)
{
    *out = NULL;
    samc_video_file *v = calloc(1, sizeof *v);
    if (!v)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    snprintf(v->what, sizeof v->what, "%s", what ? what : "video");
    samc_status st = SAMC_OK;
    uint8_t *buf = NULL;
    if (!data || n == 0)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: the video is empty", v->what);
    else if (!(buf = av_malloc(AVIO_BUF)) ||
             !(v->avio = avio_alloc_context(buf, AVIO_BUF, 0, v, mem_read, NULL, mem_seek)) ||
             !(v->fmt = avformat_alloc_context()))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!v->avio)
        av_free(buf);
    if (!st) {
        v->mem = data, v->mem_n = n;
        v->fmt->pb = v->avio;
        v->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
        st = open_any(v, "", err);
    }
    if (st)
        samc_video_file_free(v);
    else
        *out = v;
    return st;
}
