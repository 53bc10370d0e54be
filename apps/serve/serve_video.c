/* SPDX-License-Identifier: Apache-2.0 */
/* serve_video.c - video sessions (serve.h): the uploaded file read in place
 * by a tracker and a frame reader, the latest masks of every frame, tracker
 * calls on the workers one at a time, and a propagation's frames handed to
 * its event stream as they are done. Sessions are bounded in number; an
 * idle one is closed after the time to live, the least recently used idle
 * one when a new one needs its place. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/error.h"
#include "serve.h"

typedef struct frame_masks {
    int n;
    serve_obj_mask *m;
} frame_masks;

struct serve_video {
    char id[SERVE_ID_LEN + 1];
    uint8_t *bytes;                /* the file: the tracker and the reader read it in place */
    size_t n;
    samc_tracker *tracker;         /* one call at a time (`busy`) */
    samc_video_reader *reader;     /* under read_mu */
    samc_video_info info;
    pthread_mutex_t mu, read_mu;
    pthread_cond_t changed;        /* a frame done, or the propagation ended */
    frame_masks *frames;           /* info.frames entries */
    bool busy, cancel, ended;
    int *order, n_done, total;     /* the running (or last) propagation's frames, in order */
    int staged;                    /* a frame done, not yet counted (on_progress), -1: none */
    samc_status end_st;
    char end_msg[SAMC_ERROR_MSG_MAX];
    int refs;
    bool removed;
    double last_used;
};

struct serve_videos {
    pthread_mutex_t mu;
    serve_video **v;
    int n, max, ttl_s;
};

static void masks_clear(frame_masks *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->m[i].counts);
    free(f->m);
    f->m = NULL, f->n = 0;
}

static void video_free(serve_video *v)
{
    if (!v)
        return;
    samc_tracker_free(v->tracker);
    samc_video_reader_free(v->reader);
    for (int i = 0; v->frames && i < v->info.frames; i++)
        masks_clear(&v->frames[i]);
    free(v->frames);
    free(v->order);
    free(v->bytes);
    pthread_cond_destroy(&v->changed);
    pthread_mutex_destroy(&v->read_mu);
    pthread_mutex_destroy(&v->mu);
    free(v);
}

const samc_video_info *serve_video_info(const serve_video *v) { return &v->info; }
const char *serve_video_id(const serve_video *v) { return v->id; }

/* ---- the session table ----------------------------------------------------------- */

samc_status serve_videos_new(const serve_config *cfg, serve_videos **out, samc_error *err)
{
    serve_videos *vs = calloc(1, sizeof *vs);
    if (!vs || !(vs->v = calloc((size_t)cfg->max_videos + 1, sizeof *vs->v))) {
        free(vs);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&vs->mu, NULL);
    vs->max = cfg->max_videos, vs->ttl_s = cfg->video_ttl_s;
    *out = vs;
    return SAMC_OK;
}

void serve_videos_free(serve_videos *vs)
{
    if (!vs)
        return;
    for (int i = 0; i < vs->n; i++)
        video_free(vs->v[i]);
    free(vs->v);
    pthread_mutex_destroy(&vs->mu);
    free(vs);
}

int serve_videos_count(serve_videos *vs)
{
    pthread_mutex_lock(&vs->mu);
    const int n = vs->n;
    pthread_mutex_unlock(&vs->mu);
    return n;
}

/* Out of the table (under vs->mu): freed now, or by its last holder. */
static void drop_at(serve_videos *vs, int i)
{
    serve_video *v = vs->v[i];
    vs->v[i] = vs->v[--vs->n];
    if (v->refs)
        v->removed = true;
    else
        video_free(v);
}

/* Close idle sessions past their time to live (under vs->mu). */
static void reap(serve_videos *vs)
{
    const double now = serve_now();
    for (int i = vs->n - 1; i >= 0; i--)
        if (!vs->v[i]->refs && now - vs->v[i]->last_used > vs->ttl_s)
            drop_at(vs, i);
}

serve_video *serve_videos_get(serve_videos *vs, const char *id)
{
    serve_video *found = NULL;
    pthread_mutex_lock(&vs->mu);
    reap(vs);
    for (int i = 0; i < vs->n && !found; i++)
        if (!strcmp(vs->v[i]->id, id))
            found = vs->v[i];
    if (found)
        found->refs++, found->last_used = serve_now();
    pthread_mutex_unlock(&vs->mu);
    return found;
}

