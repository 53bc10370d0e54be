/* SPDX-License-Identifier: Apache-2.0 */
/* dump_io.c - a record's in/ group as the samc_layer_io of isolated runners. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "harness_internal.h"

/* The slot that exists: in/<name>, else in/<pos>. */
static void in_path(const parity_run *r, const char *name, const char *pos, char *path, size_t n)
{
    snprintf(path, n, "/trace/%06d/in/%s", r->recs[r->io_rec].index, name);
    if (!samc_dump_exists(r->dump, path) && pos)
        snprintf(path, n, "/trace/%06d/in/%s", r->recs[r->io_rec].index, pos);
}

/* SAM 3: backbone.language_backbone receives its captions as strings; its
 * token ids are the output of the @tokenize call recorded before it. */
static samc_status tokenized_ids(const parity_run *r, samc_tensor *t, samc_error *err)
{
    for (int i = r->io_rec - 1; i >= 0; i--)
        if (!strcmp(r->recs[i].module, "@tokenize")) {
            char path[64];
            snprintf(path, sizeof path, "/trace/%06d/out/0", r->recs[i].index);
            return samc_dump_read(r->dump, path, t, err);
        }
    return samc_fail(err, SAMC_ERR_KEY, "%s: no @tokenize record before record %d (%s)", samc_dump_path(r->dump),
                     r->recs[r->io_rec].index, r->recs[r->io_rec].module);
}

/* The criterion's input perturbation (judge.c): every element moved by
 * +-size x max|x|. Tensors whose values are all integers (labels, ids,
 * binary masks, pixel coordinates) are discrete and stay as recorded. */
static void perturb(samc_tensor *t, double size)
{
    const int64_t n = samc_numel(t);
    float mx = 0;
    bool discrete = true;
    for (int64_t i = 0; i < n; i++) {
        mx = fabsf(t->data[i]) > mx ? fabsf(t->data[i]) : mx;
        discrete = discrete && t->data[i] == floorf(t->data[i]);
    }
    if (discrete)
        return;
    const double step = size * mx;
    uint64_t state = 1; /* a fixed sign pattern, the same on every run */
    for (int64_t i = 0; i < n; i++)
        t->data[i] += (float)((samc_rng_next(&state) & 1) ? step : -step);
}

static samc_status io_tensor(void *user, const char *name, const char *pos, samc_tensor *t, samc_error *err)
{
    const parity_run *r = user;
    if (r->sam3 && !strcmp(name, "input_ids"))
        return tokenized_ids(r, t, err);
    char path[320];
    in_path(user, name, pos, path, sizeof path);
    samc_status st = samc_dump_read(r->dump, path, t, err);
    if (!st)
        st = samc__parity_slice_input(t, name, r->batch, r->batch_n, err);
    if (!st && r->io_perturb > 0)
        perturb(t, r->io_perturb);
    return st;
}

static bool io_has(void *user, const char *name)
{
    const parity_run *r = user;
    if (r->sam3 && !strcmp(name, "input_ids"))
        return true;
    char path[320];
    snprintf(path, sizeof path, "/trace/%06d/in/%s", r->recs[r->io_rec].index, name);
    return samc_dump_exists(r->dump, path);
}

static samc_status io_scalar(void *user, const char *name, const char *pos, double *v, bool *none, samc_error *err)
{
    const parity_run *r = user;
    char g[64];
    snprintf(g, sizeof g, "/trace/%06d/in", r->recs[r->io_rec].index);
    const char *a = samc_dump_has_attr(r->dump, g, name) || !pos ? name : pos;
    return samc_dump_attr_num(r->dump, g, a, v, none, err);
}

static samc_status io_string(void *user, const char *name, const char *pos, char **out, samc_error *err)
{
    const parity_run *r = user;
    char g[64];
    snprintf(g, sizeof g, "/trace/%06d/in", r->recs[r->io_rec].index);
    const char *a = samc_dump_has_attr(r->dump, g, name) || !pos ? name : pos;
    return samc_dump_attr_str(r->dump, g, a, out, err);
}

static samc_status io_names(void *user, char ***names, int *n, samc_error *err)
{
    const parity_run *r = user;
    char g[64];
    snprintf(g, sizeof g, "/trace/%06d/in", r->recs[r->io_rec].index);
    return samc_dump_list(r->dump, g, names, n, err);
}

samc_layer_io samc__parity_record_io(parity_run *r, int rec)
{
    r->io_rec = rec;
    return (samc_layer_io){.user = r, .tensor = io_tensor, .has = io_has, .scalar = io_scalar, .string = io_string,
                           .names = io_names, .video = r->video, .video_h = r->video_h, .video_w = r->video_w,
                           .max_hole_area = r->image_opts.max_hole_area,
                           .max_sprinkle_area = r->image_opts.max_sprinkle_area};
}

double samc__parity_attr_or(samc_dump *d, const char *obj, const char *name, double dflt)
{
    double v = dflt;
    bool none = false;
    if (samc_dump_has_attr(d, obj, name) && (samc_dump_attr_num(d, obj, name, &v, &none, NULL) || none))
        v = dflt;
    return v;
}

samc_status samc__parity_read_frames(samc_dump *d, samc_frames **out, samc_error *err)
{
    *out = NULL;
    uint8_t *rgb = NULL;
    int nd = 0;
    int64_t dims[4];
    samc_status st = samc_dump_read_u8(d, "/inputs/frames_u8", &rgb, &nd, dims, err);
    if (!st && (nd != 4 || dims[3] != 3))
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: /inputs/frames_u8 must be [T,H,W,3]", samc_dump_path(d));
    if (!st)
        st = samc_frames_from_memory(rgb, (int)dims[0], (int)dims[1], (int)dims[2], out, err);
    free(rgb);
    return st;
}
