/* SPDX-License-Identifier: Apache-2.0 */
/* chained_amg.c - the "amg" task (docs/parity_amg.md): the official
 * SAM2AutomaticMaskGenerator.generate run again by samc_amg_generate with the
 * dump's parameters, every recorded parity point compared on the way (the
 * image task's matching by module and call), then the records. */
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/amg/amg_box.h"
#include "core/amg/amg_generate.h"
#include "core/base/error.h"
#include "harness_internal.h"

static samc_status num_attr(samc_dump *d, const char *name, double *v, samc_error *err)
{
    bool none = false;
    samc_status st = samc_dump_attr_num(d, "/inputs", name, v, &none, err);
    if (!st && none)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: /inputs attribute %s is None", samc_dump_path(d), name);
    return st;
}

/* Explicit grids (points_per_side None): /inputs/point_grids/<i>, [N_i, 2]
 * float64, one per crop layer, read in double as the generator takes them. */
typedef struct dump_grids {
    samc_amg_grid g[16];
    double *xy[16];
    int n;
} dump_grids;

static void dump_grids_free(dump_grids *gs)
{
    for (int i = 0; i < gs->n; i++)
        free(gs->xy[i]);
    gs->n = 0;
}

static samc_status read_grids(samc_dump *d, dump_grids *gs, samc_error *err)
{
    char **names = NULL;
    int n = 0;
    samc_status st = samc_dump_list(d, "/inputs/point_grids", &names, &n, err);
    if (!st && (n < 1 || n > 16))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/point_grids holds %d grids (1 to 16 expected)",
                       samc_dump_path(d), n);
    samc_dump_free_names(names, n);
    for (int i = 0; !st && i < n; i++) {
        char path[64];
        int nd = 0;
        int64_t dims[4];
        snprintf(path, sizeof path, "/inputs/point_grids/%d", i);
        st = samc_dump_read_f64(d, path, &gs->xy[i], &nd, dims, 4, err);
        if (!st)
            gs->n = i + 1;
        if (!st && (nd != 2 || dims[1] != 2))
            st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s must be [N, 2]", samc_dump_path(d), path);
        if (!st)
            gs->g[i] = (samc_amg_grid){gs->xy[i], dims[0]};
    }
    return st;
}

/* The generator's constructor arguments from /inputs. */
static samc_status read_params(samc_dump *d, samc_amg_params *p, dump_grids *gs, samc_error *err)
{
    samc_amg_params_default(p);
    double v[16];
    static const char *const names[] = {"points_per_side", "points_per_batch", "pred_iou_thresh",
                                        "stability_score_thresh", "stability_score_offset", "mask_threshold",
                                        "box_nms_thresh", "crop_nms_thresh", "crop_overlap_ratio", "crop_n_layers",
                                        "crop_n_points_downscale_factor", "min_mask_region_area", "use_m2m",
                                        "multimask_output"};
    bool none = false;
    samc_status st = samc_dump_attr_num(d, "/inputs", names[0], &v[0], &none, err);
    if (!st && none) /* points_per_side None: the dump's explicit grids */
        st = read_grids(d, gs, err);
    for (int i = 1; !st && i < 14; i++)
        st = num_attr(d, names[i], &v[i], err);
    char *mode = NULL;
    if (!st)
        st = samc_dump_attr_str(d, "/inputs", "output_mode", &mode, err);
    if (!st)
        st = samc_amg_output_mode_parse(mode, &p->output_mode, err);
    free(mode);
    if (st)
        return st;
    p->points_per_side = none ? 0 : (int)v[0], p->points_per_batch = (int)v[1];
    if (none)
        p->point_grids = gs->g, p->n_point_grids = gs->n;
    p->pred_iou_thresh = v[2], p->stability_score_thresh = v[3], p->stability_score_offset = v[4];
    p->mask_threshold = v[5], p->box_nms_thresh = v[6], p->crop_nms_thresh = v[7];
    p->crop_overlap_ratio = v[8], p->crop_n_layers = (int)v[9], p->crop_n_points_downscale_factor = (int)v[10];
    p->min_mask_region_area = (int64_t)v[11], p->use_m2m = v[12] != 0, p->multimask_output = v[13] != 0;
    return SAMC_OK;
}