void serve_videos_put(serve_videos *vs, serve_video *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&vs->mu);
    const bool gone = --v->refs == 0 && v->removed;
    v->last_used = serve_now();
    pthread_mutex_unlock(&vs->mu);
    if (gone)
        video_free(v);
}

bool serve_videos_remove(serve_videos *vs, const char *id)
{
    pthread_mutex_lock(&vs->mu);
    int at = -1;
    for (int i = 0; i < vs->n && at < 0; i++)
        if (!strcmp(vs->v[i]->id, id))
            at = i;
    if (at >= 0) {
        serve_video_cancel(vs->v[at]); /* a running propagation stops at its next frame */
        drop_at(vs, at);
    }
    pthread_mutex_unlock(&vs->mu);
    return at >= 0;
}

/* A place for a new session: a free one, else the least recently used idle
 * session's (under vs->mu). */
static bool make_room(serve_videos *vs)
{
    reap(vs);
    if (vs->n < vs->max)
        return true;
    int lru = -1;
    for (int i = 0; i < vs->n; i++)
        if (!vs->v[i]->refs && !vs->v[i]->busy && (lru < 0 || vs->v[i]->last_used < vs->v[lru]->last_used))
            lru = i;
    if (lru < 0)
        return false;
    drop_at(vs, lru);
    return true;
}

/* ---- a new session ----------------------------------------------------------------- */

/* The tracker reports each propagated frame's masks (on_frame), then its
 * progress: the frame is handed to the event stream here, with the total
 * the propagation settled on. */
static void on_progress(void *user, const char *what, int done, int total)
{
    serve_video *v = user;
    pthread_mutex_lock(&v->mu);
    v->total = total;
    if (v->staged >= 0) {
        v->order[v->n_done++ % v->info.frames] = v->staged;
        v->staged = -1;
        pthread_cond_broadcast(&v->changed);
    }
    pthread_mutex_unlock(&v->mu);
}

/* A session's frames: the uploaded file (read in place), or decoded frames
 * (copied into the tracker and the reader). */
typedef struct video_source {
    const uint8_t *rgb;
    int T, h, w;
} video_source;

static samc_status open_video(serve_server *srv, serve_video *v, const video_source *src, samc_error *err)
{
    samc_tracker_params tp = samc_tracker_default_params();
    tp.impl = srv->cfg.impl, tp.n_threads = serve_pool_threads(srv->pool);
    tp.progress = on_progress, tp.progress_user = v;
    samc_status st = samc_tracker_new(srv->sam2, &tp, &v->tracker, err);
    if (!st && src->rgb && src->T > srv->cfg.max_video_frames)
        st = samc_fail(err, SAMC_ERR_ARG, "%d frames; this server takes at most %d (--max-video-frames)", src->T,
                       srv->cfg.max_video_frames);
    if (!st)
        st = src->rgb ? samc_tracker_open_frames(v->tracker, src->rgb, src->T, src->h, src->w, err)
                      : samc_tracker_open_video_memory(v->tracker, v->bytes, v->n, err);
    if (!st)
        st = src->rgb ? samc_video_reader_open_frames(src->rgb, src->T, src->h, src->w, &v->reader, err)
                      : samc_video_reader_open_memory(v->bytes, v->n, "the uploaded video", &v->reader, err);
    if (!st)
        st = samc_video_reader_info(v->reader, &v->info, err);
    if (!st && v->info.frames > srv->cfg.max_video_frames)
        st = samc_fail(err, SAMC_ERR_ARG, "the video has %d frames; this server takes at most %d (--max-video-frames)",
                       v->info.frames, srv->cfg.max_video_frames);
    if (!st && (!(v->frames = calloc((size_t)v->info.frames, sizeof *v->frames)) ||
                !(v->order = calloc((size_t)v->info.frames, sizeof *v->order))))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    return st;
}

/* A new session v (taken: freed on failure) in the table. */
static samc_status add_session(serve_server *srv, serve_video *v, const video_source *src, char id[SERVE_ID_LEN + 1],
                               samc_error *err)
{
    v->ended = true;
    pthread_mutex_init(&v->mu, NULL);
    pthread_mutex_init(&v->read_mu, NULL);
    pthread_cond_init(&v->changed, NULL);
    serve_new_id(v->id);
    samc_status st = open_video(srv, v, src, err);
    serve_videos *vs = srv->videos;
    pthread_mutex_lock(&vs->mu);
    if (!st && !make_room(vs))
        st = samc_fail(err, SAMC_ERR_NOMEM, "%d video sessions are in use; close one (DELETE) or retry later", vs->max);
    if (!st) {
        v->last_used = serve_now();
        vs->v[vs->n++] = v;
        memcpy(id, v->id, SERVE_ID_LEN + 1);
    }
    pthread_mutex_unlock(&vs->mu);
    if (st)
        video_free(v);
    return st;
}

