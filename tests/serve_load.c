/* SPDX-License-Identifier: Apache-2.0 */
/* serve_load.c - a load test and latency benchmark of `samc serve` on
 * loopback: N clients (threads, one keep-alive connection each) send M
 * prompts each on one uploaded image; every reply must be 200 and carry the
 * very masks the same prompt got when sent alone (nothing lost, nothing
 * wrong); latency percentiles are reported, beside the time the worker spent
 * predicting (the in-process time, from each reply's timing_ms.compute), and
 * the server's resident memory must stay flat after a warm-up pass.
 *
 *   serve_load --port P --image IMG [--clients 4] [--requests 50] [--prompts 16]
 *              [--max-growth-mb 16] [--seconds 120] [--json OUT]
 * Exit 0: every request answered right and memory flat; 1 otherwise. */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct opts {
    int port, clients, requests, prompts;
    double max_growth_mb, seconds;
    const char *image, *json;
} opts;

typedef struct conn {
    int fd;
    char *buf;                     /* the last reply's body */
    size_t cap;
} conn;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int port;

static bool connect_to(conn *c)
{
    if (c->fd >= 0)
        return true;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a)) {
        close(c->fd);
        c->fd = -1;
        return false;
    }
    return true;
}

static void drop(conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static bool send_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        const ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k <= 0)
            return false;
        s += k, n -= (size_t)k;
    }
    return true;
}

/* One request on the keep-alive connection (reconnecting once when the
 * server closed it); the status, the body in c->buf. -1: no reply. */
static int request(conn *c, const char *method, const char *path, const char *type, const void *body, size_t n)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!connect_to(c))
            return -1;
        char head[512];
        const int hn = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
                                "Content-Length: %zu\r\n\r\n", method, path, type, n);
        if (!send_all(c->fd, head, (size_t)hn) || (n && !send_all(c->fd, body, n))) {
            drop(c);
            continue;
        }
        size_t got = 0;
        char *end = NULL;
        for (;;) { /* the status line and headers */
            if (got + 4096 + 1 > c->cap && !(c->buf = realloc(c->buf, c->cap = 2 * c->cap + 8192)))
                return -1;
            const ssize_t k = recv(c->fd, c->buf + got, c->cap - got - 1, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
            c->buf[got] = 0;
            if ((end = strstr(c->buf, "\r\n\r\n")))
                break;
        }
        if (!end) {
            drop(c);
            continue;
        }
        int status = 0;
        sscanf(c->buf, "HTTP/1.1 %d", &status);
        const char *cl = strcasestr(c->buf, "\r\nContent-Length:");
        const size_t len = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
        const bool closes = strcasestr(c->buf, "\r\nConnection: close") != NULL;
        const size_t head_len = (size_t)(end + 4 - c->buf);
        size_t have = got - head_len;
        memmove(c->buf, c->buf + head_len, have);
        if (len + 1 > c->cap && !(c->buf = realloc(c->buf, c->cap = len + 1)))
            return -1;
        while (have < len) {
            const ssize_t k = recv(c->fd, c->buf + have, len - have, 0);
            if (k <= 0)
                break;
            have += (size_t)k;
        }
        c->buf[have < len ? have : len] = 0;
        if (have < len || closes)
            drop(c);
        if (have < len)
            return -1;
        return status;
    }
    return -1;
}

/* The part of a predict reply that must not change: the masks and the best. */
static char *stable(const char *reply, double *compute_ms)
{
    cJSON *o = cJSON_Parse(reply);
    if (!o)
        return NULL;
    cJSON *keep = cJSON_CreateObject();
    cJSON_AddItemReferenceToObject(keep, "masks", cJSON_GetObjectItem(o, "masks"));
    cJSON_AddItemReferenceToObject(keep, "best", cJSON_GetObjectItem(o, "best"));
    char *s = cJSON_PrintUnformatted(keep);
    const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "timing_ms"), "compute");
    *compute_ms = cJSON_IsNumber(t) ? t->valuedouble : NAN;
    cJSON_Delete(keep);
    cJSON_Delete(o);
    return s;
}

typedef struct shared {
    const opts *o;
    char path[128];
    char **bodies, **want;         /* per prompt */
    double deadline;
} shared;

typedef struct client {
    shared *sh;
    int index, done, failed, wrong;
    double *lat, *compute;         /* ms per request */
} client;

