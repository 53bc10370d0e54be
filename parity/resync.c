/* SPDX-License-Identifier: Apache-2.0 */
/* resync.c - re-synchronisation of a chained run at decision points
 * (PARITY_DUMP_FORMAT.md, "Comparison").
 *
 * The model reports each decision it takes by a threshold (core/runtime/
 * exec.h: bf16 rounding of stored memory, object presence, the best of the
 * multimask outputs, the stability choice, mask binarisation, the per-pixel
 * object of non-overlapping masks). Here the
 * recorded side of the same decision is read from the dump; where the two
 * fall on two sides of the threshold and the C value is within the
 * tolerance of it, the C value is moved to the recorded side (the run adopts
 * the official decision) and the point is reported as a FLIP with its
 * margin; a disagreement farther from the threshold is a FAIL. Margins are
 * relative to the scale of the recorded tensor (for a scalar logit: to
 * max(|recorded|, 1)), like the harness's rel. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/models/tracker/mask_select.h"
#include "core/nn/bf16.h"
#include "harness_internal.h"

/* The record a decision refers to: the next call of `module` at this scope
 * (offset 0, not yet matched) or the last one matched (offset -1). */
static int record_for(parity_run *r, const char *module, const samc_scope *sc, int offset)
{
    char key[160];
    snprintf(key, sizeof key, r->scoped ? "%s|%d|%d" : "%s", module, sc->frame_idx, sc->obj_id);
    const int call = samc__parity_peek_call(r, key) + offset;
    if (call < 0)
        return -1;
    return r->scoped ? samc__parity_find_record_video(r, module, sc->frame_idx, sc->obj_id, call)
                    : samc__parity_find_record(r, module, call);
}

/* A slot of record `rec` as the object of scope `sc` sees it: its item of
 * a batched record (the batch on axis 0: batch.c). */
static bool read_slot_of(parity_run *r, int rec, const char *slot, const samc_scope *sc, samc_tensor *t)
{
    char path[320];
    snprintf(path, sizeof path, "/trace/%06d/%s", r->recs[rec].index, slot);
    if (!samc_dump_exists(r->dump, path) || samc_dump_read(r->dump, path, t, NULL) != SAMC_OK)
        return false;
    const int b = sc ? samc__parity_batch_index(&r->recs[rec], sc->obj_id) : -1;
    return samc__parity_slice_input(t, "", b, r->recs[rec].n_objs, NULL) == SAMC_OK;
}

static bool read_slot(parity_run *r, int rec, const char *slot, samc_tensor *t)
{
    return read_slot_of(r, rec, slot, NULL, t);
}

static double max_abs(const float *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fabs((double)x[i]) > m ? fabs((double)x[i]) : m;
    return m;
}

/* One FLIP row (adopted decisions) or FAIL row (a decision beyond tolerance). */
static void report(parity_run *r, int rec, const char *what, const samc_scope *sc, int64_t flips, int64_t beyond,
                   double worst_flip, double worst_beyond)
{
    if (!flips && !beyond)
        return;
    const samc_dump_record *d = &r->recs[rec]; /* the record that holds the recorded side */
    samc_parity_row *row = samc__parity_add_row(r, r->last_index, d->module, d->call, what); /* where it was taken */
    if (!row)
        return;
    row->state = beyond ? SAMC_PARITY_FAIL : SAMC_PARITY_FLIP;
    row->rel = beyond ? worst_beyond : worst_flip;
    if (beyond)
        snprintf(row->note, sizeof row->note,
                 "%s (frame %d, object %d): %lld decision(s) differ farther than the tolerance from the threshold "
                 "(margin %.3e)%s", what, sc->frame_idx, sc->obj_id, (long long)beyond, worst_beyond,
                 flips ? "; others within it were adopted" : "");
    else
        snprintf(row->note, sizeof row->note,
                 "%s (frame %d, object %d): %lld value(s) within %.3e of the threshold took the recorded decision",
                 what, sc->frame_idx, sc->obj_id, (long long)flips, worst_flip);
    if (flips)
        r->rep->n_flip_values += flips;
}

/* The recorded bank entry of (frame, object): bf16 values, as float32. */
static int bank_entry(parity_run *r, const samc_scope *sc, samc_tensor *t)
{
    static const char *const kinds[] = {"cond_frame_outputs", "non_cond_frame_outputs"};
    char slot[160];
    for (int i = 0; i < r->n_recs; i++) {
        if (r->recs[i].obj_id != sc->obj_id || strcmp(r->recs[i].module, "@prepare_memory_conditioned_features"))
            continue;
        for (int k = 0; k < 2; k++) {
            snprintf(slot, sizeof slot, "in/output_dict.%s.%d.maskmem_features", kinds[k], sc->frame_idx);
            if (read_slot(r, i, slot, t))
                return i;
        }
    }
    return -1;
}