samc_status serve_videos_add(serve_server *srv, uint8_t *bytes, size_t n, char id[SERVE_ID_LEN + 1], samc_error *err)
{
    serve_video *v = calloc(1, sizeof *v);
    if (!v) {
        free(bytes);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    v->bytes = bytes, v->n = n;
    const video_source src = {0};
    return add_session(srv, v, &src, id, err);
}

samc_status serve_videos_add_frames(serve_server *srv, uint8_t *rgb, int T, int h, int w, char id[SERVE_ID_LEN + 1],
                                    samc_error *err)
{
    serve_video *v = calloc(1, sizeof *v);
    const video_source src = {.rgb = rgb, .T = T, .h = h, .w = w};
    samc_status st = v ? add_session(srv, v, &src, id, err) : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    free(rgb);
    return st;
}

/* ---- masks --------------------------------------------------------------------------- */

/* A frame's masks from the tracker (on the worker), each object's RLE. */
static samc_status to_masks(const samc_frame_masks *m, frame_masks *out, samc_error *err)
{
    const int64_t hw = (int64_t)m->height * m->width;
    out->n = 0;
    if (!(out->m = calloc((size_t)(m->n_obj ? m->n_obj : 1), sizeof *out->m)))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    samc_status st = SAMC_OK;
    for (int k = 0; !st && k < m->n_obj; k++) {
        samc_mask_rle r;
        if ((st = samc_mask_rle_encode_logits(m->logits + k * hw, m->height, m->width, 0.0, &r, err)))
            break;
        serve_obj_mask *o = &out->m[out->n++];
        *o = (serve_obj_mask){.obj_id = m->obj_ids[k], .object_score = m->object_scores[k], .area = r.area,
                              .counts = r.coco_counts};
        memcpy(o->bbox, r.bbox, sizeof o->bbox);
        r.coco_counts = NULL; /* taken */
        samc_mask_rle_free(&r);
    }
    if (st)
        masks_clear(out);
    return st;
}

/* Replace frame t's masks (under v->mu). */
static void store_masks(serve_video *v, int t, frame_masks *fm)
{
    masks_clear(&v->frames[t]);
    v->frames[t] = *fm;
    *fm = (frame_masks){0};
}

static cJSON *masks_json(const serve_video *v, const frame_masks *f)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < f->n; i++) {
        const serve_obj_mask *m = &f->m[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        cJSON_AddNumberToObject(o, "obj_id", m->obj_id);
        if (m->object_score == m->object_score)
            cJSON_AddNumberToObject(o, "object_score", m->object_score);
        cJSON_AddBoolToObject(o, "present", m->object_score > 0);
        cJSON_AddNumberToObject(o, "area", (double)m->area);
        cJSON *b = cJSON_AddArrayToObject(o, "bbox");
        for (int k = 0; k < 4; k++)
            cJSON_AddItemToArray(b, cJSON_CreateNumber(m->bbox[k]));
        cJSON *rle = cJSON_AddObjectToObject(o, "rle"), *size = cJSON_AddArrayToObject(rle, "size");
        cJSON_AddItemToArray(size, cJSON_CreateNumber(v->info.height));
        cJSON_AddItemToArray(size, cJSON_CreateNumber(v->info.width));
        cJSON_AddStringToObject(rle, "counts", m->counts);
    }
    return arr;
}

cJSON *serve_video_masks_json(serve_video *v, int t)
{
    pthread_mutex_lock(&v->mu);
    cJSON *a = masks_json(v, &v->frames[t]);
    pthread_mutex_unlock(&v->mu);
    return a;
}

