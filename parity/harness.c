/* harness.c - set-up, matching and bookkeeping of a parity run. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

samc_parity_row *samc__parity_add_row(parity_run *r, int index, const char *module, int call, const char *slot)
{
    samc_parity_report *rep = r->rep;
    if (rep->n_rows == rep->cap_rows) {
        int cap = rep->cap_rows ? 2 * rep->cap_rows : 128;
        samc_parity_row *n = realloc(rep->rows, (size_t)cap * sizeof *n);
        if (!n) {
            r->st = SAMC_ERR_NOMEM;
            return NULL;
        }
        rep->rows = n, rep->cap_rows = cap;
    }
    samc_parity_row *row = &rep->rows[rep->n_rows++];
    memset(row, 0, sizeof *row);
    row->mask_iou = NAN;
    row->index = index;
    snprintf(row->module, sizeof row->module, "%s", module);
    row->call = call;
    snprintf(row->slot, sizeof row->slot, "%s", slot);
    return row;
}

/* IoU of the masks (x > 0); 1 when both are empty. */
static double mask_iou(const float *a, const float *b, int64_t n)
{
    int64_t inter = 0, uni = 0;
    for (int64_t i = 0; i < n; i++)
        inter += a[i] > 0 && b[i] > 0, uni += a[i] > 0 || b[i] > 0;
    return uni ? (double)inter / (double)uni : 1.0;
}

int64_t samc_parity_bf16_flips(const float *out, const float *ref, int64_t n, int64_t *first, int64_t *other)
{
    int64_t flips = 0;
    *first = -1, *other = 0;
    for (int64_t i = 0; i < n; i++) {
        if (out[i] == ref[i])
            continue;
        const float a = fabsf(ref[i]);
        const float step = a > 0 ? ldexpf(1.0f, ilogbf(a) - 7) : 0; /* one bf16 step at this magnitude */
        if (fabsf(out[i] - ref[i]) <= step * 1.0001f) {
            if (!flips++)
                *first = i;
        } else {
            (*other)++;
        }
    }
    return flips;
}

/* Stored memory is bfloat16: values within float32 error of a bf16 rounding
 * midpoint can round the other way. Name such flips (one bf16 step apart). */
static void note_bf16_flips(samc_parity_row *row, const samc_tensor *t, const samc_tensor *ref)
{
    int64_t first, other;
    const int64_t flips = samc_parity_bf16_flips(t->data, ref->data, samc_numel(t), &first, &other);
    if (flips)
        snprintf(row->note, sizeof row->note,
                 "%lld bfloat16 rounding flip(s) (value within float32 error of a bf16 midpoint; first at %lld: samc %.9g, dump %.9g)%s",
                 (long long)flips, (long long)first, t->data[first], ref->data[first],
                 other ? "; other differences too" : "");
}

/* FNV-1a 64 over the tensor's bytes. */
static uint64_t digest(const samc_tensor *t)
{
    const unsigned char *p = (const unsigned char *)t->data;
    const int64_t n = samc_numel(t) * (int64_t)sizeof(float);
    uint64_t h = 14695981039346656037ull;
    for (int64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

void samc__parity_compare(parity_run *r, int index, const char *module, int call, const char *slot,
                    const samc_tensor *t, const char *path)
{
    samc_parity_row *row = samc__parity_add_row(r, index, module, call, slot);
    if (!row)
        return;
    row->digest = digest(t);
    row->ndim = t->ndim;
    memcpy(row->shape, t->shape, sizeof row->shape);
    samc_tensor ref = {0};
    samc_error e = {0};
    if (samc_dump_read(r->dump, path, &ref, &e)) {
        row->state = SAMC_PARITY_NOT_IN_DUMP;
        snprintf(row->note, sizeof row->note, "%s", e.msg);
        return;
    }
    if (!samc_tensor_same_shape(t, &ref)) {
        char a[96], b[96];
        row->state = SAMC_PARITY_SHAPE;
        snprintf(row->note, sizeof row->note, "shape %s, dump has %s", samc_shape_str(t->ndim, t->shape, a, sizeof a),
                 samc_shape_str(ref.ndim, ref.shape, b, sizeof b));
    } else {
        samc_parity_metrics(t->data, ref.data, samc_numel(t), &row->max_abs, &row->rel, &row->nmse);
        if (!strncmp(path, "/outputs/", 9) && strstr(slot, "low_res") == NULL &&
            (strstr(slot, "mask") || !strncmp(slot, "obj ", 4))) /* the user's masks: logit > 0 */
            row->mask_iou = mask_iou(t->data, ref.data, samc_numel(t));
        row->state = row->rel <= r->rep->tol ? SAMC_PARITY_PASS : SAMC_PARITY_FAIL;
        if (row->state == SAMC_PARITY_FAIL && strstr(slot, "maskmem_features"))
            note_bf16_flips(row, t, &ref);
    }
    samc_tensor_release(&ref);
}

int samc__parity_find_record_video(const parity_run *r, const char *module, int frame_idx, int obj_id, int nth)
{
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].frame_idx == frame_idx && r->recs[i].obj_id == obj_id && !strcmp(r->recs[i].module, module) &&
            nth-- == 0)
            return i;
    return -1;
}

