/* SPDX-License-Identifier: Apache-2.0 */
/* serve.h - `samc serve`: the parts of the server and what they share.
 *
 *   cmd_serve.c        options, models, start and stop (apps/)
 *   serve_http.c       libmicrohttpd: a thread per connection, bodies under
 *                      limits, responses, the route table dispatch
 *   serve_route.c      URL paths to routes and their ids (pure, fuzzed)
 *   serve_request.c    JSON request bodies to prompts, validated (pure, fuzzed)
 *   serve_pool.c       the compute workers (each a predictor and a SAM 3
 *                      processor with its own OpenMP team) and their queue
 *   serve_store.c      uploaded images and the LRU cache of their embeddings
 *   serve_images.c     the image routes: upload, predict, SAM 3, AMG
 *   serve_masks.c      masks to JSON records (COCO RLE, scores, PNG)
 *   serve_video.c      video sessions: a tracker, frames, per-frame results
 *   serve_videos.c     the video routes, propagation streamed as events
 *   serve_metrics.c    /health, /v1/models, /metrics
 *   serve_static.c     the web page (web/), embedded at build time
 *
 * Every request is hostile: bodies have size limits, JSON is validated
 * against what each route takes (unknown fields are refused), ids are
 * random and unknown ones are 404, prompts are checked as the command line
 * checks them (400 with its messages), nothing in a request names a file. */
#ifndef SAMC_APPS_SERVE_H
#define SAMC_APPS_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samc.h"
#include "samc_amg.h"
#include "samc_sam3.h"
#include "samc_video.h"

typedef struct cJSON cJSON;
typedef struct serve_server serve_server;
typedef struct serve_video serve_video;
typedef struct serve_videos serve_videos;

/* ---- configuration --------------------------------------------------------- */

typedef struct serve_config {
    const char *host;              /* 127.0.0.1 */
    int port;                      /* 8080; 0: any free port (printed) */
    int workers;                   /* compute workers (1) */
    int threads;                   /* OpenMP threads per worker (0: cores / workers) */
    const char *impl;              /* NULL: the default */
    size_t cache_bytes;            /* images + embeddings budget (--cache-mb) */
    size_t max_json_bytes;         /* request JSON bodies */
    size_t max_image_bytes;        /* image uploads (encoded) */
    int64_t max_image_pixels;      /* decoded image size */
    size_t max_video_bytes;        /* video uploads */
    int max_video_frames;
    int max_videos;                /* open video sessions */
    int max_connections;
    int queue_max;                 /* requests waiting for a worker */
    int timeout_s;                 /* idle connection and queue wait */
    int video_ttl_s;               /* an idle video session is closed after this */
} serve_config;

serve_config serve_default_config(void);

/* ---- the compute workers (serve_pool.c) ------------------------------------ */

typedef struct serve_worker {
    int index;
    samc_predictor *pred;          /* SAM 2 model loaded, else NULL */
    samc_sam3_processor *sam3;     /* SAM 3 model loaded, else NULL */
    int threads;
} serve_worker;

typedef samc_status (*serve_job_fn)(serve_worker *w, void *arg, samc_error *err);
typedef struct serve_pool serve_pool;

samc_status serve_pool_new(const samc_model *sam2, const samc_model *sam3, const serve_config *cfg, serve_pool **out,
                           samc_error *err);
void serve_pool_free(serve_pool *p);
/* Run fn on a worker and wait for it. SAMC_ERR_UNSUPPORTED with "busy" in
 * the message when the queue is full or the wait for a worker exceeds the
 * timeout (the job then never runs); *queue_ms: the wait. */
samc_status serve_pool_run(serve_pool *p, serve_job_fn fn, void *arg, double *queue_ms, samc_error *err);
/* Start fn on a worker and return; done(arg, status, err) is called on the
 * worker when it finishes. Refused (busy) as serve_pool_run. */
