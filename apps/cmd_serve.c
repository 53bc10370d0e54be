/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_serve.c - `samc serve`: the options, the models (one per family,
 * loaded at start), then the HTTP server of apps/serve/ until SIGINT or
 * SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/base/error.h"
#include "serve/serve.h"
#include "serve/serve_http.h"

typedef struct serve_args {
    const char *model[2], *config[2], *vocab, *port_file;
    int n_models;
    bool allow_nonfinite;
    serve_config cfg;
} serve_args;

serve_config serve_default_config(void)
{
    return (serve_config){.host = "127.0.0.1", .port = 8080, .workers = 1, .cache_bytes = (size_t)2048 << 20,
                          .max_json_bytes = (size_t)1 << 20, .max_image_bytes = (size_t)64 << 20,
                          .max_image_pixels = 50LL * 1000 * 1000, .max_video_bytes = (size_t)512 << 20,
                          .max_video_frames = 3000, .max_videos = 4, .max_connections = 64, .queue_max = 64,
                          .timeout_s = 60, .video_ttl_s = 1800};
}

static samc_status parse_mb(const char *flag, const char *v, int lo, int hi, size_t *out, samc_error *err)
{
    int mb = 0;
    samc_status st = cli_parse_int(flag, v, lo, hi, &mb, err);
    if (!st)
        *out = (size_t)mb << 20;
    return st;
}

enum {
    O_MODEL, O_CONFIG, O_VOCAB, O_HOST, O_PORT, O_PORT_FILE, O_IMPL, O_WORKERS, O_THREADS, O_CACHE, O_UPLOAD,
    O_VIDEO_MB, O_IMAGE_MP, O_VIDEO_FRAMES, O_VIDEOS, O_CONNECTIONS, O_QUEUE, O_TIMEOUT, O_VIDEO_TTL, O_NONFINITE
};
static const cli_option serve_options[] = {
    [O_MODEL] = {"model", 'm', "CKPT"},           [O_CONFIG] = {"config", 'c', "NAME|FILE"},
    [O_VOCAB] = {"vocab", 0, "FILE"},             [O_HOST] = {"host", 0, "ADDR"},
    [O_PORT] = {"port", 'p', "N"},                [O_PORT_FILE] = {"port-file", 0, "FILE"},
    [O_IMPL] = {"impl", 0, "NAME"},               [O_WORKERS] = {"workers", 'w', "N"},
    [O_THREADS] = {"threads", 't', "N"},          [O_CACHE] = {"cache-mb", 0, "N"},
    [O_UPLOAD] = {"max-upload-mb", 0, "N"},       [O_VIDEO_MB] = {"max-video-mb", 0, "N"},
    [O_IMAGE_MP] = {"max-image-mp", 0, "N"},      [O_VIDEO_FRAMES] = {"max-video-frames", 0, "N"},
    [O_VIDEOS] = {"max-videos", 0, "N"},          [O_CONNECTIONS] = {"max-connections", 0, "N"},
    [O_QUEUE] = {"queue", 0, "N"},                [O_TIMEOUT] = {"timeout", 0, "S"},
    [O_VIDEO_TTL] = {"video-ttl", 0, "S"},        [O_NONFINITE] = {"allow-nonfinite", 0, NULL},
};

static samc_status parse_args(int argc, char **argv, serve_args *a, samc_error *err)
{
    memset(a, 0, sizeof *a);
    a->cfg = serve_default_config();
    serve_config *c = &a->cfg;
    cli_parser cp;
    cli_parser_init(&cp, "serve", argc, argv, serve_options, sizeof serve_options / sizeof serve_options[0]);
    const char *v;
    for (int o; (o = cli_next(&cp, &v, err)) != -1;) {
        samc_status st = SAMC_OK;
        int mp = 0;
        switch (o) {
        case -2: return SAMC_ERR_ARG;
        case O_NONFINITE: a->allow_nonfinite = true; break;
        case O_MODEL:
            if (a->n_models == 2)
                return samc_fail(err, SAMC_ERR_ARG, "--model given more than twice (one SAM 2 and one SAM 3 model)");
            a->model[a->n_models++] = v;
            break;
        case O_CONFIG:
            if (!a->n_models)
                return samc_fail(err, SAMC_ERR_ARG, "--config applies to the --model before it");
            a->config[a->n_models - 1] = v;
            break;
        case O_VOCAB: a->vocab = v; break;
        case O_HOST: c->host = v; break;
        case O_PORT: st = cli_parse_int("--port", v, 0, 65535, &c->port, err); break;
        case O_PORT_FILE: a->port_file = v; break;
        case O_IMPL: c->impl = v; break;
        case O_WORKERS: st = cli_parse_int("--workers", v, 1, 64, &c->workers, err); break;
        case O_THREADS: st = cli_parse_int("--threads", v, 1, SAMC_MAX_THREADS, &c->threads, err); break;
        case O_CACHE: st = parse_mb("--cache-mb", v, 16, 1 << 20, &c->cache_bytes, err); break;
        case O_UPLOAD: st = parse_mb("--max-upload-mb", v, 1, 1024, &c->max_image_bytes, err); break;
        case O_VIDEO_MB: st = parse_mb("--max-video-mb", v, 1, 16384, &c->max_video_bytes, err); break;
        case O_IMAGE_MP:
            st = cli_parse_int("--max-image-mp", v, 1, 268, &mp, err);
            c->max_image_pixels = (int64_t)mp * 1000 * 1000;
            break;
        case O_VIDEO_FRAMES: st = cli_parse_int("--max-video-frames", v, 1, 1000000, &c->max_video_frames, err); break;
        case O_VIDEOS: st = cli_parse_int("--max-videos", v, 1, 1024, &c->max_videos, err); break;
        case O_CONNECTIONS: st = cli_parse_int("--max-connections", v, 2, 10000, &c->max_connections, err); break;
        case O_QUEUE: st = cli_parse_int("--queue", v, 1, 100000, &c->queue_max, err); break;
        case O_TIMEOUT: st = cli_parse_int("--timeout", v, 1, 86400, &c->timeout_s, err); break;
        case O_VIDEO_TTL: st = cli_parse_int("--video-ttl", v, 1, 604800, &c->video_ttl_s, err); break;
        default: break;
        }
        if (st)
            return st;
    }
    if (cp.first_positional < argc)
        return samc_fail(err, SAMC_ERR_ARG, "unexpected argument '%s' (samc serve takes options only)",
                         argv[cp.first_positional]);
    return SAMC_OK;
}

