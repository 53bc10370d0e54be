/* SPDX-License-Identifier: Apache-2.0 */
/* serve_http.c - the HTTP side of `samc serve` on libmicrohttpd (serve_http.h):
 * a thread per connection (handlers may wait for a worker; a streamed reply
 * may wait for the next frame), bodies read under per-route limits (a
 * declared length over the limit is refused before any byte is read), a
 * file part of a multipart upload taken as the body, the route table, and
 * replies with the headers every reply carries. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/error.h"
#include "serve_http.h"

typedef struct req_state {
    serve_req pub;
    uint8_t *buf;                  /* the body so far (+1 for a NUL) */
    size_t n, cap, limit;
    struct MHD_PostProcessor *pp;  /* multipart upload */
    bool replied;                  /* a reply is queued */
    bool file_seen;                /* multipart: a file part began */
    bool skipping;                 /* multipart: the current part is not taken */
    size_t *parts;                 /* multipart video upload: where each file part starts in buf */
    int n_parts, cap_parts;
} req_state;

typedef void (*handler_fn)(serve_req *rq);

static const handler_fn handlers[R_COUNT] = {
    [R_PAGE] = serve_on_page, [R_HEALTH] = serve_on_health, [R_METRICS] = serve_on_metrics,
    [R_MODELS] = serve_on_models, [R_IMAGES] = serve_on_upload_image, [R_IMAGE] = serve_on_image,
    [R_PREDICT] = serve_on_predict, [R_TEXT] = serve_on_text, [R_AMG] = serve_on_amg,
    [R_VIDEOS] = serve_on_upload_video, [R_VIDEO] = serve_on_video, [R_VIDEO_FRAME] = serve_on_video_frame,
    [R_VIDEO_MASKS] = serve_on_video_masks, [R_VIDEO_PROMPT] = serve_on_video_prompt,
    [R_VIDEO_PROPAGATE] = serve_on_video_propagate, [R_VIDEO_RESET] = serve_on_video_reset,
};

/* ---- replies ----------------------------------------------------------------- */

static void queue(serve_req *rq, int status, struct MHD_Response *r, const char *type)
{
    req_state *s = (req_state *)rq;
    if (!r || s->replied) { /* out of memory, or a handler bug: the connection is closed */
        if (r)
            MHD_destroy_response(r);
        return;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (rq->route.id == R_PAGE) /* the page loads nothing from elsewhere */
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; "
                                "script-src 'self'; connect-src 'self'; frame-ancestors 'none'");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, serve_route_methods(rq->route.id));
    const enum MHD_Result q = MHD_queue_response(rq->conn, (unsigned)status, r);
    MHD_destroy_response(r);
    rq->status = status;
    s->replied = q == MHD_YES;
}

void serve_reply_bytes(serve_req *rq, int status, const char *type, void *data, size_t n, void (*release)(void *))
{
    struct MHD_Response *r = release ? MHD_create_response_from_buffer_with_free_callback(n, data, release)
                                     : MHD_create_response_from_buffer(n, data, MHD_RESPMEM_MUST_COPY);
    if (!r && release)
        release(data);
    queue(rq, status, r, type);
}

void serve_reply_json(serve_req *rq, int status, cJSON *root)
{
    char *text = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        static char oom[] = "{\"error\":\"out of memory\",\"status\":503}";
        serve_reply_bytes(rq, 503, "application/json", oom, sizeof oom - 1, NULL);
        return;
    }
    serve_reply_bytes(rq, status, "application/json", text, strlen(text), free);
}