typedef void (*serve_done_fn)(void *arg, samc_status st, const samc_error *err);
samc_status serve_pool_start(serve_pool *p, serve_job_fn fn, serve_done_fn done, void *arg, samc_error *err);
int serve_pool_queued(serve_pool *p);
int serve_pool_busy(serve_pool *p);
int serve_pool_workers(const serve_pool *p);
int serve_pool_threads(const serve_pool *p);
/* True when `err` is the pool's refusal (the server answers 503). */
bool serve_is_busy(const samc_error *err);

/* ---- images and their embeddings (serve_store.c) -------------------------- */

#define SERVE_ID_LEN 32            /* ids: 128 random bits as hex */
typedef struct serve_image serve_image;
typedef struct serve_store serve_store;

typedef struct serve_store_stats {
    int64_t hits, misses, evictions, images, bytes, budget;
} serve_store_stats;

/* A new random id (the kernel's generator: ids are not guessable). */
void serve_new_id(char id[SERVE_ID_LEN + 1]);
samc_status serve_store_new(size_t budget, serve_store **out, samc_error *err);
void serve_store_free(serve_store *s);
/* Takes rgb (malloc'd); *id: the new image's id. */
samc_status serve_store_add(serve_store *s, uint8_t *rgb, int h, int w, char id[SERVE_ID_LEN + 1], samc_error *err);
/* The image with that id, held until serve_store_put; NULL: unknown. */
serve_image *serve_store_get(serve_store *s, const char *id);
void serve_store_put(serve_store *s, serve_image *img);
bool serve_store_remove(serve_store *s, const char *id);
void serve_store_stats_get(serve_store *s, serve_store_stats *out);

const uint8_t *serve_image_rgb(const serve_image *img);
int serve_image_height(const serve_image *img);
int serve_image_width(const serve_image *img);
const char *serve_image_id(const serve_image *img);
/* Which families' embeddings are cached now. */
bool serve_image_has_embedding(serve_store *s, serve_image *img, samc_family fam);
/* The image's embedding for `fam`, made on a worker when not cached (one
 * computation however many requests ask at once). Held with the image.
 * *encode_ms: the encoder's time when this call made it, else 0. */
samc_status serve_image_embedding(serve_store *s, serve_pool *pool, serve_image *img, samc_family fam,
                                  const samc_embedding **out, double *encode_ms, samc_error *err);
/* Keep a prediction's low-res logits (n masks of side*side, copied) for a
 * later mask_input; *pred: its number. The last SERVE_KEEP_LOWRES are kept. */
#define SERVE_KEEP_LOWRES 8
samc_status serve_image_keep_lowres(serve_store *s, serve_image *img, const float *low, int n, int side, int *pred,
                                    samc_error *err);
/* Mask k of prediction `pred` (copied into out, side*side); false: gone or unknown. */
bool serve_image_lowres(serve_store *s, serve_image *img, int pred, int k, float *out, int side);

/* ---- the server ------------------------------------------------------------ */

typedef struct serve_metrics serve_metrics;

struct serve_server {
    serve_config cfg;
    const samc_model *sam2, *sam3;
    const char *sam2_path, *sam3_path;
    serve_pool *pool;
    serve_store *store;
    serve_videos *videos;
    serve_metrics *metrics;
    double started;                /* monotonic seconds */
};

double serve_now(void);            /* monotonic seconds */

/* ---- routes (serve_route.c) -------------------------------------------------- */

typedef enum serve_route_id {
    R_NONE = 0,
    R_PAGE,            /* GET / and the page's files */
    R_HEALTH,          /* GET /health */
    R_METRICS,         /* GET /metrics */
    R_MODELS,          /* GET /v1/models */
    R_IMAGES,          /* POST /v1/images */
    R_IMAGE,           /* GET, DELETE /v1/images/{id} */
    R_PREDICT,         /* POST /v1/images/{id}/predict */
    R_TEXT,            /* POST /v1/images/{id}/concepts (SAM 3) */
    R_AMG,             /* POST /v1/images/{id}/everything */
    R_VIDEOS,          /* POST /v1/videos */
    R_VIDEO,           /* GET, DELETE /v1/videos/{id} */
    R_VIDEO_FRAME,     /* GET /v1/videos/{id}/frames/{t} (PNG) */
    R_VIDEO_MASKS,     /* GET /v1/videos/{id}/masks/{t} (JSON) */
    R_VIDEO_PROMPT,    /* POST /v1/videos/{id}/prompts */
    R_VIDEO_PROPAGATE, /* POST /v1/videos/{id}/propagate (event stream) */
    R_VIDEO_RESET,     /* POST /v1/videos/{id}/reset */
    R_COUNT
} serve_route_id;