/* Each --model, its family told by its keys; one of each family at most. */
static samc_status load_models(serve_args *a, serve_server *srv, samc_model *owned[2], samc_error *err)
{
    static char demo_model[4096], demo_config[4096], demo_image[4096];
    if (!a->n_models) { /* the bundled demo model, as `samc segment` without --model */
        cli_demo_paths(demo_model, demo_config, demo_image, sizeof demo_model);
        a->model[0] = demo_model, a->config[0] = demo_config, a->n_models = 1;
    }
    for (int i = 0; i < a->n_models; i++) {
        samc_model_params mp = samc_model_default_params();
        mp.config = a->config[i], mp.allow_nonfinite = a->allow_nonfinite, mp.vocab = a->vocab;
        samc_status st = samc_model_load(a->model[i], &mp, &owned[i], err);
        if (st)
            return st;
        const bool is3 = samc_model_family(owned[i]) == SAMC_FAMILY_SAM3;
        if (is3 ? srv->sam3 != NULL : srv->sam2 != NULL)
            return samc_fail(err, SAMC_ERR_ARG, "--model %s: a second %s model (one per family)", a->model[i],
                             samc_family_name(samc_model_family(owned[i])));
        if (is3)
            srv->sam3 = owned[i], srv->sam3_path = a->model[i];
        else
            srv->sam2 = owned[i], srv->sam2_path = a->model[i];
    }
    return SAMC_OK;
}

static void print_banner(const serve_server *srv, int port)
{
    const bool v6 = strchr(srv->cfg.host, ':') != NULL;
    fprintf(stderr, "samc serve: listening on http://%s%s%s:%d/", v6 ? "[" : "", srv->cfg.host, v6 ? "]" : "", port);
    if (srv->sam2)
        fprintf(stderr, "  SAM 2: %s (%s)", srv->sam2_path, samc_model_config_name(srv->sam2));
    if (srv->sam3)
        fprintf(stderr, "  SAM 3: %s", srv->sam3_path);
    fprintf(stderr, "\nsamc serve: %d worker(s) x %d thread(s), impl %s, cache %zu MiB; Ctrl-C stops\n",
            serve_pool_workers(srv->pool), serve_pool_threads(srv->pool),
            srv->cfg.impl ? srv->cfg.impl : samc_default_impl(), srv->cfg.cache_bytes >> 20);
    if (strcmp(srv->cfg.host, "127.0.0.1") && strcmp(srv->cfg.host, "::1") && strcmp(srv->cfg.host, "localhost"))
        fprintf(stderr, "samc serve: warning: listening beyond this machine (%s): anyone who can reach it can use "
                "the models; there is no authentication\n", srv->cfg.host);
}

static samc_status write_port(const char *path, int port, samc_error *err)
{
    char text[16];
    const int n = snprintf(text, sizeof text, "%d\n", port);
    return cli_write_file_atomic(path, text, (size_t)n, err);
}

/* Block the stop signals in every thread (the server's threads inherit
 * the mask) and wait for one here. */
static void wait_for_stop(const sigset_t *set)
{
    int sig = 0;
    sigwait(set, &sig);
    fprintf(stderr, "samc serve: %s: stopping\n", sig == SIGINT ? "interrupted" : "terminated");
}

int cmd_serve(int argc, char **argv)
{
    static serve_args a;
    samc_error err = {0};
    serve_server srv = {0};
    samc_model *owned[2] = {NULL, NULL};
    struct MHD_Daemon *d = NULL;
    cli_passive_wait_policy(argc, argv); /* idle workers must not spin; the same as samc bench */
    cli_keep_freed_memory();             /* each reply's mask buffers reuse memory, no page faults */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    samc_status st = parse_args(argc, argv, &a, &err);
    srv.cfg = a.cfg, srv.started = serve_now();
    if (!st)
        st = load_models(&a, &srv, owned, &err);
    if (!st)
        st = serve_pool_new(srv.sam2, srv.sam3, &srv.cfg, &srv.pool, &err);
    if (!st)
        st = serve_store_new(srv.cfg.cache_bytes, &srv.store, &err);
    if (!st)
        st = serve_videos_new(&srv.cfg, &srv.videos, &err);
    if (!st)
        st = serve_metrics_new(&srv.metrics, &err);
    int port = 0;
    if (!st)
        st = serve_http_start(&srv, &d, &port, &err);
    if (!st && a.port_file)
        st = write_port(a.port_file, port, &err);
    if (!st) {
        print_banner(&srv, port);
        wait_for_stop(&stop);
    }
    serve_http_stop(d); /* connections end first: nothing holds the workers' results afterwards */
    serve_pool_free(srv.pool);
    serve_videos_free(srv.videos);
    serve_store_free(srv.store);
    serve_metrics_free(srv.metrics);
    samc_model_free(owned[0]);
    samc_model_free(owned[1]);
    if (st) {
        fprintf(stderr, "samc serve: %s\n", err.msg);
        return cli_exit_code(st);
    }
    return CLI_EXIT_OK;
}