void serve_reply_error(serve_req *rq, int status, const char *fmt, ...)
{
    char msg[SAMC_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    cJSON_AddNumberToObject(o, "status", status);
    serve_reply_json(rq, status, o);
}

void serve_reply_failure(serve_req *rq, samc_status st, const samc_error *err)
{
    int status = 500;
    if (serve_is_busy(err) || st == SAMC_ERR_NOMEM)
        status = 503;
    else if (st == SAMC_ERR_ARG || st == SAMC_ERR_FORMAT || st == SAMC_ERR_UNSUPPORTED || st == SAMC_ERR_SECURITY)
        status = 400;
    serve_reply_error(rq, status, "%s", err && err->msg[0] ? err->msg : samc_status_name(st));
}

void serve_reply_stream(serve_req *rq, const char *type, MHD_ContentReaderCallback reader, void *cls,
                        MHD_ContentReaderFreeCallback done)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, cls, done);
    if (!r)
        done(cls);
    queue(rq, 200, r, type);
}

int serve_body_parts(serve_req *rq, const size_t **starts)
{
    req_state *s = (req_state *)rq;
    *starts = s->parts;
    return s->n_parts;
}

uint8_t *serve_take_body(serve_req *rq, size_t *n)
{
    req_state *s = (req_state *)rq;
    uint8_t *b = s->buf;
    *n = s->n;
    s->buf = NULL, s->n = s->cap = 0;
    rq->body = (const uint8_t *)"", rq->body_n = 0;
    return b;
}

const char *serve_query(serve_req *rq, const char *key)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

/* ---- bodies ---------------------------------------------------------------- */

static size_t body_limit(const serve_server *srv, serve_route_id id)
{
    switch (id) {
    case R_IMAGES: return srv->cfg.max_image_bytes;
    case R_VIDEOS: return srv->cfg.max_video_bytes;
    case R_PREDICT: case R_TEXT: case R_AMG: case R_VIDEO_PROMPT: case R_VIDEO_PROPAGATE: case R_VIDEO_RESET:
        return srv->cfg.max_json_bytes;
    default: return 0;
    }
}

static bool append(req_state *s, const char *data, size_t n)
{
    if (n > s->limit - s->n)
        return false;
    if (s->n + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->n + n + 1)
            cap *= 2;
        uint8_t *b = realloc(s->buf, cap);
        if (!b)
            return false;
        s->buf = b, s->cap = cap;
    }
    memcpy(s->buf + s->n, data, n);
    s->n += n;
    s->buf[s->n] = 0;
    return true;
}

/* Where a new file part starts (a video upload's frames). */
static bool new_part(req_state *s)
{
    if (s->n_parts == SERVE_MAX_PARTS)
        return false;
    if (s->n_parts == s->cap_parts) {
        const int cap = s->cap_parts ? 2 * s->cap_parts : 64;
        size_t *p = realloc(s->parts, (size_t)cap * sizeof *p);
        if (!p)
            return false;
        s->parts = p, s->cap_parts = cap;
    }
    s->parts[s->n_parts++] = s->n;
    return true;
}

/* Multipart: the parts with a file name are the upload (an image upload
 * takes the first, a video upload every one: frames); other fields are ignored. */
static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                               const char *content_type, const char *encoding, const char *data, uint64_t off,
                               size_t size)
{
    req_state *s = cls;
    if (!filename)
        return MHD_YES;
    if (off == 0) { /* a new file part */
        s->skipping = s->file_seen && s->pub.route.id != R_VIDEOS;
        s->file_seen = true;
        if (!s->skipping && !new_part(s))
            return MHD_NO;
    }
    return s->skipping || append(s, data, size) ? MHD_YES : MHD_NO;
}

static bool is_multipart(struct MHD_Connection *c)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    return ct && !strncasecmp(ct, "multipart/form-data", 19);
}

