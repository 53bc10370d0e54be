/* SPDX-License-Identifier: Apache-2.0 */
/* test_mounted_tracker.c - the tracker's parts mount under any root.
 *
 * A second family mounts the very same tracker parts the way SAM 3 names
 * them (tracker, tracker.sam_prompt_encoder, tracker.sam_mask_decoder,
 * tracker.maskmem_backbone, tracker.transformer.encoder) over a state_dict
 * whose tracker keys carry those prefixes (and that has no image encoder),
 * and feeds it frames from another feature source: backbone levels
 * computed beforehand and read from a table, not SAM 2's encoder at call
 * time. Its video run must be bit-identical to the SAM 2 family's: every
 * frame's masks, and every traced layer output under the mapped name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"
#include "core/models/tracker/video.h"
#include "util/testutil.h"

#define FIXTURE "fixtures/video/tiny_v1_sam21_s128"

/* The second family: just a tracker, mounted under SAM 3's roots. */
typedef struct mounted_model {
    samc_model_base base;
    samc_tracker_model tracker;
} mounted_model;

#define AT(field) .offset = offsetof(mounted_model, field), .cfg_offset = offsetof(mounted_model, tracker.cfg)
static const samc_mount mounts[] = {
    {.part = &samc_prompt_encoder_part, .root = "tracker.sam_prompt_encoder", AT(tracker.prompt_encoder)},
    {.part = &samc_mask_decoder_part, .root = "tracker.sam_mask_decoder", AT(tracker.mask_decoder)},
    {.part = &samc_memory_attention_part, .root = "tracker.transformer.encoder", AT(tracker.memory_attention)},
    {.part = &samc_memory_encoder_part, .root = "tracker.maskmem_backbone", AT(tracker.memory_encoder)},
    {.part = &samc_tracker_part, .root = "tracker", AT(tracker)},
    {.part = &samc_memory_bank_part, .root = "tracker", AT(tracker)},
    {.part = &samc_postprocess_part, .root = "tracker", AT(tracker)},
};
static const samc_layer_family mounted_family = {"mounted", mounts, (int)(sizeof mounts / sizeof mounts[0])};

/* SAM 2 key -> the mounted family's key (NULL: not a tracker key). */
static const struct { const char *from, *to; } key_roots[] = {
    {"sam_prompt_encoder.", "tracker.sam_prompt_encoder."}, {"sam_mask_decoder.", "tracker.sam_mask_decoder."},
    {"memory_attention.", "tracker.transformer.encoder."},  {"memory_encoder.", "tracker.maskmem_backbone."},
};

static char *mounted_key(const char *key)
{
    if (!strncmp(key, "image_encoder.", 14))
        return NULL;
    for (size_t i = 0; i < sizeof key_roots / sizeof key_roots[0]; i++)
        if (!strncmp(key, key_roots[i].from, strlen(key_roots[i].from)))
            return tu_strdupf("%s%s", key_roots[i].to, key + strlen(key_roots[i].from));
    return tu_strdupf("tracker.%s", key); /* SAM2Base's own parameters */
}

static void mount(const samc_sam2_model *m, mounted_model *mm)
{
    samc_error err = {0};
    samc_weights *w = samc_weights_new("mounted");
    const samc_weights *src = m->base.weights;
    int n = 0;
    for (size_t i = 0; i < samc_weights_count(src); i++) {
        char *key = mounted_key(samc_weights_key(src, i));
        const samc_tensor *t = samc_weights_at(src, i);
        if (key) /* views of the SAM 2 model's data, which outlives this store */
            assert_int_equal(samc_weights_add_view(w, key, t->ndim, t->shape, t->data, &err), SAMC_OK), n++;
        free(key);
    }
    assert_true(n > 100);
    memset(mm, 0, sizeof *mm);
    samc_model_base_init(&mm->base);
    mm->base.weights = w;
    samc_sam2_tracker_config(&m->cfg, &mm->tracker.cfg); /* its config section; its sizes come from here */
    samc_sd sd;
    samc_sd_begin(&sd, w, "", &mm->base.params);
    samc_status st = samc_sd_family(&sd, &mounted_family, mm, &err);
    if (!st) /* strict: every key the parts describe, and nothing else */
        st = samc_sd_finish(&sd, "mounted tracker", &err);
    if (st)
        print_error("%s\n", err.msg);
    assert_int_equal(st, SAMC_OK);
    samc_sd_free(&sd);
}

/* ---- the other feature source: backbone levels read from a table ------------ */

typedef struct level_table {
    int T, n;
    samc_tensor (*levels)[SAMC_FPN_MAX_LEVELS], (*pos)[SAMC_FPN_MAX_LEVELS];
    const samc_tracker_model *tracker;
} level_table;

