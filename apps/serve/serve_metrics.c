/* SPDX-License-Identifier: Apache-2.0 */
/* serve_metrics.c - /health, /v1/models and /metrics (serve.h): requests by
 * route and status, latency (Prometheus histograms; percentiles of the
 * last requests in the JSON form), the embedding cache, the queue and the
 * process's resident memory. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/base/error.h"
#include "serve_http.h"

static const int codes[] = {200, 201, 204, 400, 404, 405, 409, 413, 499, 500, 503};
enum { N_CODES = sizeof codes / sizeof codes[0], N_BUCKETS = 14, RECENT = 2048 };
static const double bucket_le[N_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25, 0.5, 1, 2.5, 5, 10, 30};

typedef struct route_stats {
    int64_t by_code[N_CODES + 1];  /* the last: any other code */
    int64_t buckets[N_BUCKETS];    /* cumulative as Prometheus wants them is done when printed */
    int64_t count;
    double sum;
    float recent[RECENT];          /* seconds of the last RECENT requests (a ring) */
} route_stats;

struct serve_metrics {
    pthread_mutex_t mu;
    route_stats r[R_COUNT];
};

double serve_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

samc_status serve_metrics_new(serve_metrics **out, samc_error *err)
{
    serve_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&m->mu, NULL);
    *out = m;
    return SAMC_OK;
}

void serve_metrics_free(serve_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void serve_metrics_record(serve_metrics *m, serve_route_id route, int status, double seconds)
{
    if (route < 0 || route >= R_COUNT)
        route = R_NONE;
    pthread_mutex_lock(&m->mu);
    route_stats *r = &m->r[route];
    int c = 0;
    while (c < N_CODES && codes[c] != status)
        c++;
    r->by_code[c]++;
    int b = 0;
    while (b < N_BUCKETS && seconds > bucket_le[b])
        b++;
    if (b < N_BUCKETS)
        r->buckets[b]++;
    r->recent[r->count % RECENT] = (float)seconds;
    r->count++;
    r->sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

/* "404", or "other" for the codes not listed. */
static void code_name(int c, char *k, size_t n)
{
    if (c < N_CODES)
        snprintf(k, n, "%d", codes[c]);
    else
        snprintf(k, n, "other");
}

/* Resident memory, from /proc/self/statm (pages). */
static int64_t resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lld %lld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return (int64_t)res * sysconf(_SC_PAGESIZE);
}

/* CPU seconds the process has used, all threads (user + system). */
static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru))
        return 0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Milliseconds at quantile q of the recent requests of r (under the lock). */
static void percentiles(const route_stats *r, double out[3])
{
    const int n = r->count < RECENT ? (int)r->count : RECENT;
    float v[RECENT];
    memcpy(v, r->recent, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    static const double q[3] = {0.5, 0.95, 0.99};
    for (int i = 0; i < 3; i++)
        out[i] = n ? 1e3 * v[(int)(q[i] * (n - 1) + 0.5)] : 0;
}

/* ---- GET /health, GET /v1/models -------------------------------------------------- */

void serve_on_health(serve_req *rq)
{
    serve_server *srv = rq->srv;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", "ok");
    cJSON_AddStringToObject(o, "samc_version", samc_version());
    cJSON_AddNumberToObject(o, "uptime_s", serve_now() - srv->started);
    cJSON_AddNumberToObject(o, "workers", serve_pool_workers(srv->pool));
    cJSON_AddNumberToObject(o, "busy", serve_pool_busy(srv->pool));
    cJSON_AddNumberToObject(o, "queued", serve_pool_queued(srv->pool));
    serve_reply_json(rq, 200, o);
}

static void add_model(cJSON *arr, const samc_model *m, const char *path, const serve_pool *pool, const char *impl)
{
    if (!m)
        return;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "family", samc_family_name(samc_model_family(m)));
    cJSON_AddStringToObject(o, "config", samc_model_config_name(m));
    const char *base = strrchr(path, '/');
    cJSON_AddStringToObject(o, "file", base ? base + 1 : path); /* the name only: no server paths out */
    cJSON_AddNumberToObject(o, "image_size", samc_model_image_size(m));
    cJSON_AddStringToObject(o, "impl", impl ? impl : samc_default_impl());
    cJSON_AddNumberToObject(o, "workers", serve_pool_workers(pool));
    cJSON_AddNumberToObject(o, "threads_per_worker", serve_pool_threads(pool));
    cJSON *caps = cJSON_AddArrayToObject(o, "routes");
    static const char *const sam2[] = {"predict", "everything", "videos"}, *const sam3[] = {"concepts"};
    const bool is3 = samc_model_family(m) == SAMC_FAMILY_SAM3;
    for (int i = 0; i < (is3 ? 1 : 3); i++)
        cJSON_AddItemToArray(caps, cJSON_CreateString(is3 ? sam3[i] : sam2[i]));
}

void serve_on_models(serve_req *rq)
{
    serve_server *srv = rq->srv;
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "models");
    add_model(arr, srv->sam2, srv->sam2_path, srv->pool, srv->cfg.impl);
    add_model(arr, srv->sam3, srv->sam3_path, srv->pool, srv->cfg.impl);
    serve_reply_json(rq, 200, o);
}

/* ---- GET /metrics ------------------------------------------------------------------ */

