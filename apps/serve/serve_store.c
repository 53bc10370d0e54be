/* SPDX-License-Identifier: Apache-2.0 */
/* serve_store.c - uploaded images and the LRU cache of their embeddings
 * (serve.h). One memory budget covers the decoded images, their
 * embeddings and the kept low-res masks; past it, the least recently used
 * embedding of an image no request holds is dropped (it is recomputed when
 * asked for again: a cache miss), and when no embedding is left to drop,
 * the least recently used image itself (its id then answers 404). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/base/error.h"
#include "serve.h"

enum { MAX_IMAGES = 100000 };

typedef struct kept_lowres {
    int pred;                  /* -1: empty */
    int n, side;
    float *low;
} kept_lowres;

struct serve_image {
    char id[SERVE_ID_LEN + 1];
    uint8_t *rgb;
    int h, w;
    samc_embedding *emb[2];    /* [0] SAM 2, [1] SAM 3 */
    bool computing[2];
    kept_lowres kept[SERVE_KEEP_LOWRES];
    int next_pred;
    uint64_t used;             /* LRU clock */
    int refs;                  /* requests holding it */
    bool removed;              /* out of the table: freed by the last put */
};

struct serve_store {
    pthread_mutex_t mu;
    pthread_cond_t changed;    /* an embedding finished (or failed) */
    serve_image **v;
    int n, cap;
    size_t bytes, budget;
    uint64_t clock;
    int64_t hits, misses, evictions;
};

static int fam_slot(samc_family f) { return f == SAMC_FAMILY_SAM3; }

static size_t image_bytes(const serve_image *img)
{
    size_t b = (size_t)img->h * img->w * 3 + samc_embedding_bytes(img->emb[0]) + samc_embedding_bytes(img->emb[1]);
    for (int i = 0; i < SERVE_KEEP_LOWRES; i++)
        b += img->kept[i].low ? (size_t)img->kept[i].n * img->kept[i].side * img->kept[i].side * sizeof(float) : 0;
    return b;
}

static void image_free(serve_image *img)
{
    free(img->rgb);
    samc_embedding_free(img->emb[0]);
    samc_embedding_free(img->emb[1]);
    for (int i = 0; i < SERVE_KEEP_LOWRES; i++)
        free(img->kept[i].low);
    free(img);
}

samc_status serve_store_new(size_t budget, serve_store **out, samc_error *err)
{
    serve_store *s = calloc(1, sizeof *s);
    if (!s)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->changed, NULL);
    s->budget = budget;
    *out = s;
    return SAMC_OK;
}