int samc__parity_find_record(const parity_run *r, const char *module, int call)
{
    for (int i = 0; i < r->n_recs; i++)
        if (r->recs[i].call == call && !strcmp(r->recs[i].module, module))
            return i;
    return -1;
}

bool samc__parity_is_point(const parity_run *r, const char *module)
{
    const samc_layer *L = samc_exec_find(&r->x, module);
    return L && L->def->parity;
}

static bool has_slot(const char *const *slots, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(slots[i], s))
            return true;
    return false;
}

void samc__parity_compare_record(parity_run *r, int rec, int nslots, const char *const *slots,
                           const samc_tensor *const *t)
{
    const samc_dump_record *d = &r->recs[rec];
    char path[320];
    for (int i = 0; i < nslots; i++) { /* "in/<slot>" compares a recorded input (state) */
        if (!strncmp(slots[i], "in/", 3))
            snprintf(path, sizeof path, "/trace/%06d/%s", d->index, slots[i]);
        else
            snprintf(path, sizeof path, "/trace/%06d/out/%s", d->index, slots[i]);
        samc__parity_compare(r, d->index, d->module, d->call, slots[i], t[i], path);
    }
    char **names = NULL;
    int n = 0;
    snprintf(path, sizeof path, "/trace/%06d/out", d->index);
    if (samc_dump_list(r->dump, path, &names, &n, NULL) == SAMC_OK)
        for (int i = 0; i < n; i++)
            if (!has_slot(slots, nslots, names[i])) {
                samc_parity_row *row = samc__parity_add_row(r, d->index, d->module, d->call, names[i]);
                if (row) {
                    row->state = SAMC_PARITY_NOT_PRODUCED;
                    snprintf(row->note, sizeof row->note, "output slot in the dump that samc does not produce");
                }
            }
    samc_dump_free_names(names, n);
}

static int cmp_rows(const void *a, const void *b)
{
    const samc_parity_row *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Stable order: dump completion order, then insertion order. */
static void finish_report(parity_run *r)
{
    samc_parity_report *rep = r->rep;
    for (int i = 0; i < r->n_recs; i++) {
        if (r->seen[i])
            continue;
        if (!samc__parity_is_point(r, r->recs[i].module)) {
            rep->n_ignored_records++;
            continue;
        }
        samc_parity_row *row = samc__parity_add_row(r, r->recs[i].index, r->recs[i].module, r->recs[i].call, "*");
        if (row) {
            row->state = SAMC_PARITY_NOT_PRODUCED;
            snprintf(row->note, sizeof row->note, "recorded in the dump but samc produced no such call");
        }
    }
    /* Rows in dump completion order; rows of one record keep their order
     * (a stable insertion sort: qsort is not stable). */
    samc_parity_row *tmp = malloc((size_t)(rep->n_rows ? rep->n_rows : 1) * sizeof *tmp);
    if (tmp) {
        int n = 0;
        for (int i = 0; i < rep->n_rows; i++) {
            int j = n;
            while (j > 0 && cmp_rows(&tmp[j - 1], &rep->rows[i]) > 0)
                tmp[j] = tmp[j - 1], j--;
            tmp[j] = rep->rows[i];
            n++;
        }
        memcpy(rep->rows, tmp, (size_t)rep->n_rows * sizeof *tmp);
        free(tmp);
    }
    rep->first_fail = -1;
    for (int i = 0; i < rep->n_rows; i++) {
        if (rep->rows[i].state == SAMC_PARITY_FLIP) {
            rep->n_flips++;
        } else if (rep->rows[i].state == SAMC_PARITY_PASS) {
            rep->n_pass++;
        } else {
            rep->n_fail++;
            if (rep->first_fail < 0)
                rep->first_fail = i;
        }
    }
}

static samc_status check_task(samc_dump *d, bool *video, bool *sam3, bool *amg, samc_error *err)
{
    char *task = NULL;
    samc_status st = samc_dump_attr_str(d, "/inputs", "task", &task, err);
    if (!st && strcmp(task, "image") && strcmp(task, "video") && strcmp(task, "sam3_image") && strcmp(task, "amg"))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED,
                       "%s: task '%s' is not supported (samc parity runs 'image', 'video', 'sam3_image' and 'amg')",
                       samc_dump_path(d), task);
    *video = !st && !strcmp(task, "video");
    *sam3 = !st && !strcmp(task, "sam3_image");
    *amg = !st && !strcmp(task, "amg");
    free(task);
    return st;
}