/* The trace: calls the dump recorded are compared as in the image task;
 * the others (@postprocess, which the dump leaves out, and the crops past
 * --trace-crops) are not rows. Every recorded call samc does not make stays
 * NOT-PRODUCED (finish_report). */
static void on_trace(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t)
{
    parity_run *r = user;
    if (samc__parity_find_record(r, module, samc__parity_peek_call(r, module)) >= 0)
        samc__parity_on_trace(user, module, sc, nslots, slots, t);
}

static samc_parity_row *final_row(parity_run *r, const char *slot, bool pass, const char *fmt, ...)
    SAMC_PRINTF(4, 5);
static samc_parity_row *final_row(parity_run *r, const char *slot, bool pass, const char *fmt, ...)
{
    samc_parity_row *row = samc__parity_add_row(r, INT_MAX, "/outputs", 0, slot);
    if (!row)
        return NULL;
    row->state = pass ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note, sizeof row->note, fmt, ap);
    va_end(ap);
    return row;
}

/* samc's candidates, as the generator reports them. */
typedef struct cand_list {
    samc_amg_candidate *c;
    int64_t n, cap;
    bool oom;
} cand_list;

static void on_candidate(void *user, const samc_amg_candidate *c)
{
    cand_list *l = user;
    if (l->n == l->cap) {
        const int64_t cap = l->cap ? 2 * l->cap : 256;
        void *n = realloc(l->c, (size_t)cap * sizeof *l->c);
        if (!n) {
            l->oom = true;
            return;
        }
        l->c = n, l->cap = cap;
    }
    l->c[l->n++] = *c;
}

/* max_abs / rel of two float vectors, positions where both are NaN (the
 * official 0/0 stability of an empty mask) agreeing. */
static samc_parity_row *vec_row(parity_run *r, const char *slot, const float *mine, const float *ref, int64_t n,
                                double tol)
{
    float *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    samc_parity_row *row = samc__parity_add_row(r, INT_MAX, "/outputs/candidates", 0, slot);
    if (!a || !b || !row) {
        free(a), free(b);
        r->st = SAMC_ERR_NOMEM;
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        const bool both = isnan(mine[i]) && isnan(ref[i]);
        a[i] = both ? 0.0f : mine[i], b[i] = both ? 0.0f : ref[i];
    }
    row->ndim = 1, row->shape[0] = n;
    samc_parity_metrics_ref(a, b, n, &row->max_abs, &row->ref_max, &row->nmse);
    row->judged = true; /* judge.c widens the scale of a small vector, as for traced slots */
    row->scale = row->ref_max > 1e-12 ? row->ref_max : 1e-12;
    row->rel = row->max_abs / row->scale;
    row->state = row->rel <= tol ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
    free(a), free(b);
    return row;
}

/* The official records (/outputs). */
typedef struct amg_ref {
    int64_t M;
    int32_t *counts, *offsets, *area, *logit_off;
    int64_t n_counts, n_off, n_area, n_logit_off;
    samc_tensor bbox, iou, point, stab, crop_box, logits;
} amg_ref;

static void ref_free(amg_ref *a)
{
    free(a->counts), free(a->offsets), free(a->area), free(a->logit_off);
    samc_tensor *t[] = {&a->bbox, &a->iou, &a->point, &a->stab, &a->crop_box, &a->logits};
    for (int i = 0; i < 6; i++)
        samc_tensor_release(t[i]);
}