static void fill_table(const samc_sam2_model *m, samc_frames *frames, level_table *tab)
{
    samc_exec x;
    samc_error err = {0};
    assert_int_equal(samc_sam2_exec_init(&x, (samc_sam2_model *)m, &err), SAMC_OK);
    tab->T = samc_frames_count(frames);
    tab->levels = calloc((size_t)tab->T, sizeof *tab->levels);
    tab->pos = calloc((size_t)tab->T, sizeof *tab->pos);
    for (int t = 0; t < tab->T; t++) {
        const uint8_t *rgb;
        samc_tensor img = {0};
        assert_int_equal(samc_frames_get(frames, t, &rgb, &err), SAMC_OK);
        assert_int_equal(samc_sam2_preprocess(&x, &m->transforms, &samc_no_scope, true, false, rgb,
                                              samc_frames_height(frames), samc_frames_width(frames), &img, &err),
                         SAMC_OK);
        assert_int_equal(samc_sam2_image_encoder_forward(&x, &m->image_encoder, &samc_no_scope, &img,
                                                         tab->levels[t], tab->pos[t], &tab->n, &err),
                         SAMC_OK);
        samc_tensor_release(&img);
    }
    samc_exec_free(&x);
}

static samc_status table_encode(void *user, samc_exec *x, int t, const uint8_t *rgb, int h, int w,
                                samc_frame_features *f, samc_error *err)
{
    (void)rgb;
    const level_table *tab = user;
    const samc_scope sc = {t, -1};
    samc_status st = samc_tracker_features(x, tab->tracker, &sc, tab->levels[t], tab->pos[t], tab->n, f, err);
    f->orig_h = h, f->orig_w = w;
    return st;
}

/* ---- what each run produced ------------------------------------------------- */

typedef struct record {
    char name[128];
    samc_scope sc;
    uint64_t digest;
} record;

typedef struct run_log {
    record *recs;
    int n, cap;
    float *masks;  /* every frame callback's logits, concatenated */
    size_t n_masks, cap_masks;
} run_log;

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

/* The SAM 2 name of a traced point of the mounted family. */
static void sam2_name(const char *name, char *out, size_t n)
{
    static const struct { const char *from, *to; } names[] = {
        {"tracker.sam_prompt_encoder", "sam_prompt_encoder"}, {"tracker.sam_mask_decoder", "sam_mask_decoder"},
        {"tracker.transformer.encoder", "memory_attention"},  {"tracker.maskmem_backbone", "memory_encoder"},
        {"tracker.", ""},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(name, names[i].from, strlen(names[i].from))) {
            snprintf(out, n, "%s%s", names[i].to, name + strlen(names[i].from));
            return;
        }
    snprintf(out, n, "%s", name);
}

static void on_trace(void *user, const char *module, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t)
{
    run_log *log = user;
    if (!strncmp(module, "image_encoder", 13) || !strcmp(module, "@preprocess"))
        return; /* SAM 2's own backbone: the mounted family has another source */
    if (log->n == log->cap) {
        log->cap = log->cap ? 2 * log->cap : 1024;
        log->recs = realloc(log->recs, (size_t)log->cap * sizeof *log->recs);
    }
    record *r = &log->recs[log->n++];
    sam2_name(module, r->name, sizeof r->name);
    r->sc = *sc;
    r->digest = 14695981039346656037ull;
    for (int i = 0; i < nslots; i++) {
        r->digest = fnv(slots[i], strlen(slots[i]), r->digest);
        r->digest = fnv(t[i]->data, (size_t)samc_numel(t[i]) * sizeof(float), r->digest);
    }
}

static void keep_masks(run_log *log, const samc_video_masks *m)
{
    const size_t n = (size_t)m->n_obj * m->height * m->width;
    if (log->n_masks + n > log->cap_masks) {
        log->cap_masks = 2 * (log->n_masks + n);
        log->masks = realloc(log->masks, log->cap_masks * sizeof *log->masks);
    }
    memcpy(log->masks + log->n_masks, m->logits, n * sizeof *log->masks);
    log->n_masks += n;
}

static samc_status on_frame(void *user, const samc_video_masks *m)
{
    keep_masks(user, m);
    return SAMC_OK;
}

/* Two objects (a click, a box), forward through the video, a correction
 * click, then backward. */
static void run_video(samc_exec *x, const samc_tracker_model *tr, const samc_feature_source *src, samc_frames *fr,
                      run_log *log)
{
    samc_error err = {0};
    samc_video *v = NULL;
    samc_exec_set_trace(x, on_trace, log);
    assert_int_equal(samc_video_init(x, tr, src, fr, NULL, &v, &err), SAMC_OK);
    const float pt[2] = {50, 40}, box[4] = {20, 10, 90, 70}, fix[2] = {60, 45};
    const int32_t pos[1] = {1}, neg[1] = {0};
    samc_video_masks m = {0};
    assert_int_equal(samc_video_add_points(v, 0, 1, pt, pos, 1, NULL, true, false, &m, &err), SAMC_OK);
    keep_masks(log, &m), samc_video_masks_free(&m);
    assert_int_equal(samc_video_add_points(v, 0, 2, NULL, NULL, 0, box, true, false, &m, &err), SAMC_OK);
    keep_masks(log, &m), samc_video_masks_free(&m);
    assert_int_equal(samc_video_propagate(v, -1, -1, false, on_frame, log, &err), SAMC_OK);
    const int last = samc_video_num_frames(v) - 1;
    assert_int_equal(samc_video_add_points(v, last, 1, fix, neg, 1, NULL, false, false, &m, &err), SAMC_OK);
    keep_masks(log, &m), samc_video_masks_free(&m);
    assert_int_equal(samc_video_propagate(v, last, -1, true, on_frame, log, &err), SAMC_OK);
    samc_video_free(v);
    samc_exec_set_trace(x, NULL, NULL);
}