/* The planted flip (samc_parity_opts.plant_bf16_flip): value 0 moved to the
 * given margin past its midpoint, away from the recorded rounding. */
static void plant(parity_run *r, samc_decision *d, const float *rec, double scale)
{
    float lo, hi, mid;
    samc_bf16_neighbours(d->values[0], &lo, &hi, &mid);
    const double step = r->plant_bf16_flip * (scale > 0 ? scale : 1), m = fabs((double)mid);
    const double mag = rec[0] == lo ? m + step : m - step; /* past |mid|: rounds to hi, short of it: to lo */
    d->values[0] = (float)copysign(mag, (double)mid);
    r->plant_bf16_flip = 0;
}

/* SAM 3's recorded side of a bfloat16 rounding: the memory the last
 * @encode_new_memory of this scope recorded (float32, rounded here as the
 * official state stores it), or a tracker neck level of the frame as the
 * next record that reads it holds it (conv_s0 / conv_s1 in/0, the
 * @tracker_backbone's level 2). */
static int sam3_bf16_side(parity_run *r, const samc_scope *sc, const samc_decision *d, samc_tensor *t)
{
    const bool memory = !strcmp(d->module, "@encode_new_memory");
    const char *slot = memory ? "out/maskmem_features"
                       : !strcmp(d->module, "@tracker_backbone") ? "out/backbone_fpn.2" : "in/0";
    const int ri = record_for(r, d->module, sc, memory ? -1 : 0);
    if (ri < 0 || !read_slot_of(r, ri, slot, sc, t))
        return -1;
    if (memory)
        samc_round_bf16(t->data, samc_numel(t));
    return ri;
}

static void resync_bf16(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    samc_tensor rec = {0};
    const int ri = r->model3 ? sam3_bf16_side(r, sc, d, &rec) : bank_entry(r, sc, &rec);
    if (ri < 0 || samc_numel(&rec) != d->n) { /* never read back by the official run: nothing to follow */
        samc_tensor_release(&rec);
        return;
    }
    const double scale = max_abs(rec.data, d->n), tol = r->rep->tol;
    if (r->plant_bf16_flip > 0)
        plant(r, d, rec.data, scale);
    int64_t flips = 0, beyond = 0;
    double wf = 0, wb = 0;
    for (int64_t i = 0; i < d->n; i++) {
        float c = d->values[i];
        samc_round_bf16(&c, 1);
        if (c == rec.data[i])
            continue;
        /* how far the C value is from the values that round to the recorded one */
        const double margin = samc_bf16_distance_to_rounding(d->values[i], rec.data[i]) / (scale > 0 ? scale : 1);
        if (margin <= tol) {
            d->values[i] = rec.data[i], flips++, wf = margin > wf ? margin : wf;
        } else {
            beyond++, wb = margin > wb ? margin : wb;
        }
    }
    report(r, ri, strcmp(d->module, "@encode_new_memory") && r->model3 ? "bf16 rounding of the tracker neck"
                                                                        : "bf16 rounding of the stored memory",
           sc, flips, beyond, wf, wb);
    samc_tensor_release(&rec);
}

static void resync_object_score(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    const int ri = record_for(r, d->module, sc, -1);
    samc_tensor rec = {0};
    if (ri < 0 || !read_slot_of(r, ri, "out/3", sc, &rec))
        return;
    const float c = d->values[0], v = rec.data[0];
    if ((c > d->threshold) != (v > d->threshold)) {
        const double margin = fabs(c - d->threshold) / fmax(fabs(v), 1.0);
        const bool adopt = margin <= r->rep->tol;
        if (adopt)
            d->values[0] = v;
        report(r, ri, "object presence (score > 0)", sc, adopt, !adopt, margin, margin);
    }
    samc_tensor_release(&rec);
}