static samc_status read_ref(samc_dump *d, amg_ref *a, samc_error *err)
{
    double m = 0;
    samc_status st = samc_dump_attr_num(d, "/outputs", "num_masks", &m, NULL, err);
    a->M = (int64_t)m;
    if (!st)
        st = samc_dump_read_i32(d, "/outputs/segmentation_counts", &a->counts, &a->n_counts, err);
    if (!st)
        st = samc_dump_read_i32(d, "/outputs/segmentation_offsets", &a->offsets, &a->n_off, err);
    if (!st)
        st = samc_dump_read_i32(d, "/outputs/area", &a->area, &a->n_area, err);
    if (!st)
        st = samc_dump_read_i32(d, "/outputs/mask_logits_offsets", &a->logit_off, &a->n_logit_off, err);
    static const char *const names[] = {"bbox", "predicted_iou", "point_coords", "stability_score", "crop_box",
                                        "mask_logits"};
    samc_tensor *t[] = {&a->bbox, &a->iou, &a->point, &a->stab, &a->crop_box, &a->logits};
    for (int i = 0; !st && i < 6; i++) {
        char path[64];
        snprintf(path, sizeof path, "/outputs/%s", names[i]);
        st = samc_dump_read(d, path, t[i], err);
    }
    if (!st && (a->n_off != a->M + 1 || a->n_area != a->M || a->n_logit_off != a->M + 1 || a->iou.shape[0] != a->M ||
                samc_numel(&a->bbox) != 4 * a->M || samc_numel(&a->crop_box) != 4 * a->M))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /outputs datasets disagree with num_masks %lld", samc_dump_path(d),
                       (long long)a->M);
    for (int64_t i = 0; !st && i < a->M; i++)
        if (a->offsets[i] < 0 || a->offsets[i] > a->offsets[i + 1] || a->offsets[i + 1] > a->n_counts ||
            a->logit_off[i] < 0 || a->logit_off[i] > a->logit_off[i + 1] || a->logit_off[i + 1] > samc_numel(&a->logits))
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: record %lld has bad offsets", samc_dump_path(d), (long long)i);
    return st;
}

/* Pixel statistics of the masks over all records. */
typedef struct mask_stats {
    int64_t differ, excused, outside;  /* differing pixels; within tolerance; no logit to excuse them */
    double worst_excused;              /* largest |logit - threshold| among the excused */
    int64_t exact_records, bad_area_bbox; /* records without differing pixels; of those, area/bbox differing */
} mask_stats;

/* Record m: samc's mask against the official counts; a differing pixel is
 * excused when the official logit there (its crop's frame) is within
 * tol * max|logit| of float32(mask_threshold). */
static samc_status compare_mask(const amg_ref *a, int64_t m, const samc_amg_record *rec, int H, int W, float thr,
                                double tol, uint8_t *mine, uint8_t *ref, mask_stats *s, samc_error *err)
{
    int64_t cnt[1] = {0};
    samc_amg_rle r = {.h = H, .w = W, .n = a->offsets[m + 1] - a->offsets[m]};
    if (!(r.counts = malloc((size_t)(r.n ? r.n : 1) * sizeof *r.counts)))
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < r.n; i++)
        r.counts[i] = a->counts[a->offsets[m] + i];
    samc_status st = samc_amg_rle_to_mask(&r, ref, err);
    free(r.counts);
    if (!st)
        st = samc_amg_rle_to_mask(&rec->rle, mine, err);
    if (st)
        return samc_fail(err, st, "record %lld", (long long)m);
    const float *cb = a->crop_box.data + 4 * m, *lg = a->logits.data + a->logit_off[m];
    const int x0 = (int)cb[0], y0 = (int)cb[1], cw = (int)cb[2], ch = (int)cb[3];
    const int64_t nl = a->logit_off[m + 1] - a->logit_off[m];
    double scale = 0;
    for (int64_t i = 0; i < nl; i++)
        scale = fabs(lg[i]) > scale ? fabs(lg[i]) : scale;
    for (int64_t i = 0; i < (int64_t)H * W; i++) {
        if (mine[i] == ref[i])
            continue;
        cnt[0]++;
        const int y = (int)(i / W) - y0, x = (int)(i % W) - x0;
        if (y < 0 || x < 0 || y >= ch || x >= cw || (int64_t)y * cw + x >= nl) {
            s->outside++;
            continue;
        }
        const double dist = fabs((double)lg[(int64_t)y * cw + x] - thr);
        if (dist <= tol * (scale > 1 ? scale : 1)) {
            s->excused++;
            s->worst_excused = dist > s->worst_excused ? dist : s->worst_excused;
        }
    }
    s->differ += cnt[0];
    if (cnt[0] == 0) {
        float xywh[4];
        samc_amg_box_xywh(rec->box, xywh);
        s->exact_records++;
        bool same = samc_amg_rle_area(&rec->rle) == a->area[m];
        for (int k = 0; k < 4; k++)
            same = same && xywh[k] == a->bbox.data[4 * m + k];
        s->bad_area_bbox += !same;
    }
    return SAMC_OK;
}

