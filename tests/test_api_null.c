/* SPDX-License-Identifier: Apache-2.0 */
/* test_api_null.c - every function of the installed headers (include/samc*.h)
 * called with NULL pointers, in a child process each:
 *   - twice: every pointer NULL, then with live handles (a model, a
 *     predictor, a tracker, a SAM 3 processor) and every other pointer NULL,
 *     so that a check of the handle cannot hide an unchecked output;
 *   - the error record holds a stale failure before each call: a
 *     samc_status function must return an error, clear the stale message and
 *     write its own naming the argument; void and value functions must
 *     simply not crash.
 * tests/check_api_null.sh checks that every function the headers declare
 * has a row in CALLS below (a new public function without one fails CI).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "samc.h"
#include "samc_amg.h"
#include "samc_sam3.h"
#include "samc_video.h"
#include "util/testutil.h"

static samc_model *g_model, *g_model3;
static samc_predictor *g_pred;
static samc_tracker *g_trk;
static samc_sam3_processor *g_s3;
static samc_sam3_tracker *g_s3t;
static samc_embedding *g_emb;
static samc_video_reader *g_vr;
static int g_live; /* 0: every pointer NULL; 1: handles live */

#define P (g_live ? g_pred : NULL)
#define T (g_live ? g_trk : NULL)
#define M (g_live ? g_model : NULL)
#define S3 (g_live ? g_s3 : NULL)
#define S3T (g_live ? g_s3t : NULL)
#define EMB (g_live ? g_emb : NULL)
#define VR (g_live ? g_vr : NULL)

typedef struct call {
    const char *name;
    samc_status (*fn)(samc_error *e); /* status calls */
    void (*vfn)(void);                /* void / value calls */
    int may_succeed;                  /* with live handles the arguments are valid (NULL: a default) */
} call;

#define STATUS(name, expr)                                                                                         \
    static samc_status c_##name(samc_error *e)                                                                    \
    {                                                                                                              \
        (void)e;                                                                                                   \
        return expr;                                                                                               \
    }
#define VALUE(name, expr)                                                                                          \
    static void v_##name(void) { (void)(expr); }