typedef struct serve_route {
    serve_route_id id;
    char res_id[SERVE_ID_LEN + 1]; /* the image or video id in the path */
    int frame;                     /* the frame number in the path */
    const char *file;              /* R_PAGE: the page file's name */
} serve_route;

/* The route of a path (no query string); R_NONE: not one of ours. A path
 * whose id is not 32 hex digits or whose frame number is not a small
 * non-negative integer is R_NONE too (404). */
serve_route serve_route_match(const char *path);
/* The methods a route takes ("GET", "POST", "GET, DELETE"). */
const char *serve_route_methods(serve_route_id id);
/* The route's name in metrics ("predict"). */
const char *serve_route_name(serve_route_id id);

/* ---- request bodies (serve_request.c) --------------------------------------- */

#define SERVE_MAX_POINTS 64
#define SERVE_MAX_BOXES 16

/* POST /v1/images/{id}/predict. */
typedef struct serve_predict_req {
    int n_points;
    float points[2 * SERVE_MAX_POINTS];
    int32_t labels[SERVE_MAX_POINTS];
    bool has_box;
    float box[4];
    bool multimask;                /* default: true for one point and nothing else, as the official demo */
    int mask_pred, mask_index;     /* mask_input: a previous prediction's low-res mask, -1: none */
    bool png;                      /* add each mask as a base64 PNG */
} serve_predict_req;

/* POST /v1/images/{id}/concepts. */
typedef struct serve_text_req {
    char text[1024];               /* "" : boxes only */
    int n_boxes;
    float boxes[4 * SERVE_MAX_BOXES];   /* x0, y0, x1, y1 pixels */
    bool positive[SERVE_MAX_BOXES];
    float threshold;               /* 0.5 */
    bool png;
} serve_text_req;

/* POST /v1/videos/{id}/prompts. */
typedef struct serve_video_prompt_req {
    int frame, obj_id;
    int n_points;
    float points[2 * SERVE_MAX_POINTS];
    int32_t labels[SERVE_MAX_POINTS];
    bool has_box, clear;
    float box[4];
} serve_video_prompt_req;

/* POST /v1/videos/{id}/propagate. */
typedef struct serve_propagate_req {
    int start;                     /* -1: the first prompted frame */
    int max_frames;                /* -1: all */
    bool reverse;
} serve_propagate_req;

/* Each parser takes the raw body (not NUL-terminated), the image or video
 * size the prompt must lie in, and fills `out`; a refused body gets a
 * message naming the field, and the messages about points and boxes are
 * those of `samc segment` / `samc track`. */
samc_status serve_parse_predict(const char *body, size_t n, int h, int w, serve_predict_req *out, samc_error *err);
samc_status serve_parse_text(const char *body, size_t n, int h, int w, serve_text_req *out, samc_error *err);
samc_status serve_parse_amg(const char *body, size_t n, samc_amg_params *out, samc_error *err);
samc_status serve_parse_video_prompt(const char *body, size_t n, int frames, int h, int w, serve_video_prompt_req *out,
                                     samc_error *err);
samc_status serve_parse_propagate(const char *body, size_t n, int frames, serve_propagate_req *out, samc_error *err);

/* ---- masks to JSON (serve_masks.c) ------------------------------------------- */

/* One mask's records for a reply, made where the mask is (a worker encodes
 * the candidates of a prediction at once, on its threads). */