/* A per-record float field of samc against the dump's: a rel row under the
 * implementation's tolerance, or exact. */
static samc_status compare_field(parity_run *r, const char *slot, const samc_amg_output *o, int k, int width,
                                 bool exact, samc_error *err)
{
    samc_tensor t = {0};
    const int64_t shape[2] = {o->n, width};
    samc_status st = samc_tensor_alloc(&t, width > 1 ? 2 : 1, shape, err);
    for (int64_t i = 0; !st && i < o->n; i++) {
        const samc_amg_record *rec = &o->records[i];
        float v[4];
        switch (k) {
        case 0: v[0] = rec->predicted_iou; break;
        case 1: v[0] = rec->stability_score; break;
        case 2: v[0] = rec->point[0], v[1] = rec->point[1]; break;
        default: {
            const int64_t cb[4] = {rec->crop.x0, rec->crop.y0, rec->crop.x1, rec->crop.y1};
            samc_amg_box_xywh(cb, v);
        }
        }
        memcpy(t.data + i * width, v, (size_t)width * sizeof(float));
    }
    char path[64];
    snprintf(path, sizeof path, "/outputs/%s", slot);
    const int n0 = r->rep->n_rows;
    if (!st)
        samc__parity_compare(r, INT_MAX, "/outputs", 0, slot, &t, path);
    if (!st && exact && r->rep->n_rows > n0 && r->rep->rows[n0].judged) {
        samc_parity_row *row = &r->rep->rows[n0];
        row->exact = true; /* judged by max_abs == 0, whatever the scale */
        row->state = row->max_abs == 0 ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
        if (row->max_abs != 0)
            snprintf(row->note, sizeof row->note, "must be exact (integer and float32 arithmetic only)");
    }
    samc_tensor_release(&t);
    return st;
}

/* /outputs/candidates against samc's: same candidates in the same order,
 * scores within tolerance, the same filter decisions (a differing one whose
 * official value is within tolerance of its threshold is a FLIP) and boxes. */
typedef struct ref_cands {
    int32_t *crop, *batch, *keep_iou, *keep_stab, *near, *box;
    samc_tensor point, iou, stab;
} ref_cands;

static void ref_cands_free(ref_cands *c)
{
    free(c->crop), free(c->batch), free(c->keep_iou), free(c->keep_stab), free(c->near), free(c->box);
    samc_tensor_release(&c->point), samc_tensor_release(&c->iou), samc_tensor_release(&c->stab);
}

static samc_status read_cands(samc_dump *d, ref_cands *c, int64_t *n, samc_error *err)
{
    static const char *const ints[] = {"crop_index", "batch_index", "keep_iou", "keep_stability", "near_crop_edge", "box"};
    int32_t **dst[] = {&c->crop, &c->batch, &c->keep_iou, &c->keep_stab, &c->near, &c->box};
    samc_status st = SAMC_OK;
    int64_t len[6] = {0};
    char path[96];
    for (int i = 0; !st && i < 6; i++) {
        snprintf(path, sizeof path, "/outputs/candidates/%s", ints[i]);
        st = samc_dump_read_i32(d, path, dst[i], &len[i], err);
    }
    static const char *const fl[] = {"point_coords", "predicted_iou", "stability_score"};
    samc_tensor *t[] = {&c->point, &c->iou, &c->stab};
    for (int i = 0; !st && i < 3; i++) {
        snprintf(path, sizeof path, "/outputs/candidates/%s", fl[i]);
        st = samc_dump_read(d, path, t[i], err);
    }
    *n = len[0];
    if (!st && (len[1] != *n || len[2] != *n || len[3] != *n || len[4] != *n || len[5] != 4 * *n ||
                samc_numel(&c->point) != 2 * *n || samc_numel(&c->iou) != *n || samc_numel(&c->stab) != *n))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /outputs/candidates datasets differ in length", samc_dump_path(d));
    return st;
}