STATUS(samc_model_load, samc_model_load(NULL, NULL, NULL, e))
STATUS(samc_read_image, samc_read_image(NULL, NULL, NULL, NULL, e))
STATUS(samc_write_png, samc_write_png(NULL, NULL, 1, 1, 3, e))
STATUS(samc_predictor_new, samc_predictor_new(M, NULL, NULL, e))
STATUS(samc_predictor_load, samc_predictor_load(NULL, NULL, NULL, e))
STATUS(samc_predictor_load_ex, samc_predictor_load_ex(NULL, NULL, NULL, NULL, e))
STATUS(samc_predictor_set_impl, samc_predictor_set_impl(P, NULL, e))
STATUS(samc_predictor_override, samc_predictor_override(P, NULL, e))
STATUS(samc_predictor_set_postprocess, samc_predictor_set_postprocess(P, -1, -1, e))
STATUS(samc_predictor_set_image, samc_predictor_set_image(P, NULL, 4, 4, e))
STATUS(samc_predictor_predict, samc_predictor_predict(P, NULL, NULL, e))
STATUS(samc_predictor_get_embedding, samc_predictor_get_embedding(P, NULL, NULL, NULL, NULL, e))
STATUS(samc_tracker_new, samc_tracker_new(M, NULL, NULL, e))
STATUS(samc_tracker_load, samc_tracker_load(NULL, NULL, NULL, e))
STATUS(samc_tracker_load_ex, samc_tracker_load_ex(NULL, NULL, NULL, NULL, e))
STATUS(samc_tracker_set_impl, samc_tracker_set_impl(T, NULL, e))
STATUS(samc_tracker_override, samc_tracker_override(T, NULL, e))
STATUS(samc_tracker_set_options, samc_tracker_set_options(T, -1, 0, e))
STATUS(samc_tracker_open_frames_dir, samc_tracker_open_frames_dir(T, NULL, e))
STATUS(samc_tracker_open_frames, samc_tracker_open_frames(T, NULL, 1, 4, 4, e))
STATUS(samc_tracker_open_stream, samc_tracker_open_stream(T, NULL, 4, 4, e))
STATUS(samc_tracker_push_frame, samc_tracker_push_frame(T, NULL, 4, 4, e))
STATUS(samc_tracker_add_points, samc_tracker_add_points(T, 0, 1, NULL, NULL, 1, NULL, 1, NULL, e))
STATUS(samc_tracker_add_points_normalized, samc_tracker_add_points_normalized(T, 0, 1, NULL, NULL, 1, NULL, 1, NULL, e))
STATUS(samc_tracker_add_mask, samc_tracker_add_mask(T, 0, 1, NULL, 4, 4, NULL, e))
STATUS(samc_tracker_propagate, samc_tracker_propagate(T, 0, 1, 0, NULL, NULL, e))
STATUS(samc_tracker_clear_frame, samc_tracker_clear_frame(T, 0, 1, e))
STATUS(samc_tracker_remove_object, samc_tracker_remove_object(T, 1, e))
STATUS(samc_tracker_reset, samc_tracker_reset(T, e))
STATUS(samc_predictor_predict_batch, samc_predictor_predict_batch(P, NULL, NULL, e))
STATUS(samc_image_batch_set, samc_image_batch_set(P, 1, NULL, NULL, NULL, NULL, e))
STATUS(samc_image_batch_predict, samc_image_batch_predict(P, NULL, 0, NULL, NULL, e))
STATUS(samc_amg_output_mode_parse, samc_amg_output_mode_parse(NULL, NULL, e))
STATUS(samc_amg_generate_masks, samc_amg_generate_masks(P, NULL, 4, 4, NULL, NULL, NULL, NULL, e))
STATUS(samc_amg_postprocess_small_regions, samc_amg_postprocess_small_regions(NULL, 1, 0.5, e))
STATUS(samc_amg_to_json, samc_amg_to_json(NULL, NULL, e))
STATUS(samc_amg_write_json, samc_amg_write_json(NULL, NULL, e))
STATUS(samc_mask_to_coco_rle, samc_mask_to_coco_rle(NULL, 4, 4, NULL, e))
STATUS(samc_sam3_processor_new, samc_sam3_processor_new(g_live ? g_model3 : NULL, NULL, NULL, e))
STATUS(samc_sam3_processor_override, samc_sam3_processor_override(S3, NULL, e))
STATUS(samc_sam3_processor_set_image, samc_sam3_processor_set_image(S3, NULL, 4, 4, e))
STATUS(samc_sam3_processor_set_text, samc_sam3_processor_set_text(S3, NULL, e))
STATUS(samc_sam3_processor_add_box, samc_sam3_processor_add_box(S3, NULL, true, e))
STATUS(samc_sam3_processor_set_threshold, samc_sam3_processor_set_threshold(S3, 0.5f, e))
STATUS(samc_sam3_processor_results, samc_sam3_processor_results(S3, NULL, e))
STATUS(samc_sam3_processor_embed, samc_sam3_processor_embed(S3, NULL, 4, 4, NULL, e))
STATUS(samc_sam3_processor_use_embedding, samc_sam3_processor_use_embedding(S3, NULL, e))
STATUS(samc_sam3_processor_predict_inst, samc_sam3_processor_predict_inst(S3, NULL, NULL, e))
STATUS(samc_sam3_tracker_new, samc_sam3_tracker_new(g_live ? g_model3 : NULL, NULL, NULL, NULL, e))
STATUS(samc_sam3_tracker_new_frames,
       samc_sam3_tracker_new_frames(g_live ? g_model3 : NULL, NULL, NULL, 2, 16, 16, NULL, e))