typedef struct serve_mask_rec {
    samc_mask_rle rle;
    float stability;
    bool has_stability;            /* false: no logit above the low cut (JSON null) */
} serve_mask_rec;
/* From logits (the mask is logit > 0). */
samc_status serve_mask_encode(const float *logits, int h, int w, serve_mask_rec *out, samc_error *err);
/* "area", "bbox", "stability_score", "rle" into obj; frees r's RLE. */
void serve_mask_rec_json(cJSON *obj, serve_mask_rec *r);
/* "png": the mask as a base64 PNG (`mask` 0/1 bytes, or NULL: logits > 0). */
samc_status serve_mask_png(cJSON *obj, const float *logits, const uint8_t *mask, int h, int w, samc_error *err);
/* One mask's record into obj: "area", "bbox", "rle" {size, counts: the COCO
 * string}, "stability_score" when `logits` (else the mask is binary), and
 * "png" (base64) when asked. `mask` is 0/1 bytes or NULL (from logits > 0). */
samc_status serve_mask_json(cJSON *obj, const float *logits, const uint8_t *mask, int h, int w, bool png,
                            samc_error *err);
/* Standard base64 of n bytes; malloc'd, NULL when out of memory. */
char *serve_base64(const uint8_t *data, size_t n);

/* ---- video sessions (serve_video.c) ----------------------------------------- */

/* A session: an uploaded video file, its tracker (SAM 2's video predictor;
 * a SAM 3 video predictor would be another backend behind the same routes,
 * its prompts gaining a text), a reader for its frames, and the latest
 * masks of every frame (COCO RLE). One tracker call at a time: a second
 * while one runs (a propagation) is refused with 409. */

/* One object's mask on a frame, as stored and answered. */
typedef struct serve_obj_mask {
    int obj_id;
    float object_score;            /* logit: > 0 the object is present */
    int64_t area;
    float bbox[4];
    char *counts;                  /* the COCO RLE string */
} serve_obj_mask;

samc_status serve_videos_new(const serve_config *cfg, serve_videos **out, samc_error *err);
void serve_videos_free(serve_videos *vs);
int serve_videos_count(serve_videos *vs);
/* A new session on the uploaded bytes (taken: freed with the session);
 * *id: its id. */
samc_status serve_videos_add(serve_server *srv, uint8_t *bytes, size_t n, char id[SERVE_ID_LEN + 1], samc_error *err);
/* The same on decoded frames (T of h x w RGB, taken: freed), in the order
 * uploaded. */
samc_status serve_videos_add_frames(serve_server *srv, uint8_t *rgb, int T, int h, int w, char id[SERVE_ID_LEN + 1],
                                    samc_error *err);
serve_video *serve_videos_get(serve_videos *vs, const char *id);
void serve_videos_put(serve_videos *vs, serve_video *v);
bool serve_videos_remove(serve_videos *vs, const char *id);

const samc_video_info *serve_video_info(const serve_video *v);
const char *serve_video_id(const serve_video *v);
/* Frame t as a PNG (malloc'd). */
samc_status serve_video_frame_png(serve_video *v, int t, uint8_t **png, size_t *n, samc_error *err);
/* The stored masks of frame t as a JSON array (every object). */
cJSON *serve_video_masks_json(serve_video *v, int t);
/* The session's state: frames with masks, objects, propagation. */
cJSON *serve_video_json(serve_video *v);

/* Tracker calls, on a worker; refused (409 via *busy) while another runs. */
samc_status serve_video_prompt(serve_server *srv, serve_video *v, const serve_video_prompt_req *p, bool *busy,
                               double *queue_ms, samc_error *err);
samc_status serve_video_reset(serve_server *srv, serve_video *v, bool *busy, samc_error *err);
/* Start a propagation (returns at once); its frames are then read with
 * serve_video_next_event until it ends. */
samc_status serve_video_start_propagation(serve_server *srv, serve_video *v, const serve_propagate_req *p, bool *busy,
                                          samc_error *err);
/* The next event of the running propagation as one server-sent event
 * ("event: frame" with the frame's masks, "event: done" or "event: error"
 * at the end), waiting up to `wait_s` (a ": keep-alive" comment when none
 * came); *ended when the last event was returned. `*sent` counts the frames
 * this reader has sent. malloc'd. */
char *serve_video_next_event(serve_video *v, int *sent, double wait_s, bool *ended);
/* The client of a propagation went away: stop it at the next frame. */
void serve_video_cancel(serve_video *v);

#endif
