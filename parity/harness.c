/* SPDX-License-Identifier: Apache-2.0 */
/* harness.c - a parity run: the dump opened, its task checked and its model
 * loaded, the task runner called (chained_<task>.c or isolated.c), then the
 * rows judged (judge.c) and counted. Nothing here is called back by the
 * files it calls (tests/check_call_cycles.sh). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "harness_internal.h"

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

static samc_status check_task(parity_run *r, samc_error *err)
{
    char *task = NULL;
    samc_status st = samc_dump_attr_str(r->dump, "/inputs", "task", &task, err);
    static const char *const known[] = {"image", "video", "sam3_image", "amg", "sam3_video", "sam3_inst"};
    int k = 0;
    while (!st && k < 6 && strcmp(task, known[k]))
        k++;
    if (!st && k == 6)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED,
                       "%s: task '%s' is not supported (samc parity runs 'image', 'video', 'sam3_image', 'amg', "
                       "'sam3_video' and 'sam3_inst')", samc_dump_path(r->dump), task);
    free(task);
    if (st)
        return st;
    r->video = k == 1, r->amg = k == 3;
    r->sam3 = k == 2 || k >= 4, r->sam3_video = k == 4, r->sam3_inst = k == 5;
    r->scoped = r->video || r->sam3_video;
    return SAMC_OK;
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

/* The task runner: isolated.c for every task, else the task's chained run. */
static samc_status run_task(parity_run *r, bool isolated, samc_error *err)
{
    if (isolated)
        return samc__parity_run_isolated(r, err);
    if (r->video)
        return samc__parity_run_video(r, err);
    if (r->sam3_video)
        return samc__parity_run_sam3_video(r, err);
    if (r->sam3_inst)
        return samc__parity_run_sam3_inst(r, err);
    if (r->sam3)
        return samc__parity_run_sam3(r, err);
    if (r->amg)
        return samc__parity_run_amg(r, err);
    return samc__parity_run_image(r, err);
}

samc_status samc_parity_run(const char *path, const samc_parity_opts *o, samc_parity_report *rep,
                            samc_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->dump_path = path;
    samc_status lst = SAMC_OK;
    const samc_impl *impl = samc_impl_lookup(o->impl ? o->impl : samc_impl_default()->name, "--impl", &lst, err);
    if (!impl)
        return lst;
    rep->impl = impl->name;
    rep->isolated = o->isolated;
    rep->tol = o->tol > 0 ? o->tol : impl->tol;
    parity_run r = {.rep = rep, .strict = o->strict, .plant_bf16_flip = o->plant_bf16_flip,
                    .plant_threshold_flip = o->plant_threshold_flip, .opts = o, .batch = -1};
    samc_status st = samc_dump_open(path, &r.dump, err);
    if (!st) /* before loading any weights */
        st = check_task(&r, err);
    if (!st)
        st = load_model(&r, path, o, err);
    if (!st)
        st = samc_dump_records(r.dump, &r.recs, &r.n_recs, err);
    if (!st && !(r.seen = calloc((size_t)(r.n_recs ? r.n_recs : 1), sizeof *r.seen)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    if (!st)
        st = run_task(&r, o->isolated, err);
    if (!st && r.st)
        st = samc_fail(err, r.st, "parity run failed internally (%s)", samc_status_name(r.st));
    if (!st) {
        samc__parity_judge(&r);
        if (r.st)
            st = samc_fail(err, r.st, "parity run failed internally (%s)", samc_status_name(r.st));
    }
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