static void compare_decisions(parity_run *r, const cand_list *l, const ref_cands *c, const samc_amg_params *p)
{
    const double tol = r->rep->tol, ti = (float)p->pred_iou_thresh, ts = (float)p->stability_score_thresh;
    int64_t flips = 0, fails = 0, boxes = 0, where = 0;
    double closest = INFINITY;
    for (int64_t i = 0; i < l->n; i++) {
        const samc_amg_candidate *m = &l->c[i];
        bool box_same = true;
        for (int k = 0; k < 4; k++)
            box_same = box_same && m->box[k] == c->box[4 * i + k];
        boxes += !box_same;
        where += m->crop != c->crop[i] || m->batch != c->batch[i] || m->point[0] != c->point.data[2 * i] ||
                 m->point[1] != c->point.data[2 * i + 1];
        double margin = INFINITY;
        if (m->keep_iou != (c->keep_iou[i] != 0))
            margin = fabs((double)c->iou.data[i] - ti);
        else if (m->keep_stability != (c->keep_stab[i] != 0))
            margin = fabs((double)c->stab.data[i] - ts);
        else if (m->near_edge != (c->near[i] != 0))
            margin = box_same ? 0 : INFINITY; /* a box moved by near-threshold pixels */
        else
            continue;
        if (margin <= tol)
            flips++, closest = margin < closest ? margin : closest;
        else
            fails++;
    }
    final_row(r, "candidates/where", where == 0, "%lld of %lld candidates differ in crop, batch or point",
              (long long)where, (long long)l->n);
    final_row(r, "candidates/box", boxes == 0, "%lld of %lld candidate boxes differ", (long long)boxes,
              (long long)l->n);
    samc_parity_row *row = final_row(r, "candidates/decisions", fails == 0,
                                     "%lld differing IoU / stability / crop-edge decisions (%lld within tol of the "
                                     "threshold)", (long long)(fails + flips), (long long)flips);
    if (row && fails == 0 && flips > 0)
        row->state = SAMC_PARITY_FLIP, row->rel = closest;
}

static samc_status compare_candidates(parity_run *r, const cand_list *l, const samc_amg_counts *counts,
                                      const samc_amg_params *p, samc_error *err)
{
    ref_cands c = {0};
    int64_t n = 0;
    samc_status st = read_cands(r->dump, &c, &n, err);
    if (!st && l->oom)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory (candidates)");
    if (!st)
        final_row(r, "candidates/count", l->n == n, "samc %lld candidates, official %lld", (long long)l->n,
                  (long long)n);
    if (!st && l->n == n) {
        float *iou = malloc((size_t)(n ? n : 1) * sizeof *iou), *stab = malloc((size_t)(n ? n : 1) * sizeof *stab);
        if (!iou || !stab)
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; !st && i < n; i++)
            iou[i] = l->c[i].iou, stab[i] = l->c[i].stability;
        if (!st) {
            vec_row(r, "predicted_iou", iou, c.iou.data, n, r->rep->tol);
            vec_row(r, "stability_score", stab, c.stab.data, n, r->rep->tol);
            compare_decisions(r, l, &c, p);
        }
        int64_t chain[3] = {0};
        for (int64_t i = 0; i < n; i++)
            chain[0] += c.keep_iou[i] != 0, chain[1] += c.keep_stab[i] != 0, chain[2] += c.keep_stab[i] && !c.near[i];
        const samc_amg_counts *k = counts;
        final_row(r, "candidates/filters", k->iou == chain[0] && k->stability == chain[1] && k->edge == chain[2],
                  "candidates -> IoU -> stability -> off crop edges: samc %lld %lld %lld %lld, official %lld %lld "
                  "%lld %lld",
                  (long long)k->candidates, (long long)k->iou, (long long)k->stability, (long long)k->edge,
                  (long long)n, (long long)chain[0], (long long)chain[1], (long long)chain[2]);
        free(iou), free(stab);
    }
    ref_cands_free(&c);
    return st;
}