STATUS(samc_sam3_tracker_add_prompt, samc_sam3_tracker_add_prompt(S3T, 0, NULL, NULL, 1, NULL, NULL, e))
STATUS(samc_sam3_tracker_add_points, samc_sam3_tracker_add_points(S3T, 0, 1, NULL, NULL, 1, NULL, NULL, e))
STATUS(samc_sam3_tracker_propagate, samc_sam3_tracker_propagate(S3T, SAMC_SAM3_FORWARD, -1, -1, NULL, NULL, e))
STATUS(samc_sam3_tracker_remove_object, samc_sam3_tracker_remove_object(S3T, 7, e))
STATUS(samc_decode_image, samc_decode_image(NULL, 4, NULL, NULL, NULL, NULL, e))
STATUS(samc_probe_image, samc_probe_image(NULL, 4, NULL, NULL, NULL, e))
STATUS(samc_encode_png, samc_encode_png(NULL, 1, 1, 3, NULL, NULL, e))
STATUS(samc_write_palette_png, samc_write_palette_png(NULL, NULL, 1, 1, NULL, 2, e))
STATUS(samc_mask_rle_encode, samc_mask_rle_encode(NULL, 4, 4, NULL, e))
STATUS(samc_mask_rle_encode_logits, samc_mask_rle_encode_logits(NULL, 4, 4, 0.0, NULL, e))
STATUS(samc_predictor_embed, samc_predictor_embed(P, NULL, 4, 4, NULL, e))
STATUS(samc_predictor_predict_on, samc_predictor_predict_on(P, EMB, NULL, NULL, e))
STATUS(samc_tracker_open_video, samc_tracker_open_video(T, NULL, e))
STATUS(samc_tracker_open_video_memory, samc_tracker_open_video_memory(T, NULL, 4, e))
STATUS(samc_tracker_video_info, samc_tracker_video_info(T, NULL, e))
STATUS(samc_video_reader_open, samc_video_reader_open(NULL, NULL, e))
STATUS(samc_video_reader_open_memory, samc_video_reader_open_memory(NULL, 4, NULL, NULL, e))
STATUS(samc_video_reader_open_frames, samc_video_reader_open_frames(NULL, 1, 4, 4, NULL, e))
STATUS(samc_video_reader_info, samc_video_reader_info(VR, NULL, e))
STATUS(samc_video_reader_frame, samc_video_reader_frame(VR, 0, NULL, e))
STATUS(samc_video_writer_open, samc_video_writer_open(NULL, 4, 4, 30.0, NULL, e))
STATUS(samc_video_writer_add, samc_video_writer_add(NULL, NULL, e))
STATUS(samc_video_writer_close, samc_video_writer_close(NULL, e))