/* `method` is one of the ", "-separated names in `methods`. */
static bool method_allowed(const char *methods, const char *method)
{
    const size_t n = strlen(method);
    for (const char *p = methods; *p;) {
        const char *end = strchr(p, ',');
        const size_t k = end ? (size_t)(end - p) : strlen(p);
        if (k == n && !strncmp(p, method, n))
            return true;
        p += k;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return false;
}

/* First call of a request: its route, method and declared length. */
static void begin(req_state *s)
{
    serve_req *rq = &s->pub;
    const serve_route_id id = rq->route.id;
    if (id == R_NONE) {
        serve_reply_error(rq, 404, "no such resource");
        return;
    }
    if (!method_allowed(serve_route_methods(id), rq->method)) {
        serve_reply_error(rq, 405, "%s takes %s", serve_route_name(id), serve_route_methods(id));
        return;
    }
    s->limit = body_limit(rq->srv, id);
    const char *cl = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const unsigned long long declared = cl ? strtoull(cl, NULL, 10) : 0;
    if (declared > s->limit) {
        if (!s->limit)
            serve_reply_error(rq, 413, "%s takes no body", serve_route_name(id));
        else
            serve_reply_error(rq, 413, "the body is %llu bytes; this request takes at most %zu", declared, s->limit);
        return;
    }
    if ((id == R_IMAGES || id == R_VIDEOS) && is_multipart(rq->conn) &&
        !(s->pp = MHD_create_post_processor(rq->conn, 64 * 1024, on_part, s)))
        serve_reply_error(rq, 400, "cannot read the multipart body");
}

/* Body bytes as they come. A body that grows past the limit without having
 * declared its length (chunked) cannot be answered before it ends
 * (libmicrohttpd queues replies only before or after the body), and is not
 * read to its end either: false closes the connection. */
static bool take_upload(req_state *s, const char *data, size_t n)
{
    return s->pp ? MHD_post_process(s->pp, data, n) == MHD_YES : append(s, data, n);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_n, void **con_cls)
{
    req_state *s = *con_cls;
    if (!s) {
        if (!(s = calloc(1, sizeof *s)))
            return MHD_NO;
        *con_cls = s;
        s->pub = (serve_req){.srv = cls, .conn = c, .method = method, .route = serve_route_match(url),
                             .t0 = serve_now()};
        begin(s);
        return MHD_YES;
    }
    if (*upload_n) {
        const bool ok = s->replied || take_upload(s, upload, *upload_n);
        *upload_n = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    if (s->replied)
        return MHD_YES;
    if (s->pp && !s->file_seen) {
        serve_reply_error(&s->pub, 400, "the multipart body has no file part");
        return MHD_YES;
    }
    s->pub.body = s->buf ? s->buf : (const uint8_t *)"", s->pub.body_n = s->n;
    handlers[s->pub.route.id](&s->pub);
    if (!s->replied) /* every handler replies; this is the fallback for a bug */
        serve_reply_error(&s->pub, 500, "no reply");
    return MHD_YES;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    serve_server *srv = cls;
    req_state *s = *con_cls;
    if (!s)
        return;
    serve_metrics_record(srv->metrics, s->pub.route.id, s->replied ? s->pub.status : 499, serve_now() - s->pub.t0);
    if (s->pp)
        MHD_destroy_post_processor(s->pp);
    free(s->parts);
    free(s->buf);
    free(s);
    *con_cls = NULL;
}

/* ---- the daemon ------------------------------------------------------------ */

samc_status serve_http_start(serve_server *srv, struct MHD_Daemon **out, int *port, samc_error *err)
{
    *out = NULL;
    char svc[16];
    snprintf(svc, sizeof svc, "%d", srv->cfg.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai = NULL;
    const int gai = getaddrinfo(srv->cfg.host, svc, &hints, &ai);
    if (gai)
        return samc_fail(err, SAMC_ERR_ARG, "--host %s: %s", srv->cfg.host, gai_strerror(gai));
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)srv->cfg.port, NULL, NULL, on_request, srv,
        MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)srv->cfg.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->cfg.timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, /* request line and headers */
        MHD_OPTION_STRICT_FOR_CLIENT, 1,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, srv,
        MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d)
        return samc_fail(err, SAMC_ERR_IO, "cannot listen on %s port %d (in use, or not an address of this machine)",
                         srv->cfg.host, srv->cfg.port);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : srv->cfg.port;
    *out = d;
    return SAMC_OK;
}

void serve_http_stop(struct MHD_Daemon *d)
{
    if (d)
        MHD_stop_daemon(d);
}
