/* SPDX-License-Identifier: Apache-2.0 */
/* serve_pool.c - the compute workers (serve.h). Model work runs on a few
 * long-lived threads, each with its own predictor and SAM 3 processor (one
 * thread at a time each, as the API requires) and so its own OpenMP team:
 * running the model on the connection threads would start a team for every
 * new connection. Requests wait in a bounded queue; a full queue or a wait
 * past the timeout is answered "busy" (503) instead of piling up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/error.h"
#include "serve.h"

typedef struct job {
    serve_job_fn fn;
    serve_done_fn done;        /* asynchronous: called when finished, then the job is freed */
    void *arg;
    samc_status st;
    samc_error err;
    bool started, finished;
    pthread_cond_t cond;       /* synchronous: signalled when finished */
    double t_queued, t_started;
    struct job *next;
} job;

typedef struct worker_slot {
    serve_pool *pool;
    serve_worker w;
    pthread_t tid;
    bool running;
} worker_slot;

struct serve_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;
    job *head, *tail;
    int queued, busy, max_queue, timeout_s;
    bool stop;
    int n, threads;
    worker_slot *slots;
};

static const char BUSY[] = "the server is busy";

bool serve_is_busy(const samc_error *err) { return err && !strncmp(err->msg, BUSY, sizeof BUSY - 1); }

int serve_pool_queued(serve_pool *p)
{
    pthread_mutex_lock(&p->mu);
    const int n = p->queued;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int serve_pool_busy(serve_pool *p)
{
    pthread_mutex_lock(&p->mu);
    const int n = p->busy;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int serve_pool_workers(const serve_pool *p) { return p->n; }
int serve_pool_threads(const serve_pool *p) { return p->threads; }

static job *pop(serve_pool *p)
{
    job *j = p->head;
    p->head = j->next;
    if (!p->head)
        p->tail = NULL;
    p->queued--;
    return j;
}

static void *worker_main(void *arg)
{
    worker_slot *s = arg;
    serve_pool *p = s->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && !p->head)
            pthread_cond_wait(&p->work, &p->mu);
        if (!p->head) /* stopping, nothing left */
            break;
        job *j = pop(p);
        p->busy++;
        j->started = true, j->t_started = serve_now();
        const bool async = j->done != NULL;
        pthread_mutex_unlock(&p->mu);
        samc_error_clear(&j->err);
        j->st = j->fn(&s->w, j->arg, &j->err);
        if (async) { /* nobody waits on it */
            j->done(j->arg, j->st, &j->err);
            free(j);
        }
        pthread_mutex_lock(&p->mu);
        p->busy--;
        if (!async) {
            j->finished = true;
            pthread_cond_signal(&j->cond);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static bool push(serve_pool *p, job *j)
{
    if (p->stop || p->queued >= p->max_queue)
        return false;
    j->t_queued = serve_now();
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    p->queued++;
    pthread_cond_signal(&p->work);
    return true;
}

/* Take a job that no worker has started out of the queue. */
static void unqueue(serve_pool *p, job *j)
{
    job **at = &p->head, *prev = NULL;
    while (*at && *at != j)
        prev = *at, at = &(*at)->next;
    if (!*at)
        return;
    *at = j->next;
    if (p->tail == j)
        p->tail = prev;
    p->queued--;
}

samc_status serve_pool_run(serve_pool *p, serve_job_fn fn, void *arg, double *queue_ms, samc_error *err)
{
    job j = {.fn = fn, .arg = arg};
    pthread_cond_init(&j.cond, NULL);
    pthread_mutex_lock(&p->mu);
    if (!push(p, &j)) {
        pthread_mutex_unlock(&p->mu);
        pthread_cond_destroy(&j.cond);
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: %d requests are waiting for a worker; retry later", BUSY,
                         p->max_queue);
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += p->timeout_s;
    while (!j.started)
        if (pthread_cond_timedwait(&j.cond, &p->mu, &deadline) == ETIMEDOUT && !j.started) {
            unqueue(p, &j);
            pthread_mutex_unlock(&p->mu);
            pthread_cond_destroy(&j.cond);
            return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: no worker was free within %d s; retry later", BUSY,
                             p->timeout_s);
        }
    while (!j.finished) /* started: it runs to its end */
        pthread_cond_wait(&j.cond, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_cond_destroy(&j.cond);
    if (queue_ms)
        *queue_ms = 1e3 * (j.t_started - j.t_queued);
    if (j.st && err)
        *err = j.err;
    return j.st;
}

samc_status serve_pool_start(serve_pool *p, serve_job_fn fn, serve_done_fn done, void *arg, samc_error *err)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    *j = (job){.fn = fn, .done = done, .arg = arg};
    pthread_mutex_lock(&p->mu);
    const bool ok = push(p, j);
    pthread_mutex_unlock(&p->mu);
    if (!ok) {
        free(j);
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: %d requests are waiting for a worker; retry later", BUSY,
                         p->max_queue);
    }
    return SAMC_OK;
}

static samc_status worker_init(worker_slot *s, const samc_model *sam2, const samc_model *sam3, const serve_config *cfg,
                               int threads, samc_error *err)
{
    samc_status st = SAMC_OK;
    s->w.threads = threads;
    if (sam2) {
        samc_predictor_params pp = samc_predictor_default_params();
        pp.impl = cfg->impl, pp.n_threads = threads;
        st = samc_predictor_new(sam2, &pp, &s->w.pred, err);
    }
    if (!st && sam3) {
        samc_sam3_processor_params sp = samc_sam3_processor_default_params();
        sp.impl = cfg->impl, sp.n_threads = threads;
        st = samc_sam3_processor_new(sam3, &sp, &s->w.sam3, err);
    }
    return st;
}

samc_status serve_pool_new(const samc_model *sam2, const samc_model *sam3, const serve_config *cfg, serve_pool **out,
                           samc_error *err)
{
    *out = NULL;
    serve_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->slots = calloc((size_t)cfg->workers, sizeof *p->slots))) {
        free(p);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    p->n = cfg->workers, p->max_queue = cfg->queue_max, p->timeout_s = cfg->timeout_s;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p->threads = cfg->threads > 0 ? cfg->threads : (int)(cores / p->n > 0 ? cores / p->n : 1);
    samc_status st = SAMC_OK;
    for (int i = 0; !st && i < p->n; i++) {
        worker_slot *s = &p->slots[i];
        s->pool = p, s->w.index = i;
        st = worker_init(s, sam2, sam3, cfg, p->threads, err);
        if (!st && pthread_create(&s->tid, NULL, worker_main, s))
            st = samc_fail(err, SAMC_ERR_NOMEM, "cannot start worker thread %d", i);
        s->running = st == SAMC_OK;
    }
    if (st) {
        serve_pool_free(p);
        return st;
    }
    *out = p;
    return SAMC_OK;
}

void serve_pool_free(serve_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        if (p->slots[i].running)
            pthread_join(p->slots[i].tid, NULL);
        samc_predictor_free(p->slots[i].w.pred);
        samc_sam3_processor_free(p->slots[i].w.sam3);
    }
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->slots);
    free(p);
}