VALUE(samc_version, samc_version())
VALUE(samc_log_set, (samc_log_set(NULL, NULL), 0))
VALUE(samc_log_set_level, (samc_log_set_level(samc_log_get_level()), 0))
VALUE(samc_log_get_level, samc_log_get_level())
VALUE(samc_model_default_params, samc_model_default_params().config)
VALUE(samc_model_free, (samc_model_free(NULL), 0))
VALUE(samc_model_family, samc_model_family(M))
VALUE(samc_family_name, samc_family_name((samc_family)-1))
VALUE(samc_model_config_name, samc_model_config_name(M))
VALUE(samc_model_image_size, samc_model_image_size(M))
VALUE(samc_default_impl, samc_default_impl())
VALUE(samc_set_image_pixel_limit, samc_set_image_pixel_limit(0))
VALUE(samc_free, (samc_free(NULL), 0))
VALUE(samc_predictor_default_params, samc_predictor_default_params().impl)
VALUE(samc_predictor_free, (samc_predictor_free(NULL), 0))
VALUE(samc_predictor_impl, samc_predictor_impl(P))
VALUE(samc_predictor_threads, samc_predictor_threads(P))
VALUE(samc_predictor_model, samc_predictor_model(P))
VALUE(samc_predictor_set_threads, (samc_predictor_set_threads(P, 1 << 30), 0))
VALUE(samc_masks_free, (samc_masks_free(NULL), 0))
VALUE(samc_predictor_low_res_size, samc_predictor_low_res_size(P))
VALUE(samc_predictor_config_name, samc_predictor_config_name(P))
VALUE(samc_tracker_default_params, samc_tracker_default_params().impl)
VALUE(samc_tracker_free, (samc_tracker_free(NULL), 0))
VALUE(samc_tracker_impl, samc_tracker_impl(T))
VALUE(samc_tracker_threads, samc_tracker_threads(T))
VALUE(samc_tracker_set_threads, (samc_tracker_set_threads(T, -5), 0))
VALUE(samc_tracker_num_frames, samc_tracker_num_frames(T))
VALUE(samc_tracker_frame_path, samc_tracker_frame_path(T, 1 << 30))
VALUE(samc_tracker_stored_outputs, samc_tracker_stored_outputs(T))
VALUE(samc_batch_masks_free, (samc_batch_masks_free(NULL), 0))
VALUE(samc_image_batch_count, samc_image_batch_count(NULL))
VALUE(samc_image_batch_free, (samc_image_batch_free(NULL), 0))
VALUE(samc_amg_default_params, samc_amg_default_params().points_per_side)
VALUE(samc_amg_result_free, (samc_amg_result_free(NULL), 0))
VALUE(samc_sam3_processor_default_params, samc_sam3_processor_default_params().impl)
VALUE(samc_sam3_processor_free, (samc_sam3_processor_free(NULL), 0))
VALUE(samc_sam3_processor_impl, samc_sam3_processor_impl(S3))
VALUE(samc_sam3_processor_threads, samc_sam3_processor_threads(S3))
VALUE(samc_sam3_processor_reset, (samc_sam3_processor_reset(g_live ? NULL : S3), 0))
VALUE(samc_sam3_processor_low_res_size, samc_sam3_processor_low_res_size(S3))
VALUE(samc_sam3_tracker_default_params, samc_sam3_tracker_default_params().impl)
VALUE(samc_sam3_tracker_free, (samc_sam3_tracker_free(NULL), 0))
VALUE(samc_sam3_tracker_num_frames, samc_sam3_tracker_num_frames(S3T))
VALUE(samc_sam3_tracker_height, samc_sam3_tracker_height(S3T))
VALUE(samc_sam3_tracker_width, samc_sam3_tracker_width(S3T))
VALUE(samc_sam3_tracker_frame_path, samc_sam3_tracker_frame_path(S3T, 1 << 30))
VALUE(samc_sam3_tracker_impl, samc_sam3_tracker_impl(S3T))
VALUE(samc_sam3_tracker_threads, samc_sam3_tracker_threads(S3T))
VALUE(samc_sam3_tracker_reset, (samc_sam3_tracker_reset(g_live ? NULL : S3T), 0))
VALUE(samc_status_name, samc_status_name((samc_status)-7))
VALUE(samc_embedding_free, (samc_embedding_free(NULL), 0))
VALUE(samc_embedding_bytes, samc_embedding_bytes(EMB))
VALUE(samc_embedding_height, samc_embedding_height(EMB))
VALUE(samc_embedding_width, samc_embedding_width(EMB))
VALUE(samc_embedding_model, samc_embedding_model(EMB))
VALUE(samc_mask_rle_free, (samc_mask_rle_free(NULL), 0))
VALUE(samc_stability_score, samc_stability_score(NULL, 4, 4, 0.0, 1.0))
VALUE(samc_video_reader_free, (samc_video_reader_free(NULL), 0))
VALUE(samc_video_writer_abort, (samc_video_writer_abort(NULL), 0))
VALUE(samc_system_info, samc_system_info())
VALUE(samc_predictor_set_abort_callback, (samc_predictor_set_abort_callback(P, NULL, NULL), 0))
VALUE(samc_tracker_set_abort_callback, (samc_tracker_set_abort_callback(T, NULL, NULL), 0))
VALUE(samc_sam3_processor_set_abort_callback, (samc_sam3_processor_set_abort_callback(S3, NULL, NULL), 0))