cJSON *serve_video_json(serve_video *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", v->id);
    cJSON_AddNumberToObject(o, "frames", v->info.frames);
    cJSON_AddNumberToObject(o, "width", v->info.width);
    cJSON_AddNumberToObject(o, "height", v->info.height);
    cJSON_AddNumberToObject(o, "fps", v->info.fps);
    cJSON_AddStringToObject(o, "codec", v->info.codec);
    if (v->info.damage)
        cJSON_AddStringToObject(o, "damage", v->info.damage);
    pthread_mutex_lock(&v->mu);
    int with = 0;
    cJSON *objs = cJSON_CreateArray();
    for (int t = 0; t < v->info.frames; t++) {
        with += v->frames[t].n > 0;
        for (int i = 0; i < v->frames[t].n; i++) { /* the ids seen, once each */
            bool seen = false;
            for (cJSON *c = objs->child; c && !seen; c = c->next)
                seen = c->valueint == v->frames[t].m[i].obj_id;
            if (!seen)
                cJSON_AddItemToArray(objs, cJSON_CreateNumber(v->frames[t].m[i].obj_id));
        }
    }
    cJSON_AddNumberToObject(o, "frames_with_masks", with);
    cJSON_AddItemToObject(o, "objects", objs);
    cJSON_AddBoolToObject(o, "propagating", v->busy && !v->ended);
    pthread_mutex_unlock(&v->mu);
    return o;
}

samc_status serve_video_frame_png(serve_video *v, int t, uint8_t **png, size_t *n, samc_error *err)
{
    pthread_mutex_lock(&v->read_mu);
    const uint8_t *rgb = NULL;
    samc_status st = samc_video_reader_frame(v->reader, t, &rgb, err);
    if (!st)
        st = samc_encode_png(rgb, v->info.height, v->info.width, 3, png, n, err);
    pthread_mutex_unlock(&v->read_mu);
    return st;
}

/* ---- tracker calls ------------------------------------------------------------------- */

/* Take the tracker for one call (refused while another runs). */
static bool claim(serve_video *v)
{
    pthread_mutex_lock(&v->mu);
    const bool free_now = !v->busy;
    v->busy = true;
    pthread_mutex_unlock(&v->mu);
    return free_now;
}

static void release(serve_video *v)
{
    pthread_mutex_lock(&v->mu);
    v->busy = false;
    pthread_mutex_unlock(&v->mu);
}

typedef struct prompt_job {
    serve_video *v;
    const serve_video_prompt_req *p;
    frame_masks out;
} prompt_job;

static samc_status run_prompt(serve_worker *w, void *arg, samc_error *err)
{
    prompt_job *j = arg;
    const serve_video_prompt_req *p = j->p;
    samc_frame_masks fm;
    samc_status st = samc_tracker_add_points(j->v->tracker, p->frame, p->obj_id, p->n_points ? p->points : NULL,
                                             p->n_points ? p->labels : NULL, p->n_points, p->has_box ? p->box : NULL,
                                             p->clear, &fm, err);
    return st ? st : to_masks(&fm, &j->out, err);
}

samc_status serve_video_prompt(serve_server *srv, serve_video *v, const serve_video_prompt_req *p, bool *busy,
                               double *queue_ms, samc_error *err)
{
    *busy = !claim(v);
    if (*busy)
        return samc_fail(err, SAMC_ERR_ARG, "the video is busy (a propagation runs); wait for its end");
    prompt_job j = {.v = v, .p = p};
    samc_status st = serve_pool_run(srv->pool, run_prompt, &j, queue_ms, err);
    pthread_mutex_lock(&v->mu);
    if (!st)
        store_masks(v, p->frame, &j.out);
    v->busy = false;
    pthread_mutex_unlock(&v->mu);
    masks_clear(&j.out);
    return st;
}

static samc_status run_reset(serve_worker *w, void *arg, samc_error *err)
{
    serve_video *v = arg;
    return samc_tracker_reset(v->tracker, err);
}

samc_status serve_video_reset(serve_server *srv, serve_video *v, bool *busy, samc_error *err)
{
    *busy = !claim(v);
    if (*busy)
        return samc_fail(err, SAMC_ERR_ARG, "the video is busy (a propagation runs); wait for its end");
    samc_status st = serve_pool_run(srv->pool, run_reset, v, NULL, err);
    pthread_mutex_lock(&v->mu);
    for (int t = 0; !st && t < v->info.frames; t++)
        masks_clear(&v->frames[t]);
    v->busy = false;
    pthread_mutex_unlock(&v->mu);
    return st;
}

/* ---- propagation ----------------------------------------------------------------------- */

typedef struct prop_job {
    serve_server *srv;
    serve_video *v;                /* held (a reference) until the job ends */
    serve_propagate_req p;
} prop_job;

static samc_status on_frame(void *user, const samc_frame_masks *m)
{
    serve_video *v = user;
    pthread_mutex_lock(&v->mu);
    const bool cancelled = v->cancel;
    pthread_mutex_unlock(&v->mu);
    if (cancelled)
        return SAMC_ERR_ARG;
    frame_masks fm = {0};
    samc_error e = {0};
    samc_status st = to_masks(m, &fm, &e);
    pthread_mutex_lock(&v->mu);
    if (!st) {
        store_masks(v, m->frame_idx, &fm);
        v->staged = m->frame_idx; /* handed on by on_progress */
    }
    pthread_mutex_unlock(&v->mu);
    return st;
}