static void *run_client(void *arg)
{
    client *cl = arg;
    shared *sh = cl->sh;
    conn c = {.fd = -1};
    unsigned seed = 1234u + (unsigned)cl->index;
    for (int r = 0; r < sh->o->requests && now() < sh->deadline; r++) {
        const int k = (int)(rand_r(&seed) % (unsigned)sh->o->prompts);
        const double t0 = now();
        const int st = request(&c, "POST", sh->path, "application/json", sh->bodies[k], strlen(sh->bodies[k]));
        cl->lat[cl->done] = 1e3 * (now() - t0);
        double comp = NAN;
        char *got = st == 200 ? stable(c.buf, &comp) : NULL;
        cl->compute[cl->done] = comp;
        cl->done++;
        if (st != 200) {
            if (cl->failed++ < 3)
                fprintf(stderr, "client %d: status %d: %.200s\n", cl->index, st, st > 0 ? c.buf : "(no reply)");
        } else if (!got || strcmp(got, sh->want[k])) {
            if (cl->wrong++ < 3)
                fprintf(stderr, "client %d: prompt %d: the reply differs from the prompt's reference\n", cl->index, k);
        }
        free(got);
    }
    drop(&c);
    free(c.buf);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double q) { return n ? v[(int)(q * (n - 1) + 0.5)] : NAN; }

/* The server's resident memory (MiB) and CPU time (s), from /metrics. */
static void server_usage(conn *c, double *mb, double *cpu)
{
    *mb = *cpu = NAN;
    if (request(c, "GET", "/metrics?format=json", "text/plain", "", 0) != 200)
        return;
    cJSON *o = cJSON_Parse(c->buf);
    const cJSON *r = cJSON_GetObjectItem(o, "resident_bytes"), *t = cJSON_GetObjectItem(o, "cpu_seconds");
    *mb = cJSON_IsNumber(r) ? r->valuedouble / (1 << 20) : NAN;
    *cpu = cJSON_IsNumber(t) ? t->valuedouble : NAN;
    cJSON_Delete(o);
}

static bool parse(int argc, char **argv, opts *o)
{
    *o = (opts){.clients = 4, .requests = 50, .prompts = 16, .max_growth_mb = 16, .seconds = 120};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--port")) o->port = atoi(v);
        else if (!strcmp(f, "--image")) o->image = v;
        else if (!strcmp(f, "--clients")) o->clients = atoi(v);
        else if (!strcmp(f, "--requests")) o->requests = atoi(v);
        else if (!strcmp(f, "--prompts")) o->prompts = atoi(v);
        else if (!strcmp(f, "--max-growth-mb")) o->max_growth_mb = atof(v);
        else if (!strcmp(f, "--seconds")) o->seconds = atof(v);
        else if (!strcmp(f, "--json")) o->json = v;
        else return false;
    }
    return o->port > 0 && o->image && o->clients > 0 && o->clients <= 256 && o->requests > 0 && o->prompts > 0;
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    if (b && fread(b, 1, *n, f) != *n)
        free(b), b = NULL;
    fclose(f);
    return b;
}

/* Upload the image; the prompts (seeded points inside it) and their
 * reference replies, each sent alone. */
