/* SPDX-License-Identifier: Apache-2.0 */
/* serve_http.h - a request as the route handlers see it, and the replies
 * they make (serve_http.c, on libmicrohttpd). Each handler queues exactly
 * one reply. */
#ifndef SAMC_APPS_SERVE_HTTP_H
#define SAMC_APPS_SERVE_HTTP_H

#include <microhttpd.h>

#include "serve.h"

typedef struct serve_req {
    serve_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    serve_route route;
    const uint8_t *body;           /* the body (an upload's file part), NUL-terminated; body_n bytes */
    size_t body_n;
    double t0;                     /* arrival, monotonic seconds */
    int status;                    /* the reply's HTTP status (metrics) */
} serve_req;

/* A multipart upload's file parts: *starts[i] is where part i begins in the
 * body, the next part's start (or body_n) where it ends; 0 for a plain body. */
#define SERVE_MAX_PARTS 100000
int serve_body_parts(serve_req *rq, const size_t **starts);
/* The body's buffer, taken from the request (freed with free); NULL when empty. */
uint8_t *serve_take_body(serve_req *rq, size_t *n);
/* A query parameter ("?format=json"), or NULL. */
const char *serve_query(serve_req *rq, const char *key);

/* Reply with JSON (root is taken and freed). */
void serve_reply_json(serve_req *rq, int status, cJSON *root);
/* {"error": message, "status": code}. */
void serve_reply_error(serve_req *rq, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A failed samc call: 400 for the caller's mistakes (bad prompt, bad
 * image), 503 when busy or out of memory, 500 otherwise; err's message. */
void serve_reply_failure(serve_req *rq, samc_status st, const samc_error *err);
/* Bytes: taken (released with `release` when sent) when it is given, else copied. */
void serve_reply_bytes(serve_req *rq, int status, const char *type, void *data, size_t n, void (*release)(void *));
/* A streamed reply of unknown length (chunked), produced by `reader`. */
void serve_reply_stream(serve_req *rq, const char *type, MHD_ContentReaderCallback reader, void *cls,
                        MHD_ContentReaderFreeCallback done);

/* Start and stop the HTTP daemon; *port: the bound port. */
samc_status serve_http_start(serve_server *srv, struct MHD_Daemon **out, int *port, samc_error *err);
void serve_http_stop(struct MHD_Daemon *d);

/* The handlers, one per route (serve_images.c, serve_videos.c,
 * serve_metrics.c, serve_static.c). */
void serve_on_page(serve_req *rq);
void serve_on_health(serve_req *rq);
void serve_on_metrics(serve_req *rq);
void serve_on_models(serve_req *rq);
void serve_on_upload_image(serve_req *rq);
void serve_on_image(serve_req *rq);
void serve_on_predict(serve_req *rq);
void serve_on_text(serve_req *rq);
void serve_on_amg(serve_req *rq);
void serve_on_upload_video(serve_req *rq);
void serve_on_video(serve_req *rq);
void serve_on_video_frame(serve_req *rq);
void serve_on_video_masks(serve_req *rq);
void serve_on_video_prompt(serve_req *rq);
void serve_on_video_propagate(serve_req *rq);
void serve_on_video_reset(serve_req *rq);

/* Metrics (serve_metrics.c). */
samc_status serve_metrics_new(serve_metrics **out, samc_error *err);
void serve_metrics_free(serve_metrics *m);
void serve_metrics_record(serve_metrics *m, serve_route_id route, int status, double seconds);

#endif