static cJSON *metrics_json(serve_server *srv)
{
    serve_metrics *m = srv->metrics;
    serve_store_stats cs;
    serve_store_stats_get(srv->store, &cs);
    cJSON *o = cJSON_CreateObject(), *routes = cJSON_AddObjectToObject(o, "routes");
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < R_COUNT; i++) {
        const route_stats *r = &m->r[i];
        if (!r->count)
            continue;
        cJSON *e = cJSON_AddObjectToObject(routes, serve_route_name((serve_route_id)i));
        cJSON_AddNumberToObject(e, "requests", (double)r->count);
        cJSON *bc = cJSON_AddObjectToObject(e, "by_status");
        for (int c = 0; c <= N_CODES; c++)
            if (r->by_code[c]) {
                char k[16];
                code_name(c, k, sizeof k);
                cJSON_AddNumberToObject(bc, k, (double)r->by_code[c]);
            }
        double p[3];
        percentiles(r, p);
        cJSON_AddNumberToObject(e, "p50_ms", p[0]);
        cJSON_AddNumberToObject(e, "p95_ms", p[1]);
        cJSON_AddNumberToObject(e, "p99_ms", p[2]);
        cJSON_AddNumberToObject(e, "mean_ms", 1e3 * r->sum / (double)r->count);
    }
    pthread_mutex_unlock(&m->mu);
    cJSON *c = cJSON_AddObjectToObject(o, "cache");
    cJSON_AddNumberToObject(c, "hits", (double)cs.hits);
    cJSON_AddNumberToObject(c, "misses", (double)cs.misses);
    cJSON_AddNumberToObject(c, "evictions", (double)cs.evictions);
    cJSON_AddNumberToObject(c, "images", (double)cs.images);
    cJSON_AddNumberToObject(c, "bytes", (double)cs.bytes);
    cJSON_AddNumberToObject(c, "budget_bytes", (double)cs.budget);
    cJSON_AddNumberToObject(o, "resident_bytes", (double)resident_bytes());
    cJSON_AddNumberToObject(o, "cpu_seconds", cpu_seconds());
    cJSON_AddNumberToObject(o, "queued", serve_pool_queued(srv->pool));
    cJSON_AddNumberToObject(o, "busy_workers", serve_pool_busy(srv->pool));
    cJSON_AddNumberToObject(o, "uptime_s", serve_now() - srv->started);
    return o;
}

/* The Prometheus text format. */
static char *metrics_text(serve_server *srv)
{
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
#define EMIT(...) (n += (size_t)snprintf(t + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap)
    serve_metrics *m = srv->metrics;
    EMIT("# HELP samc_http_requests_total Requests answered, by route and status.\n"
         "# TYPE samc_http_requests_total counter\n");
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < R_COUNT; i++)
        for (int c = 0; c <= N_CODES; c++)
            if (m->r[i].by_code[c]) {
                char k[16];
                code_name(c, k, sizeof k);
                EMIT("samc_http_requests_total{route=\"%s\",code=\"%s\"} %lld\n", serve_route_name((serve_route_id)i),
                     k, (long long)m->r[i].by_code[c]);
            }
    EMIT("# HELP samc_http_request_seconds Time from a request's arrival to its reply's end.\n"
         "# TYPE samc_http_request_seconds histogram\n");
    for (int i = 0; i < R_COUNT; i++) {
        const route_stats *r = &m->r[i];
        if (!r->count)
            continue;
        const char *name = serve_route_name((serve_route_id)i);
        int64_t cum = 0;
        for (int b = 0; b < N_BUCKETS; b++) {
            cum += r->buckets[b];
            EMIT("samc_http_request_seconds_bucket{route=\"%s\",le=\"%g\"} %lld\n", name, bucket_le[b], (long long)cum);
        }
        EMIT("samc_http_request_seconds_bucket{route=\"%s\",le=\"+Inf\"} %lld\n", name, (long long)r->count);
        EMIT("samc_http_request_seconds_sum{route=\"%s\"} %.6f\nsamc_http_request_seconds_count{route=\"%s\"} %lld\n",
             name, r->sum, name, (long long)r->count);
    }
    pthread_mutex_unlock(&m->mu);
    serve_store_stats cs;
    serve_store_stats_get(srv->store, &cs);
    EMIT("# TYPE samc_cache_hits_total counter\nsamc_cache_hits_total %lld\n"
         "# TYPE samc_cache_misses_total counter\nsamc_cache_misses_total %lld\n"
         "# TYPE samc_cache_evictions_total counter\nsamc_cache_evictions_total %lld\n"
         "# TYPE samc_cache_images gauge\nsamc_cache_images %lld\n"
         "# TYPE samc_cache_bytes gauge\nsamc_cache_bytes %lld\n"
         "# TYPE samc_cache_budget_bytes gauge\nsamc_cache_budget_bytes %lld\n",
         (long long)cs.hits, (long long)cs.misses, (long long)cs.evictions, (long long)cs.images, (long long)cs.bytes,
         (long long)cs.budget);
    EMIT("# TYPE samc_queue_requests gauge\nsamc_queue_requests %d\n"
         "# TYPE samc_busy_workers gauge\nsamc_busy_workers %d\n"
         "# TYPE samc_process_resident_bytes gauge\nsamc_process_resident_bytes %lld\n"
         "# TYPE samc_process_cpu_seconds_total counter\nsamc_process_cpu_seconds_total %.3f\n"
         "# TYPE samc_uptime_seconds gauge\nsamc_uptime_seconds %.3f\n",
         serve_pool_queued(srv->pool), serve_pool_busy(srv->pool), (long long)resident_bytes(), cpu_seconds(),
         serve_now() - srv->started);
#undef EMIT
    return t;
}

void serve_on_metrics(serve_req *rq)
{
    const char *fmt = serve_query(rq, "format");
    if (fmt && !strcmp(fmt, "json")) {
        serve_reply_json(rq, 200, metrics_json(rq->srv));
        return;
    }
    char *t = metrics_text(rq->srv);
    if (t)
        serve_reply_bytes(rq, 200, "text/plain; version=0.0.4", t, strlen(t), free);
    else
        serve_reply_error(rq, 503, "out of memory");
}
