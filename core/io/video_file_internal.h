/* SPDX-License-Identifier: Apache-2.0 */
/* video_file_internal.h - what video_file.c (opening, the index) and
 * video_file_decode.c (decoding, seeking, the frame cache) share. */
#ifndef SAMC_CORE_VIDEO_FILE_INTERNAL_H
#define SAMC_CORE_VIDEO_FILE_INTERNAL_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
#include <stdbool.h>

#include "core/io/video_file.h"

enum { SAMC_VIDEO_CACHE_MAX = 64 };

typedef struct samc_video_cached {
    int idx;                    /* frame index, -1: free */
    uint64_t used;              /* LRU clock */
    uint8_t *rgb;               /* h*w*3 */
} samc_video_cached;

struct samc_video_file {
    char what[512];             /* the path or the caller's name, for messages */
    AVFormatContext *fmt;
    AVIOContext *avio;          /* memory source, else NULL */
    const uint8_t *mem;         /* memory source: the caller's bytes */
    size_t mem_n, mem_pos;
    AVCodecContext *dec;
    int stream;
    AVPacket *pkt;
    AVFrame *frame;
    struct SwsContext *sws;
    uint8_t *bgr;               /* conversion at the coded size */
    int bgr_w, bgr_h;
    int fw, fh;                 /* the decoded frame size */
    int rotation;               /* clockwise degrees the display matrix asks for: 0, 90, 180, 270 */
    int w, h;                   /* the frame size delivered (rotated) */
    double fps;
    int count;                  /* frames readable */
    int64_t *ts;                /* count presentation timestamps, increasing */
    char damage[512];
    bool demux_done;            /* the decoder has been sent the end of the stream */
    bool at_start;              /* nothing decoded since opening: the stream is at its first frame */
    int last_out;               /* index of the last frame decoded since the last seek, -1: none */
    bool after_seek;            /* frames before the first key frame output are not trusted */
    int64_t min_ts;             /* frames below this timestamp are dropped (after a seek) */
    samc_video_cached cache[SAMC_VIDEO_CACHE_MAX];
    int cache_n;                /* slots in use of cache[] */
    uint64_t clock;
    int first_concealed;        /* the first frame the decoder concealed errors in, -1: none */
    uint8_t *resized;           /* the last samc_video_file_resized */
    int resized_idx, resized_S;
};

/* av_strerror of `code` into buf. */
const char *samc__av_err(int code, char *buf, size_t n);

#endif