/* The video task's frame size (the resize target of @postprocess). */
static samc_status video_size(parity_run *r, samc_error *err)
{
    uint8_t *frames = NULL;
    int nd = 0;
    int64_t dims[4];
    samc_status st = samc_dump_read_u8(r->dump, "/inputs/frames_u8", &frames, &nd, dims, err);
    free(frames);
    if (!st && nd != 4)
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/frames_u8 must be [T,H,W,3]", samc_dump_path(r->dump));
    if (!st)
        r->video_h = (int)dims[1], r->video_w = (int)dims[2];
    return st;
}

static samc_status load_model(parity_run *r, const char *path, const samc_parity_opts *o, samc_error *err)
{
    char *family = NULL, *json = NULL;
    samc_status st = samc_dump_attr_str(r->dump, "/model", "family", &family, err);
    const char *want = r->sam3 ? "sam3" : "sam2";
    if (!st && strcmp(family, want))
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: model family '%s' does not run the dump's task (it needs %s)",
                       path, family, want);
    free(family);
    if (!st && r->sam3) {
        st = samc__parity_load_sam3(r, path, o->impl ? o->impl : samc_impl_default()->name, err);
        for (int i = 0; !st && i < o->n_overrides; i++)
            st = samc_exec_add_override(&r->x, o->overrides[i], err);
        return st;
    }
    if (!st && !samc_dump_has_attr(r->dump, "/model", "config_json"))
        st = samc_fail(err, SAMC_ERR_KEY, "%s: the dump has no /model/config_json attribute", path);
    if (!st)
        st = samc_dump_attr_str(r->dump, "/model", "config_json", &json, err);
    samc_sam2_config cfg;
    char what[600];
    snprintf(what, sizeof what, "%s:/model/config_json", path);
    if (!st)
        st = samc_sam2_config_from_json(json, what, &cfg, err);
    free(json);
    samc_weights *w = NULL;
    if (!st)
        st = samc_weights_open_h5(path, &w, err);
    if (!st)
        st = samc_sam2_model_init(&r->model, w, &cfg, err);
    if (!st)
        st = samc_sam2_exec_init(&r->x, r->model, err);
    if (!st)
        st = samc_exec_set_impl(&r->x, o->impl ? o->impl : samc_impl_default()->name, err);
    for (int i = 0; !st && i < o->n_overrides; i++)
        st = samc_exec_add_override(&r->x, o->overrides[i], err);
    /* Image predictor options recorded by tools/dump_sam2.py (absent: the defaults, 0). */
    if (!st && samc_dump_has_attr(r->dump, "/inputs", "max_hole_area"))
        st = samc_dump_attr_num(r->dump, "/inputs", "max_hole_area", &r->image_opts.max_hole_area, NULL, err);
    if (!st && samc_dump_has_attr(r->dump, "/inputs", "max_sprinkle_area"))
        st = samc_dump_attr_num(r->dump, "/inputs", "max_sprinkle_area", &r->image_opts.max_sprinkle_area, NULL, err);
    if (!st && r->video)
        st = video_size(r, err);
    return st;
}

samc_status samc_parity_run(const char *path, const samc_parity_opts *o, samc_parity_report *rep,
                            samc_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->dump_path = path;
    const samc_impl *impl = samc_impl_find(o->impl ? o->impl : samc_impl_default()->name);
    if (!impl) {
        char names[160];
        return samc_fail(err, SAMC_ERR_ARG, "--impl: unknown implementation '%s' (known: %s)", o->impl,
                         samc_impl_names(names, sizeof names));
    }
    rep->impl = impl->name;
    rep->isolated = o->isolated;
    rep->tol = o->tol > 0 ? o->tol : impl->tol;
    parity_run r = {.rep = rep, .strict = o->strict, .plant_bf16_flip = o->plant_bf16_flip};
    samc_status st = samc_dump_open(path, &r.dump, err);
    if (!st) /* before loading any weights */
        st = check_task(r.dump, &r.video, &r.sam3, &r.amg, err);
    if (!st)
        st = load_model(&r, path, o, err);
    if (!st)
        st = samc_dump_records(r.dump, &r.recs, &r.n_recs, err);
    if (!st && !(r.seen = calloc((size_t)(r.n_recs ? r.n_recs : 1), sizeof *r.seen)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        st = o->isolated ? samc__parity_run_isolated(&r, err) : samc__parity_run_chained(&r, err);
    if (!st && r.st)
        st = samc_fail(err, r.st, "parity run failed internally (%s)", samc_status_name(r.st));
    if (!st)
        finish_report(&r);
    free(r.seen);
    free(r.recs);
    free(r.calls);
    samc_exec_free(&r.x);
    samc_sam2_model_free(r.model);
    samc_sam3_model_free(r.model3);
    samc_dump_close(r.dump);
    return st;
}

void samc_parity_report_free(samc_parity_report *rep)
{
    free(rep->rows);
    memset(rep, 0, sizeof *rep);
}