static void test_mounted_tracker_matches_sam2(void **s)
{
    (void)s;
    samc_error err = {0};
    char *dump = tu_src_path(FIXTURE ".h5"), *dir = tu_src_path(FIXTURE "_frames");
    samc_sam2_model *m = NULL;
    assert_int_equal(samc_sam2_model_load(dump, NULL, false, &m, &err), SAMC_OK);
    mounted_model mm;
    mount(m, &mm);

    /* the SAM 2 family: its own encoder is the feature source */
    samc_exec x1, x2;
    samc_frames *f1 = NULL, *f2 = NULL, *ft = NULL;
    run_log a = {0}, b = {0};
    assert_int_equal(samc_sam2_exec_init(&x1, m, &err), SAMC_OK);
    assert_int_equal(samc_frames_open_dir(dir, &f1, &err), SAMC_OK);
    const samc_feature_source sam2_src = samc_sam2_feature_source(m);
    run_video(&x1, &m->tracker, &sam2_src, f1, &a);

    /* the mounted family: the same parts under tracker.*, levels from a table */
    level_table tab = {.tracker = &mm.tracker};
    assert_int_equal(samc_frames_open_dir(dir, &ft, &err), SAMC_OK);
    fill_table(m, ft, &tab);
    samc_frames_free(ft);
    assert_int_equal(samc_exec_init(&x2, &mounted_family, &mm, &mm.base, &err), SAMC_OK);
    assert_non_null(samc_exec_find(&x2, "tracker.transformer.encoder.layers.0"));
    assert_non_null(samc_exec_find(&x2, "tracker.maskmem_backbone.fuser.layers.0"));
    assert_non_null(samc_exec_find(&x2, "tracker.@prepare_memory_conditioned_features"));
    assert_null(samc_exec_find(&x2, "memory_attention"));
    assert_int_equal(samc_frames_open_dir(dir, &f2, &err), SAMC_OK);
    const samc_feature_source table_src = {.user = &tab, .encode = table_encode};
    run_video(&x2, &mm.tracker, &table_src, f2, &b);

    assert_true(a.n_masks > 0);
    assert_int_equal(a.n_masks, b.n_masks);
    assert_memory_equal(a.masks, b.masks, a.n_masks * sizeof(float));
    assert_true(a.n > 50);
    assert_int_equal(a.n, b.n);
    for (int i = 0; i < a.n; i++) {
        const record *p = &a.recs[i], *q = &b.recs[i];
        if (strcmp(p->name, q->name) || p->digest != q->digest || p->sc.frame_idx != q->sc.frame_idx ||
            p->sc.obj_id != q->sc.obj_id)
            print_error("record %d: SAM 2 %s (frame %d obj %d) vs mounted %s (frame %d obj %d)\n", i, p->name,
                        p->sc.frame_idx, p->sc.obj_id, q->name, q->sc.frame_idx, q->sc.obj_id);
        assert_string_equal(p->name, q->name);
        assert_true(p->digest == q->digest);
    }
    printf("mounted tracker: %zu mask logits and %d traced points bit-identical to the SAM 2 family's\n", a.n_masks,
           a.n);
    samc_exec_free(&x1), samc_exec_free(&x2);
    for (int t = 0; t < tab.T; t++)
        for (int i = 0; i < SAMC_FPN_MAX_LEVELS; i++)
            samc_tensor_release(&tab.levels[t][i]), samc_tensor_release(&tab.pos[t][i]);
    free(tab.levels), free(tab.pos), free(a.recs), free(b.recs), free(a.masks), free(b.masks);
    samc_model_base_free(&mm.base);
    samc_sam2_model_free(m);
    free(dump), free(dir);
}

/* The strict walk names a key the mounted parts do not expect. */
static void test_mounted_tracker_strict(void **s)
{
    (void)s;
    samc_error err = {0};
    char *dump = tu_src_path(FIXTURE ".h5");
    samc_sam2_model *m = NULL;
    assert_int_equal(samc_sam2_model_load(dump, NULL, false, &m, &err), SAMC_OK);
    mounted_model mm;
    memset(&mm, 0, sizeof mm);
    samc_sam2_tracker_config(&m->cfg, &mm.tracker.cfg);
    samc_sd sd; /* the SAM 2 names: every key of the mounted parts is missing */
    samc_sd_begin(&sd, m->base.weights, "", NULL);
    assert_int_equal(samc_sd_family(&sd, &mounted_family, &mm, &err), SAMC_OK);
    assert_int_not_equal(samc_sd_finish(&sd, "mounted tracker", &err), SAMC_OK);
    tu_assert_contains(err.msg, "tracker.");
    samc_sd_free(&sd);
    samc_sam2_model_free(m);
    free(dump);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mounted_tracker_matches_sam2),
        cmocka_unit_test(test_mounted_tracker_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
