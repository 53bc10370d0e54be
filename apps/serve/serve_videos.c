/* SPDX-License-Identifier: Apache-2.0 */
/* serve_videos.c - the video routes (serve.h): upload a video file, its
 * frames and masks, prompts on a frame, and propagation streamed as
 * server-sent events (text/event-stream: one "frame" event per frame done,
 * then "done" or "error"). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "serve_http.h"

static serve_video *route_video(serve_req *rq)
{
    serve_video *v = serve_videos_get(rq->srv->videos, rq->route.res_id);
    if (!v)
        serve_reply_error(rq, 404, "unknown video id %s (never uploaded, deleted, or closed after being idle)",
                          rq->route.res_id);
    return v;
}

/* The path's frame number inside the video, else a 404 reply. */
static bool route_frame(serve_req *rq, const serve_video *v)
{
    const int n = serve_video_info(v)->frames;
    if (rq->route.frame < n)
        return true;
    serve_reply_error(rq, 404, "frame %d is outside the video (frames 0..%d)", rq->route.frame, n - 1);
    return false;
}

/* A multipart upload of several images: the frames in the order sent,
 * decoded, all one size, each within the image limits, all together within
 * twice --max-video-mb. */
static samc_status decode_frames(serve_req *rq, const size_t *starts, int n, uint8_t **out, int *h, int *w,
                                 samc_error *err)
{
    const serve_config *c = &rq->srv->cfg;
    uint8_t *all = NULL;
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < n; i++) {
        const uint8_t *data = rq->body + starts[i];
        const size_t len = (i + 1 < n ? starts[i + 1] : rq->body_n) - starts[i];
        char what[64];
        snprintf(what, sizeof what, "frame %d of the upload", i);
        int fh = 0, fw = 0;
        uint8_t *rgb = NULL;
        st = samc_probe_image(data, len, what, &fh, &fw, err);
        if (!st && (int64_t)fh * fw > c->max_image_pixels)
            st = samc_fail(err, SAMC_ERR_ARG, "%s is %dx%d; this server takes at most %lld pixels", what, fw, fh,
                           (long long)c->max_image_pixels);
        if (!st && i == 0) {
            *h = fh, *w = fw;
            if ((double)n * fh * fw * 3 > 2.0 * (double)c->max_video_bytes)
                st = samc_fail(err, SAMC_ERR_ARG, "%d frames of %dx%d are more than this server decodes (%zu MiB)", n, fw,
                               fh, 2 * c->max_video_bytes >> 20);
            else if (!(all = malloc((size_t)n * fh * fw * 3)))
                st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        } else if (!st && (fh != *h || fw != *w)) {
            st = samc_fail(err, SAMC_ERR_ARG, "%s is %dx%d but frame 0 is %dx%d", what, fw, fh, *w, *h);
        }
        if (!st)
            st = samc_decode_image(data, len, what, &rgb, &fh, &fw, err);
        if (!st)
            memcpy(all + (size_t)i * fh * fw * 3, rgb, (size_t)fh * fw * 3);
        samc_free(rgb);
    }
    if (st)
        free(all), all = NULL;
    *out = all;
    return st;
}

void serve_on_upload_video(serve_req *rq)
{
    serve_server *srv = rq->srv;
    if (!srv->sam2) {
        serve_reply_error(rq, 400, "videos need a SAM 2 model; this server was started without one (--model)");
        return;
    }
    samc_error err = {0};
    char id[SERVE_ID_LEN + 1];
    samc_status st;
    const size_t *starts = NULL;
    const int parts = serve_body_parts(rq, &starts);
    if (parts > 1) { /* frames: images as the file parts of a multipart form */
        uint8_t *rgb = NULL;
        int h = 0, w = 0;
        st = decode_frames(rq, starts, parts, &rgb, &h, &w, &err);
        if (!st)
            st = serve_videos_add_frames(srv, rgb, parts, h, w, id, &err);
    } else {
        size_t n = 0;
        uint8_t *bytes = serve_take_body(rq, &n);
        if (!n) {
            free(bytes);
            serve_reply_error(rq, 400, "no video: send the file as the body, a file part of a multipart form, or the "
                              "frames as several file parts");
            return;
        }
        st = serve_videos_add(srv, bytes, n, id, &err);
    }
    serve_video *v = st ? NULL : serve_videos_get(srv->videos, id);
    if (!v) {
        serve_reply_failure(rq, st ? st : SAMC_ERR_NOMEM, &err);
        return;
    }
    serve_reply_json(rq, 201, serve_video_json(v));
    serve_videos_put(srv->videos, v);
}

void serve_on_video(serve_req *rq)
{
    if (!strcmp(rq->method, "DELETE")) {
        if (serve_videos_remove(rq->srv->videos, rq->route.res_id))
            serve_reply_bytes(rq, 204, "application/json", "", 0, NULL);
        else
            serve_reply_error(rq, 404, "unknown video id %s", rq->route.res_id);
        return;
    }
    serve_video *v = route_video(rq);
    if (!v)
        return;
    serve_reply_json(rq, 200, serve_video_json(v));
    serve_videos_put(rq->srv->videos, v);
}