static samc_status compare_outputs(parity_run *r, const samc_amg_output *o, int H, int W, float thr,
                                   samc_error *err)
{
    amg_ref a = {0};
    samc_status st = read_ref(r->dump, &a, err);
    if (st) {
        ref_free(&a);
        return st;
    }
    final_row(r, "num_masks", o->n == a.M, "samc %lld records, official %lld", (long long)o->n, (long long)a.M);
    if (o->n != a.M) {
        ref_free(&a);
        return SAMC_OK; /* records cannot be paired */
    }
    uint8_t *mine = malloc((size_t)H * W), *ref = malloc((size_t)H * W);
    mask_stats s = {0};
    if (!mine || !ref)
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    for (int64_t m = 0; !st && m < a.M; m++)
        st = compare_mask(&a, m, &o->records[m], H, W, thr, r->rep->tol, mine, ref, &s, err);
    free(mine), free(ref);
    if (!st) {
        final_row(r, "segmentation", s.excused == s.differ,
                  "%lld differing pixels, %lld excused (official logit within tol of the threshold, largest "
                  "|logit - t| %.3g), %lld outside any crop",
                  (long long)s.differ, (long long)s.excused, s.worst_excused, (long long)s.outside);
        final_row(r, "area_bbox", s.bad_area_bbox == 0, "%lld of %lld records without differing pixels have the official area and bbox",
                  (long long)(s.exact_records - s.bad_area_bbox), (long long)s.exact_records);
    }
    static const char *const slots[] = {"predicted_iou", "stability_score", "point_coords", "crop_box"};
    for (int k = 0; !st && k < 4; k++)
        st = compare_field(r, slots[k], o, k, k < 2 ? 1 : k == 2 ? 2 : 4, k >= 2, err);
    ref_free(&a);
    return st;
}

samc_status samc__parity_run_amg(parity_run *r, samc_error *err)
{
    samc_dump *d = r->dump;
    uint8_t *img = NULL;
    int nd = 0;
    int64_t dims[4];
    samc_amg_params p;
    samc_amg_output o = {0};
    cand_list cands = {0};
    dump_grids grids = {0};
    /* the fill the official run applied (load_model read the dump's attributes) */
    const samc_amg_hooks hooks = {.candidate = on_candidate, .user = &cands, .fill = &r->image_opts};
    samc_status st = read_params(d, &p, &grids, err);
    if (!st)
        st = samc_dump_read_u8(d, "/inputs/image_u8", &img, &nd, dims, err);
    if (!st && (nd != 3 || dims[2] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/image_u8 must be [H,W,3]", samc_dump_path(d));
    samc_exec_set_trace(&r->x, on_trace, r);
    if (!r->strict || r->plant_bf16_flip > 0)
        r->x.decide = samc__parity_resync, r->x.decide_user = r;
    if (!st)
        st = samc_amg_generate(&r->x, r->model, img, (int)dims[0], (int)dims[1], &p, &hooks, &o, err);
    samc_exec_set_trace(&r->x, NULL, NULL);
    if (!st)
        st = compare_candidates(r, &cands, &o.counts, &p, err);
    if (!st)
        st = compare_outputs(r, &o, (int)dims[0], (int)dims[1], (float)p.mask_threshold, err);
    samc_amg_output_free(&o);
    free(cands.c);
    free(img);
    dump_grids_free(&grids);
    return st;
}