static void resync_best_mask(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    const int ri = record_for(r, d->module, sc, -1);
    samc_tensor rec = {0};
    if (ri < 0 || !read_slot_of(r, ri, "out/1", sc, &rec) || samc_numel(&rec) != d->n) {
        samc_tensor_release(&rec);
        return;
    }
    const int cb = samc_argmax_first(d->values, (int)d->n), rb = samc_argmax_first(rec.data, (int)d->n);
    if (cb != rb) {
        const double margin = (d->values[cb] - d->values[rb]) / fmax(max_abs(rec.data, d->n), 1e-12);
        const bool adopt = margin <= r->rep->tol;
        if (adopt)
            memcpy(d->values, rec.data, (size_t)d->n * sizeof *d->values);
        report(r, ri, "best multimask output (argmax IoU)", sc, adopt, !adopt, margin, margin);
    }
    samc_tensor_release(&rec);
}

/* The recorded choice is the candidate the recorded mask equals (closest). */
static void resync_stability(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    const int ri = record_for(r, d->module, sc, 0);
    samc_tensor rec = {0};
    if (ri < 0 || !read_slot_of(r, ri, "out/0", sc, &rec) || samc_numel(&rec) != d->hw) {
        samc_tensor_release(&rec);
        return;
    }
    const double d0 = samc_parity_max_abs(rec.data, d->masks + (int64_t)d->choices[0] * d->hw, d->hw);
    const double d1 = samc_parity_max_abs(rec.data, d->masks + (int64_t)d->choices[1] * d->hw, d->hw);
    const bool rec_token0 = d0 <= d1, c_token0 = d->values[0] >= d->threshold;
    if (rec_token0 != c_token0 && d->choices[0] != d->choices[1]) {
        const double margin = fabs(d->values[0] - d->threshold);
        const bool adopt = margin <= r->rep->tol;
        if (adopt)
            d->values[0] = rec_token0 ? d->threshold : nextafterf(d->threshold, -INFINITY);
        report(r, ri, "stability choice (score >= threshold)", sc, adopt, !adopt, margin, margin);
    }
    samc_tensor_release(&rec);
}

/* The memory encoder's recorded input mask holds the binarised pixels,
 * scaled: the recorded decision is which side of the scaled midpoint. */
static void resync_binarize(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    const int ri = record_for(r, d->module, sc, 0);
    samc_tensor rec = {0};
    if (ri < 0 || (!read_slot_of(r, ri, "in/masks", sc, &rec) && !read_slot_of(r, ri, "in/1", sc, &rec)) ||
        samc_numel(&rec) != d->n) {
        samc_tensor_release(&rec);
        return;
    }
    const samc_tracker_config *c = r->model3 ? &r->model3->tracker.cfg : &r->model->tracker.cfg;
    const double mid = 0.5 * c->sigmoid_scale_for_mem_enc + c->sigmoid_bias_for_mem_enc;
    const double scale = max_abs(d->values, d->n), tol = r->rep->tol;
    int64_t flips = 0, beyond = 0;
    double wf = 0, wb = 0;
    for (int64_t i = 0; i < d->n; i++) {
        const bool want = rec.data[i] > mid;
        if ((d->values[i] > d->threshold) == want)
            continue;
        const double margin = fabs(d->values[i] - d->threshold) / (scale > 0 ? scale : 1);
        if (margin <= tol) {
            d->values[i] = want ? FLT_MIN : -FLT_MIN;
            flips++, wf = margin > wf ? margin : wf;
        } else {
            beyond++, wb = margin > wb ? margin : wb;
        }
    }
    report(r, ri, "mask binarisation for the memory (logit > 0)", sc, flips, beyond, wf, wb);
    samc_tensor_release(&rec);
}

/* The recorded winner of a pixel is the object with the highest recorded
 * value (the others were clamped); a different C winner within tolerance is
 * moved up to the C winner's value (ties go to the first object, as argmax). */
static void resync_non_overlap(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    const int ri = record_for(r, d->module, sc, 0);
    samc_tensor rec = {0};
    if (ri < 0 || !read_slot(r, ri, "out/0", &rec) || samc_numel(&rec) != d->n) {
        samc_tensor_release(&rec);
        return;
    }
    const double scale = max_abs(rec.data, d->n), tol = r->rep->tol;
    int64_t flips = 0, beyond = 0;
    double wf = 0, wb = 0;
    for (int64_t p = 0; p < d->hw; p++) {
        int cw = 0, rw = 0;
        for (int k = 1; k < d->n_masks; k++) {
            cw = d->values[k * d->hw + p] > d->values[cw * d->hw + p] ? k : cw;
            rw = rec.data[k * d->hw + p] > rec.data[rw * d->hw + p] ? k : rw;
        }
        float *c = &d->values[cw * d->hw + p], *want = &d->values[rw * d->hw + p];
        if (cw == rw || (*c <= -10.0f && *want <= -10.0f)) /* the clamp changes nothing here */
            continue;
        const double margin = (*c - *want) / (scale > 0 ? scale : 1);
        if (margin <= tol) {
            *want = rw < cw ? *c : nextafterf(*c, INFINITY);
            flips++, wf = margin > wf ? margin : wf;
        } else {
            beyond++, wb = margin > wb ? margin : wb;
        }
    }
    report(r, ri, "non-overlapping masks (per-pixel argmax)", sc, flips, beyond, wf, wb);
    samc_tensor_release(&rec);
}

