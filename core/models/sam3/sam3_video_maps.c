/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_maps.c - the loop's metadata as the official dicts keep it:
 * small insertion-ordered maps (linear search: a video has few objects),
 * per-frame maps, and the tracker metadata's object list. */
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/sam3/sam3_video_internal.h"

bool samc__s3m_get(const s3_map *m, int key, double *v)
{
    for (int i = 0; i < m->n; i++)
        if (m->e[i].key == key) {
            if (v)
                *v = m->e[i].v;
            return true;
        }
    return false;
}

samc_status samc__s3m_set(s3_map *m, int key, double v)
{
    for (int i = 0; i < m->n; i++)
        if (m->e[i].key == key) {
            m->e[i].v = v;
            return SAMC_OK;
        }
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        s3_kv *n = realloc(m->e, (size_t)cap * sizeof *n);
        if (!n)
            return SAMC_ERR_NOMEM;
        m->e = n, m->cap = cap;
    }
    m->e[m->n++] = (s3_kv){key, v};
    return SAMC_OK;
}

bool samc__s3m_del(s3_map *m, int key)
{
    for (int i = 0; i < m->n; i++)
        if (m->e[i].key == key) {
            memmove(m->e + i, m->e + i + 1, (size_t)(m->n - i - 1) * sizeof *m->e);
            m->n--;
            return true;
        }
    return false;
}

samc_status samc__s3m_copy(s3_map *dst, const s3_map *src)
{
    dst->n = 0;
    for (int i = 0; i < src->n; i++)
        if (samc__s3m_set(dst, src->e[i].key, src->e[i].v))
            return SAMC_ERR_NOMEM;
    return SAMC_OK;
}

void samc__s3m_free(s3_map *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

s3_map *samc__s3fm_get(s3_frame_maps *f, int frame, bool create)
{
    for (int i = 0; i < f->n; i++)
        if (f->e[i].frame == frame)
            return &f->e[i].m;
    if (!create)
        return NULL;
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        s3_frame_map *n = realloc(f->e, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        f->e = n, f->cap = cap;
    }
    f->e[f->n] = (s3_frame_map){.frame = frame};
    return &f->e[f->n++].m;
}

void samc__s3fm_keep(s3_frame_maps *f, int lo, int hi)
{
    int k = 0;
    for (int i = 0; i < f->n; i++) {
        if (f->e[i].frame < lo || f->e[i].frame > hi)
            samc__s3m_free(&f->e[i].m);
        else
            f->e[k++] = f->e[i];
    }
    f->n = k;
}

void samc__s3fm_free(s3_frame_maps *f)
{
    for (int i = 0; i < f->n; i++)
        samc__s3m_free(&f->e[i].m);
    free(f->e);
    memset(f, 0, sizeof *f);
}

samc_status samc__s3_pairs_add(s3_pairs *p, int a, int b)
{
    for (int i = 0; i < p->n; i++)
        if (p->e[i].a == a && p->e[i].b == b) {
            p->e[i].count++;
            return SAMC_OK;
        }
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        s3_pair *n = realloc(p->e, (size_t)cap * sizeof *n);
        if (!n)
            return SAMC_ERR_NOMEM;
        p->e = n, p->cap = cap;
    }
    p->e[p->n++] = (s3_pair){a, b, 1};
    return SAMC_OK;
}

/* ---- the tracker metadata ------------------------------------------------------------ */

int samc__s3_meta_find(const s3_meta *m, int id)
{
    for (int i = 0; i < m->n_obj; i++)
        if (m->obj_ids[i] == id)
            return i;
    return -1;
}

samc_status samc__s3_meta_add_obj(s3_meta *m, int id)
{
    if (m->n_obj == m->cap_obj) {
        int cap = m->cap_obj ? 2 * m->cap_obj : 16;
        int *n = realloc(m->obj_ids, (size_t)cap * sizeof *n);
        if (!n)
            return SAMC_ERR_NOMEM;
        m->obj_ids = n, m->cap_obj = cap;
    }
    m->obj_ids[m->n_obj++] = id;
    return SAMC_OK;
}

void samc__s3_meta_del_obj(s3_meta *m, int id)
{
    const int i = samc__s3_meta_find(m, id);
    if (i < 0)
        return;
    memmove(m->obj_ids + i, m->obj_ids + i + 1, (size_t)(m->n_obj - i - 1) * sizeof *m->obj_ids);
    m->n_obj--;
}

void samc__s3_meta_free(s3_meta *m)
{
    free(m->obj_ids);
    samc__s3m_free(&m->score), samc__s3fm_free(&m->trk_score), samc__s3m_free(&m->last_occluded);
    s3_rank0 *r = &m->r0;
    samc__s3m_free(&r->first_frame), samc__s3m_free(&r->unmatched), samc__s3m_free(&r->keep_alive);
    free(r->overlaps.e);
    samc__s3m_free(&r->removed), samc__s3fm_free(&r->suppressed);
    memset(m, 0, sizeof *m);
}