void serve_on_video_frame(serve_req *rq)
{
    serve_video *v = route_video(rq);
    if (!v || !route_frame(rq, v)) {
        serve_videos_put(rq->srv->videos, v);
        return;
    }
    samc_error err = {0};
    uint8_t *png = NULL;
    size_t n = 0;
    samc_status st = serve_video_frame_png(v, rq->route.frame, &png, &n, &err);
    if (st)
        serve_reply_failure(rq, st, &err);
    else
        serve_reply_bytes(rq, 200, "image/png", png, n, samc_free);
    serve_videos_put(rq->srv->videos, v);
}

void serve_on_video_masks(serve_req *rq)
{
    serve_video *v = route_video(rq);
    if (!v || !route_frame(rq, v)) {
        serve_videos_put(rq->srv->videos, v);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "frame", rq->route.frame);
    cJSON_AddItemToObject(o, "objects", serve_video_masks_json(v, rq->route.frame));
    serve_reply_json(rq, 200, o);
    serve_videos_put(rq->srv->videos, v);
}

void serve_on_video_prompt(serve_req *rq)
{
    serve_video *v = route_video(rq);
    if (!v)
        return;
    const samc_video_info *vi = serve_video_info(v);
    samc_error err = {0};
    serve_video_prompt_req p;
    bool busy = false;
    double queue_ms = 0;
    samc_status st = serve_parse_video_prompt((const char *)rq->body, rq->body_n, vi->frames, vi->height, vi->width, &p,
                                              &err);
    if (!st)
        st = serve_video_prompt(rq->srv, v, &p, &busy, &queue_ms, &err);
    if (busy) {
        serve_reply_error(rq, 409, "%s", err.msg);
    } else if (st) {
        serve_reply_failure(rq, st, &err);
    } else {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "frame", p.frame);
        cJSON_AddItemToObject(o, "objects", serve_video_masks_json(v, p.frame));
        cJSON *t = cJSON_AddObjectToObject(o, "timing_ms");
        cJSON_AddNumberToObject(t, "queue", queue_ms);
        cJSON_AddNumberToObject(t, "total", 1e3 * (serve_now() - rq->t0));
        serve_reply_json(rq, 200, o);
    }
    serve_videos_put(rq->srv->videos, v);
}

void serve_on_video_reset(serve_req *rq)
{
    serve_video *v = route_video(rq);
    if (!v)
        return;
    samc_error err = {0};
    bool busy = false;
    samc_status st = rq->body_n ? samc_fail(&err, SAMC_ERR_ARG, "reset takes no body") : SAMC_OK;
    if (!st)
        st = serve_video_reset(rq->srv, v, &busy, &err);
    if (busy)
        serve_reply_error(rq, 409, "%s", err.msg);
    else if (st)
        serve_reply_failure(rq, st, &err);
    else
        serve_reply_json(rq, 200, serve_video_json(v));
    serve_videos_put(rq->srv->videos, v);
}

/* ---- the event stream of a propagation -------------------------------------------- */

typedef struct stream {
    serve_server *srv;
    serve_video *v;                /* held until the stream ends */
    int sent;                      /* frames sent */
    char *pending;                 /* the event being sent */
    size_t at, len;
    bool ended;                    /* the last event is (being) sent */
} stream;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream *s = cls;
    while (!s->pending || s->at == s->len) {
        free(s->pending);
        s->pending = NULL;
        if (s->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (!(s->pending = serve_video_next_event(s->v, &s->sent, 10.0, &s->ended)))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        s->at = 0, s->len = strlen(s->pending);
    }
    const size_t k = s->len - s->at < max ? s->len - s->at : max;
    memcpy(buf, s->pending + s->at, k);
    s->at += k;
    return (ssize_t)k;
}

static void stream_done(void *cls)
{
    stream *s = cls;
    if (!s->ended) /* the client went away: the propagation stops at its next frame */
        serve_video_cancel(s->v);
    serve_videos_put(s->srv->videos, s->v);
    free(s->pending);
    free(s);
}

void serve_on_video_propagate(serve_req *rq)
{
    serve_video *v = route_video(rq);
    if (!v)
        return;
    samc_error err = {0};
    serve_propagate_req p;
    bool busy = false;
    samc_status st = serve_parse_propagate((const char *)rq->body, rq->body_n, serve_video_info(v)->frames, &p, &err);
    stream *s = st ? NULL : calloc(1, sizeof *s);
    if (!st && !s)
        st = samc_fail(&err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        st = serve_video_start_propagation(rq->srv, v, &p, &busy, &err);
    if (st) {
        free(s);
        if (busy)
            serve_reply_error(rq, 409, "%s", err.msg);
        else
            serve_reply_failure(rq, st, &err);
        serve_videos_put(rq->srv->videos, v);
        return;
    }
    *s = (stream){.srv = rq->srv, .v = v}; /* the stream keeps the request's reference */
    serve_reply_stream(rq, "text/event-stream", stream_read, s, stream_done);
}