static samc_status run_propagate(serve_worker *w, void *arg, samc_error *err)
{
    prop_job *j = arg;
    return samc_tracker_propagate(j->v->tracker, j->p.start, j->p.max_frames, j->p.reverse, on_frame, j->v, err);
}

static void propagate_done(void *arg, samc_status st, const samc_error *err)
{
    prop_job *j = arg;
    serve_video *v = j->v;
    pthread_mutex_lock(&v->mu);
    v->end_st = st;
    snprintf(v->end_msg, sizeof v->end_msg, "%s",
             v->cancel ? "cancelled: the client went away" : err && err->msg[0] ? err->msg : samc_status_name(st));
    v->ended = true, v->busy = false;
    pthread_cond_broadcast(&v->changed);
    pthread_mutex_unlock(&v->mu);
    serve_videos_put(j->srv->videos, v);
    free(j);
}

samc_status serve_video_start_propagation(serve_server *srv, serve_video *v, const serve_propagate_req *p, bool *busy,
                                          samc_error *err)
{
    *busy = !claim(v);
    if (*busy)
        return samc_fail(err, SAMC_ERR_ARG, "the video is busy (a propagation runs); wait for its end");
    prop_job *j = calloc(1, sizeof *j);
    if (!j) {
        release(v);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    *j = (prop_job){.srv = srv, .v = v, .p = *p};
    pthread_mutex_lock(&v->mu);
    v->n_done = 0, v->total = 0, v->staged = -1, v->ended = false, v->cancel = false;
    v->end_st = SAMC_OK, v->end_msg[0] = 0;
    pthread_mutex_unlock(&v->mu);
    serve_video *held = serve_videos_get(srv->videos, v->id); /* the job's own reference */
    samc_status st = held ? serve_pool_start(srv->pool, run_propagate, propagate_done, j, err)
                          : samc_fail(err, SAMC_ERR_ARG, "the video session was closed");
    if (st) {
        pthread_mutex_lock(&v->mu);
        v->ended = true, v->busy = false;
        pthread_mutex_unlock(&v->mu);
        serve_videos_put(srv->videos, held);
        free(j);
    }
    return st;
}

void serve_video_cancel(serve_video *v)
{
    pthread_mutex_lock(&v->mu);
    if (!v->ended)
        v->cancel = true;
    pthread_mutex_unlock(&v->mu);
}

static char *event(const char *name, cJSON *data)
{
    char *d = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);
    const size_t n = (d ? strlen(d) : 0) + strlen(name) + 32;
    char *e = d ? malloc(n) : NULL;
    if (e)
        snprintf(e, n, "event: %s\ndata: %s\n\n", name, d);
    free(d);
    return e;
}

char *serve_video_next_event(serve_video *v, int *sent, double wait_s, bool *ended)
{
    *ended = false;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)wait_s;
    pthread_mutex_lock(&v->mu);
    int r = 0;
    while (*sent >= v->n_done && !v->ended && r != ETIMEDOUT)
        r = pthread_cond_timedwait(&v->changed, &v->mu, &deadline);
    cJSON *d = cJSON_CreateObject();
    const char *name = NULL;
    if (*sent < v->n_done) {
        const int t = v->order[*sent % v->info.frames];
        (*sent)++;
        cJSON_AddNumberToObject(d, "frame", t);
        cJSON_AddNumberToObject(d, "done", *sent);
        cJSON_AddNumberToObject(d, "total", v->total);
        cJSON_AddItemToObject(d, "objects", masks_json(v, &v->frames[t]));
        name = "frame";
    } else if (v->ended) {
        cJSON_AddNumberToObject(d, "frames", v->n_done);
        if (v->info.damage) /* the frames after the damage were never there to propagate */
            cJSON_AddStringToObject(d, "damage", v->info.damage);
        if (v->end_st)
            cJSON_AddStringToObject(d, "error", v->end_msg);
        name = v->end_st ? "error" : "done";
        *ended = true;
    }
    pthread_mutex_unlock(&v->mu);
    if (!name) { /* nothing within wait_s: a comment keeps proxies and the client from timing out */
        cJSON_Delete(d);
        char *k = malloc(16);
        if (k)
            snprintf(k, 16, ": keep-alive\n\n");
        return k;
    }
    return event(name, d);
}