#define S(name) {#name, c_##name, NULL, 0}
#define S_OK_LIVE(name) {#name, c_##name, NULL, 1}
#define V(name) {#name, NULL, v_##name, 0}
static const call CALLS[] = {
    S(samc_model_load), S(samc_read_image), S(samc_write_png), S(samc_predictor_new), S(samc_predictor_load),
    S(samc_predictor_load_ex), S_OK_LIVE(samc_predictor_set_impl), S(samc_predictor_override),
    S(samc_predictor_set_postprocess), S(samc_predictor_set_image), S(samc_predictor_predict),
    S(samc_predictor_get_embedding), S(samc_tracker_new), S(samc_tracker_load), S(samc_tracker_load_ex),
    S_OK_LIVE(samc_tracker_set_impl), S(samc_tracker_override), S(samc_tracker_set_options), S(samc_tracker_open_frames_dir),
    S(samc_tracker_open_frames), S(samc_tracker_open_stream), S(samc_tracker_push_frame), S(samc_tracker_add_points), S(samc_tracker_add_points_normalized),
    S(samc_tracker_add_mask), S(samc_tracker_propagate), S(samc_tracker_clear_frame), S(samc_tracker_remove_object),
    S_OK_LIVE(samc_tracker_reset), S(samc_predictor_predict_batch), S(samc_image_batch_set), S(samc_image_batch_predict),
    S(samc_amg_output_mode_parse), S(samc_amg_generate_masks), S(samc_amg_postprocess_small_regions),
    S(samc_amg_to_json), S(samc_amg_write_json), S(samc_mask_to_coco_rle), S(samc_sam3_processor_new), S(samc_sam3_processor_override),
    S(samc_sam3_processor_set_image), S(samc_sam3_processor_set_text), S(samc_sam3_processor_add_box),
    S_OK_LIVE(samc_sam3_processor_set_threshold), S(samc_sam3_processor_results), S(samc_sam3_processor_embed),
    S(samc_sam3_processor_use_embedding), S(samc_sam3_processor_predict_inst), S(samc_sam3_tracker_new),
    S(samc_sam3_tracker_new_frames), S(samc_sam3_tracker_add_prompt), S(samc_sam3_tracker_add_points),
    S(samc_sam3_tracker_propagate), S(samc_sam3_tracker_remove_object), S(samc_decode_image), S(samc_probe_image), S(samc_encode_png),
    S(samc_write_palette_png), S(samc_mask_rle_encode), S(samc_mask_rle_encode_logits), S(samc_predictor_embed),
    S(samc_predictor_predict_on), S(samc_tracker_open_video), S(samc_tracker_open_video_memory),
    S(samc_tracker_video_info), S(samc_video_reader_open), S(samc_video_reader_open_memory),
    S(samc_video_reader_open_frames), S(samc_video_reader_info), S(samc_video_reader_frame),
    S(samc_video_writer_open), S(samc_video_writer_add), S(samc_video_writer_close),
    V(samc_version), V(samc_log_set), V(samc_log_set_level), V(samc_log_get_level), V(samc_model_default_params),
    V(samc_model_free), V(samc_model_family), V(samc_family_name), V(samc_model_config_name),
    V(samc_model_image_size), V(samc_default_impl), V(samc_set_image_pixel_limit), V(samc_free),
    V(samc_predictor_default_params), V(samc_predictor_free), V(samc_predictor_impl), V(samc_predictor_threads),
    V(samc_predictor_model), V(samc_predictor_set_threads), V(samc_masks_free), V(samc_predictor_low_res_size),
    V(samc_predictor_config_name), V(samc_tracker_default_params), V(samc_tracker_free), V(samc_tracker_impl),
    V(samc_tracker_threads), V(samc_tracker_set_threads), V(samc_tracker_num_frames), V(samc_tracker_frame_path),
    V(samc_tracker_stored_outputs), V(samc_batch_masks_free), V(samc_image_batch_count), V(samc_image_batch_free),
    V(samc_amg_default_params), V(samc_amg_result_free), V(samc_sam3_processor_default_params),
    V(samc_sam3_processor_free), V(samc_sam3_processor_impl), V(samc_sam3_processor_threads),
    V(samc_sam3_processor_reset), V(samc_status_name), V(samc_embedding_free), V(samc_embedding_bytes),
    V(samc_embedding_height), V(samc_embedding_width), V(samc_embedding_model), V(samc_mask_rle_free),
    V(samc_stability_score), V(samc_video_reader_free), V(samc_video_writer_abort), V(samc_system_info),
    V(samc_predictor_set_abort_callback), V(samc_tracker_set_abort_callback),
    V(samc_sam3_processor_set_abort_callback), V(samc_sam3_processor_low_res_size), V(samc_sam3_tracker_default_params), V(samc_sam3_tracker_free),
    V(samc_sam3_tracker_num_frames), V(samc_sam3_tracker_height), V(samc_sam3_tracker_width),
    V(samc_sam3_tracker_frame_path), V(samc_sam3_tracker_impl), V(samc_sam3_tracker_threads),
    V(samc_sam3_tracker_reset),
};