void serve_store_free(serve_store *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        image_free(s->v[i]);
    free(s->v);
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Out of the table (under the lock): freed now, or by its last holder. */
static void drop_at(serve_store *s, int i)
{
    serve_image *img = s->v[i];
    s->v[i] = s->v[--s->n];
    s->bytes -= image_bytes(img);
    if (img->refs)
        img->removed = true;
    else
        image_free(img);
}

/* Bring the store under its budget (under the lock). */
static void evict(serve_store *s)
{
    while (s->bytes > s->budget) {
        int best = -1, slot = 0;
        for (int i = 0; i < s->n; i++) /* the least recently used embedding nobody holds */
            for (int f = 0; f < 2; f++)
                if (!s->v[i]->refs && s->v[i]->emb[f] && (best < 0 || s->v[i]->used < s->v[best]->used))
                    best = i, slot = f;
        if (best >= 0) {
            serve_image *img = s->v[best];
            s->bytes -= samc_embedding_bytes(img->emb[slot]);
            samc_embedding_free(img->emb[slot]);
            img->emb[slot] = NULL;
            s->evictions++;
            continue;
        }
        for (int i = 0; i < s->n; i++) /* else the least recently used image nobody holds */
            if (!s->v[i]->refs && (best < 0 || s->v[i]->used < s->v[best]->used))
                best = i;
        if (best < 0)
            return; /* all held: over budget until they are put back */
        drop_at(s, best);
        s->evictions++;
    }
}

void serve_new_id(char id[SERVE_ID_LEN + 1])
{
    uint8_t r[SERVE_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof r) { /* the kernel's generator: ids are not guessable */
        const ssize_t k = getrandom(r + got, sizeof r - got, 0);
        if (k > 0)
            got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(id + 2 * i, 3, "%02x", r[i]);
}

samc_status serve_store_add(serve_store *s, uint8_t *rgb, int h, int w, char id[SERVE_ID_LEN + 1], samc_error *err)
{
    serve_image *img = calloc(1, sizeof *img);
    if (!img) {
        free(rgb);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    img->rgb = rgb, img->h = h, img->w = w;
    for (int i = 0; i < SERVE_KEEP_LOWRES; i++)
        img->kept[i].pred = -1;
    serve_new_id(img->id);
    pthread_mutex_lock(&s->mu);
    if (s->n == s->cap) {
        const int cap = s->cap ? 2 * s->cap : 64;
        serve_image **v = cap <= MAX_IMAGES ? realloc(s->v, (size_t)cap * sizeof *v) : NULL;
        if (!v) {
            pthread_mutex_unlock(&s->mu);
            image_free(img);
            return samc_fail(err, SAMC_ERR_NOMEM, "too many images are stored (%d)", s->n);
        }
        s->v = v, s->cap = cap;
    }
    img->used = ++s->clock;
    s->v[s->n++] = img;
    s->bytes += image_bytes(img);
    evict(s);
    pthread_mutex_unlock(&s->mu);
    memcpy(id, img->id, SERVE_ID_LEN + 1);
    return SAMC_OK;
}

serve_image *serve_store_get(serve_store *s, const char *id)
{
    serve_image *found = NULL;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n && !found; i++)
        if (!strcmp(s->v[i]->id, id))
            found = s->v[i];
    if (found)
        found->refs++, found->used = ++s->clock;
    pthread_mutex_unlock(&s->mu);
    return found;
}

void serve_store_put(serve_store *s, serve_image *img)
{
    if (!img)
        return;
    pthread_mutex_lock(&s->mu);
    const bool gone = --img->refs == 0 && img->removed;
    if (!gone)
        evict(s); /* what a request held may be over the budget */
    pthread_mutex_unlock(&s->mu);
    if (gone)
        image_free(img);
}

bool serve_store_remove(serve_store *s, const char *id)
{
    pthread_mutex_lock(&s->mu);
    int at = -1;
    for (int i = 0; i < s->n && at < 0; i++)
        if (!strcmp(s->v[i]->id, id))
            at = i;
    if (at >= 0)
        drop_at(s, at);
    pthread_mutex_unlock(&s->mu);
    return at >= 0;
}

void serve_store_stats_get(serve_store *s, serve_store_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = (serve_store_stats){.hits = s->hits, .misses = s->misses, .evictions = s->evictions, .images = s->n,
                               .bytes = (int64_t)s->bytes, .budget = (int64_t)s->budget};
    pthread_mutex_unlock(&s->mu);
}

const uint8_t *serve_image_rgb(const serve_image *img) { return img->rgb; }
int serve_image_height(const serve_image *img) { return img->h; }
int serve_image_width(const serve_image *img) { return img->w; }
const char *serve_image_id(const serve_image *img) { return img->id; }

bool serve_image_has_embedding(serve_store *s, serve_image *img, samc_family fam)
{
    pthread_mutex_lock(&s->mu);
    const bool has = img->emb[fam_slot(fam)] != NULL;
    pthread_mutex_unlock(&s->mu);
    return has;
}

typedef struct embed_job {
    const serve_image *img;
    samc_family fam;
    samc_embedding *out;
} embed_job;

static samc_status run_embed(serve_worker *w, void *arg, samc_error *err)
{
    embed_job *j = arg;
    if (j->fam == SAMC_FAMILY_SAM3)
        return samc_sam3_processor_embed(w->sam3, j->img->rgb, j->img->h, j->img->w, &j->out, err);
    return samc_predictor_embed(w->pred, j->img->rgb, j->img->h, j->img->w, &j->out, err);
}

samc_status serve_image_embedding(serve_store *s, serve_pool *pool, serve_image *img, samc_family fam,
                                  const samc_embedding **out, double *encode_ms, samc_error *err)
{
    const int f = fam_slot(fam);
    *out = NULL, *encode_ms = 0;
    pthread_mutex_lock(&s->mu);
    while (!img->emb[f] && img->computing[f]) /* another request is making it */
        pthread_cond_wait(&s->changed, &s->mu);
    if (img->emb[f]) {
        s->hits++;
        img->used = ++s->clock;
        *out = img->emb[f];
        pthread_mutex_unlock(&s->mu);
        return SAMC_OK;
    }
    img->computing[f] = true;
    s->misses++;
    pthread_mutex_unlock(&s->mu);
    embed_job j = {.img = img, .fam = fam};
    const double t0 = serve_now();
    double queued = 0;
    samc_status st = serve_pool_run(pool, run_embed, &j, &queued, err);
    *encode_ms = 1e3 * (serve_now() - t0) - queued;
    pthread_mutex_lock(&s->mu);
    img->computing[f] = false;
    if (!st) {
        img->emb[f] = j.out;
        if (!img->removed)
            s->bytes += samc_embedding_bytes(j.out);
        *out = j.out;
        evict(s); /* img is held: its new embedding stays */
    }
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->mu);
    return st;
}

samc_status serve_image_keep_lowres(serve_store *s, serve_image *img, const float *low, int n, int side, int *pred,
                                    samc_error *err)
{
    float *copy = malloc((size_t)n * side * side * sizeof *copy);
    if (!copy)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    memcpy(copy, low, (size_t)n * side * side * sizeof *copy);
    pthread_mutex_lock(&s->mu);
    kept_lowres *k = &img->kept[img->next_pred % SERVE_KEEP_LOWRES];
    const size_t old = k->low ? (size_t)k->n * k->side * k->side * sizeof(float) : 0;
    free(k->low);
    *k = (kept_lowres){.pred = img->next_pred, .n = n, .side = side, .low = copy};
    *pred = img->next_pred++;
    if (!img->removed)
        s->bytes += (size_t)n * side * side * sizeof(float) - old;
    pthread_mutex_unlock(&s->mu);
    return SAMC_OK;
}

bool serve_image_lowres(serve_store *s, serve_image *img, int pred, int k, float *out, int side)
{
    bool found = false;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < SERVE_KEEP_LOWRES && !found; i++) {
        const kept_lowres *kl = &img->kept[i];
        if (kl->pred == pred && kl->low && k < kl->n && kl->side == side) {
            memcpy(out, kl->low + (size_t)k * side * side, (size_t)side * side * sizeof *out);
            found = true;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return found;
}