static bool prepare(shared *sh, conn *c)
{
    size_t n = 0;
    char *img = read_all(sh->o->image, &n);
    const int st = img ? request(c, "POST", "/v1/images", "application/octet-stream", img, n) : -1;
    free(img);
    cJSON *up = st == 201 ? cJSON_Parse(c->buf) : NULL;
    if (!up) {
        fprintf(stderr, "serve_load: upload failed (%d): %.300s\n", st, st > 0 ? c->buf : "");
        return false;
    }
    const int w = cJSON_GetObjectItem(up, "width")->valueint, h = cJSON_GetObjectItem(up, "height")->valueint;
    snprintf(sh->path, sizeof sh->path, "/v1/images/%s/predict", cJSON_GetObjectItem(up, "id")->valuestring);
    cJSON_Delete(up);
    sh->bodies = calloc((size_t)sh->o->prompts, sizeof *sh->bodies);
    sh->want = calloc((size_t)sh->o->prompts, sizeof *sh->want);
    unsigned seed = 42;
    for (int k = 0; k < sh->o->prompts; k++) {
        char b[256];
        const int x = (int)(rand_r(&seed) % (unsigned)w), y = (int)(rand_r(&seed) % (unsigned)h);
        if (k % 3 == 2) /* some with a second, negative point */
            snprintf(b, sizeof b, "{\"points\":[[%d,%d],[%d,%d,0]]}", x, y, (x + w / 3) % w, (y + h / 3) % h);
        else
            snprintf(b, sizeof b, "{\"points\":[[%d,%d]]}", x, y);
        sh->bodies[k] = strdup(b);
        double comp;
        if (request(c, "POST", sh->path, "application/json", b, strlen(b)) != 200 ||
            !(sh->want[k] = stable(c->buf, &comp))) {
            fprintf(stderr, "serve_load: reference for prompt %d failed: %.300s\n", k, c->buf);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    opts o;
    if (!parse(argc, argv, &o)) {
        fprintf(stderr, "usage: serve_load --port P --image IMG [--clients N] [--requests M] [--prompts K] "
                        "[--max-growth-mb MB] [--seconds S] [--json OUT]\n");
        return 2;
    }
    port = o.port;
    shared sh = {.o = &o};
    conn c = {.fd = -1};
    if (!prepare(&sh, &c)) {
        drop(&c);
        free(c.buf);
        return 1;
    }
    int rc = 1;
    client *cl = calloc((size_t)o.clients, sizeof *cl);
    pthread_t *tid = calloc((size_t)o.clients, sizeof *tid);
    for (int pass = 0; pass < 2; pass++) { /* a warm-up pass, then the measured one */
        double rss0 = 0, cpu0 = 0, rss1 = 0, cpu1 = 0;
        if (pass)
            server_usage(&c, &rss0, &cpu0);
        sh.deadline = now() + o.seconds;
        const double t0 = now();
        for (int i = 0; i < o.clients; i++) {
            free(cl[i].lat), free(cl[i].compute);
            cl[i] = (client){.sh = &sh, .index = i, .lat = calloc((size_t)o.requests, sizeof(double)),
                             .compute = calloc((size_t)o.requests, sizeof(double))};
            pthread_create(&tid[i], NULL, run_client, &cl[i]);
        }
        for (int i = 0; i < o.clients; i++)
            pthread_join(tid[i], NULL);
        if (!pass)
            continue;
        const double wall = now() - t0;
        server_usage(&c, &rss1, &cpu1);
        int n = 0, failed = 0, wrong = 0;
        for (int i = 0; i < o.clients; i++)
            n += cl[i].done, failed += cl[i].failed, wrong += cl[i].wrong;
        double *lat = malloc((size_t)n * sizeof *lat), *comp = malloc((size_t)n * sizeof *comp),
               *over = malloc((size_t)n * sizeof *over);
        int k = 0;
        for (int i = 0; i < o.clients; i++)
            for (int r = 0; r < cl[i].done; r++, k++)
                lat[k] = cl[i].lat[r], comp[k] = cl[i].compute[r], over[k] = lat[k] - comp[k];
        qsort(lat, (size_t)n, sizeof *lat, cmp_double);
        qsort(comp, (size_t)n, sizeof *comp, cmp_double);
        qsort(over, (size_t)n, sizeof *over, cmp_double);
        const int want = o.clients * o.requests;
        printf("serve_load: %d clients x %d requests: %d answered (%d expected), %d failed, %d wrong, in %.2f s "
               "(%.1f requests/s)\n", o.clients, o.requests, n, want, failed, wrong, wall, n / wall);
        printf("latency ms: p50 %.2f  p95 %.2f  p99 %.2f  max %.2f\n", pct(lat, n, .5), pct(lat, n, .95),
               pct(lat, n, .99), lat[n - 1]);
        printf("worker predict ms (in-process): p50 %.2f  p95 %.2f;  server overhead ms: p50 %.2f  p95 %.2f\n",
               pct(comp, n, .5), pct(comp, n, .95), pct(over, n, .5), pct(over, n, .95));
        printf("server CPU time per request (all its threads): %.2f ms\n", 1e3 * (cpu1 - cpu0) / n);
        printf("resident memory: %.1f MiB after the warm-up pass, %.1f MiB after (%+.1f MiB, at most %+.0f allowed)\n",
               rss0, rss1, rss1 - rss0, o.max_growth_mb);
        if (o.json) {
            FILE *f = fopen(o.json, "w");
            if (f) {
                fprintf(f, "{\"clients\": %d, \"requests\": %d, \"answered\": %d, \"failed\": %d, \"wrong\": %d, "
                           "\"seconds\": %.3f, \"p50_ms\": %.3f, \"p95_ms\": %.3f, \"p99_ms\": %.3f, "
                           "\"compute_p50_ms\": %.3f, \"compute_p95_ms\": %.3f, \"overhead_p50_ms\": %.3f, "
                           "\"overhead_p95_ms\": %.3f, \"server_cpu_ms_per_request\": %.3f, \"rss_before_mb\": %.1f, "
                           "\"rss_after_mb\": %.1f}\n",
                        o.clients, o.requests, n, failed, wrong, wall, pct(lat, n, .5), pct(lat, n, .95),
                        pct(lat, n, .99), pct(comp, n, .5), pct(comp, n, .95), pct(over, n, .5), pct(over, n, .95),
                        1e3 * (cpu1 - cpu0) / n, rss0, rss1);
                fclose(f);
            }
        }
        const bool good = n == want && !failed && !wrong && rss1 - rss0 <= o.max_growth_mb;
        free(lat), free(comp), free(over);
        printf("serve_load: %s\n", good ? "passed" : n < want ? "FAILED (requests not answered within --seconds)"
                                                             : "FAILED");
        rc = good ? 0 : 1;
    }
    for (int i = 0; i < o.clients; i++)
        free(cl[i].lat), free(cl[i].compute);
    for (int k = 0; k < o.prompts; k++)
        free(sh.bodies[k]), free(sh.want[k]);
    free(sh.bodies), free(sh.want), free(cl), free(tid);
    drop(&c);
    free(c.buf);
    return rc;
}