#define STALE "stale message of an earlier call"

/* 0 when the call behaved; the child reports a wrong status or message. */
static int run_one(const call *c)
{
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        if (c->vfn) {
            c->vfn();
            _exit(0);
        }
        samc_error e = {SAMC_ERR_IO, STALE};
        const samc_status st = c->fn(&e);
        if (st == SAMC_OK && g_live && c->may_succeed)
            _exit(e.status == SAMC_OK && !e.msg[0] ? 0 : 5); /* succeeded: the stale record was cleared */
        if (st == SAMC_OK || e.status != st || !e.msg[0] || strstr(e.msg, STALE)) {
            fprintf(stderr, "  %s (%s): status %d, record %d \"%s\"\n", c->name, g_live ? "live handles" : "all NULL",
                    (int)st, (int)e.status, e.msg);
            _exit(3);
        }
        /* and with no error record at all */
        if (c->fn(NULL) == SAMC_OK && !(g_live && c->may_succeed))
            _exit(4);
        _exit(0);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (WIFSIGNALED(ws))
        fprintf(stderr, "  %s (%s): killed by signal %d\n", c->name, g_live ? "live handles" : "all NULL",
                WTERMSIG(ws));
    return !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

/* A live embedding (the tiny encoder on a gray image) and a live video
 * reader over two in-memory frames, for the rows that take them. */
static samc_status setup_embedding_and_reader(samc_error *e)
{
    static uint8_t rgb[2 * 16 * 16 * 3];
    memset(rgb, 128, sizeof rgb);
    samc_status st = samc_predictor_embed(g_pred, rgb, 16, 16, &g_emb, e);
    if (!st) /* a SAM 3 video session on the same two frames (sam3.pt's layout: its tracker half) */
        st = samc_sam3_tracker_new_frames(g_model3, NULL, rgb, 2, 16, 16, &g_s3t, e);
    return st ? st : samc_video_reader_open_frames(rgb, 2, 16, 16, &g_vr, e);
}

int main(void)
{
    char *ck = tu_src_path("fixtures/ckpt/tiny_c_f32.pt"), *cfg = tu_src_path("fixtures/ckpt/tiny_c_f32.config.json");
    char *vd = tu_src_path("fixtures/video/tiny_v1_sam21_s128.h5");
    char *ck3 = tu_src_path("fixtures/sam3/tiny_s2_sam3.pt"), *cfg3 = tu_src_path("fixtures/sam3/tiny_s2_sam3.config.json");
    char *voc = tu_src_path("tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz");
    samc_error e = {0};
    samc_model_params mp = samc_model_default_params();
    mp.config = cfg;
    samc_model_params mp3 = samc_model_default_params();
    mp3.config = cfg3, mp3.vocab = voc;
    if (samc_model_load(ck, &mp, &g_model, &e) || samc_predictor_new(g_model, NULL, &g_pred, &e) ||
        samc_tracker_load(vd, vd, &g_trk, &e) || samc_model_load(ck3, &mp3, &g_model3, &e) ||
        samc_sam3_processor_new(g_model3, NULL, &g_s3, &e) || setup_embedding_and_reader(&e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        return 1;
    }
    int bad = 0;
    const int n = (int)(sizeof CALLS / sizeof CALLS[0]);
    for (g_live = 0; g_live < 2; g_live++)
        for (int i = 0; i < n; i++)
            bad += run_one(&CALLS[i]);
    samc_video_reader_free(g_vr);
    samc_embedding_free(g_emb);
    samc_sam3_tracker_free(g_s3t);
    samc_sam3_processor_free(g_s3);
    samc_model_free(g_model3);
    samc_tracker_free(g_trk);
    samc_predictor_free(g_pred);
    samc_model_free(g_model);
    free(ck), free(cfg), free(vd), free(ck3), free(cfg3), free(voc);
    printf("%d functions, %d passed, %d failed\n", n, 2 * n - bad, bad);
    return bad != 0;
}