static bool side(float v, float thr, samc_cmp c) { return c == SAMC_CMP_GT ? v > thr : c == SAMC_CMP_GE ? v >= thr : v < thr; }

/* The planted flip (samc_parity_opts.plant_threshold_flip): the value whose
 * recorded side is nearest the threshold, moved to the other side by the
 * given margin. */
static void plant_threshold(parity_run *r, samc_decision *d, const float *rec, double scale)
{
    int64_t k = 0;
    for (int64_t i = 1; i < d->n; i++)
        k = fabs(rec[i] - d->threshold) < fabs(rec[k] - d->threshold) ? i : k;
    const double step = r->plant_threshold_flip * scale;
    const bool up = side(rec[k], d->threshold, d->cmp) == (d->cmp == SAMC_CMP_LT); /* past it: above or below */
    d->values[k] = (float)(d->threshold + (up ? step : -step));
    r->plant_threshold_flip = 0;
}

/* A loop decision by a threshold (SAM 3 video: NMS, association, ...). */
static void resync_threshold(parity_run *r, const samc_scope *sc, samc_decision *d)
{
    const int ri = record_for(r, d->module, sc, 0);
    samc_tensor rec = {0};
    if (ri < 0 || !read_slot_of(r, ri, d->slot, sc, &rec) || samc_numel(&rec) != d->n || d->n == 0) {
        samc_tensor_release(&rec);
        return;
    }
    const double scale = fmax(max_abs(rec.data, d->n), 1e-12), tol = r->rep->tol;
    if (r->plant_threshold_flip > 0)
        plant_threshold(r, d, rec.data, scale);
    int64_t flips = 0, beyond = 0;
    double wf = 0, wb = 0;
    for (int64_t i = 0; i < d->n && !r->strict; i++) {
        if (side(d->values[i], d->threshold, d->cmp) == side(rec.data[i], d->threshold, d->cmp))
            continue;
        const double margin = fabs(d->values[i] - d->threshold) / scale;
        if (margin <= tol)
            d->values[i] = rec.data[i], flips++, wf = margin > wf ? margin : wf;
        else
            beyond++, wb = margin > wb ? margin : wb;
    }
    static const char *const ops[] = {">", ">=", "<"};
    char what[96];
    snprintf(what, sizeof what, "%s %s %g", d->slot, ops[d->cmp], (double)d->threshold);
    report(r, ri, what, sc, flips, beyond, wf, wb);
    samc_tensor_release(&rec);
}

void samc__parity_resync(void *user, const samc_scope *sc, samc_decision *d)
{
    parity_run *r = user;
    if (d->kind == SAMC_DECISION_THRESHOLD) { /* strict: only the planted flip */
        resync_threshold(r, sc, d);
        return;
    }
    if (r->strict) { /* only the planted flip (a test), no re-synchronisation */
        samc_tensor rec = {0};
        if (d->kind == SAMC_DECISION_BF16 && r->plant_bf16_flip > 0 && bank_entry(r, sc, &rec) >= 0 &&
            samc_numel(&rec) == d->n)
            plant(r, d, rec.data, max_abs(rec.data, d->n));
        samc_tensor_release(&rec);
        return;
    }
    switch (d->kind) {
    case SAMC_DECISION_BF16: resync_bf16(r, sc, d); break;
    case SAMC_DECISION_OBJECT_SCORE: resync_object_score(r, sc, d); break;
    case SAMC_DECISION_BEST_MASK: resync_best_mask(r, sc, d); break;
    case SAMC_DECISION_STABILITY: resync_stability(r, sc, d); break;
    case SAMC_DECISION_BINARIZE: resync_binarize(r, sc, d); break;
    case SAMC_DECISION_NON_OVERLAP: resync_non_overlap(r, sc, d); break;
    case SAMC_DECISION_THRESHOLD: break; /* above */
    }
}
