/* samc.h - Segment Anything 2 in C: the public API.
 *
 * The image predictor mirrors the official SAM2ImagePredictor:
 *
 *   samc_error err = {0};
 *   samc_predictor *p;
 *   if (samc_predictor_load("sam2.1_hiera_tiny.pt", NULL, &p, &err)) { puts(err.msg); ... }
 *   samc_predictor_set_image(p, rgb, height, width, &err);      // computes the embedding once
 *   float pt[2] = {500, 375}; int32_t lab[1] = {1};
 *   samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 1,
 *                              .multimask_output = 1};
 *   samc_masks m;
 *   samc_predictor_predict(p, &rq, &m, &err);                   // any number of prompts
 *   ... m.masks[k*H*W + y*W + x] > 0 ...
 *   samc_masks_free(&m);
 *   samc_predictor_free(p);
 *
 * Every call returns SAMC_OK or a samc_status with a message in `err` that
 * names the file, key or argument at fault. Nothing here aborts on bad input.
 * A predictor is not thread-safe; use one per thread.
 */
#ifndef SAMC_H
#define SAMC_H

#include <stdint.h>

#include "samc_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samc_predictor samc_predictor;

/* Load a checkpoint: an official .pt (torch.save zip), a .safetensors file
 * or a parity dump .h5, recognised by content. `config` is a preset name
 * ("sam2.1_hiera_t", "sam2_hiera_b+", ... or "sam2.1_hiera_tiny"), a path to
 * a .json config (the YAML `model:` section as JSON), or NULL to detect the
 * preset from the weight shapes. Every key and shape is checked first. */
samc_status samc_predictor_load(const char *checkpoint, const char *config, samc_predictor **out,
                                samc_error *err);

/* Options of the *_load_ex functions; {0} gives the defaults of *_load. */
typedef struct samc_load_options {
    /* Weights holding NaN or Inf are refused at load (the message names the
     * first such key and index); 1 loads them anyway. */
    int allow_nonfinite;
} samc_load_options;

/* samc_predictor_load with options (opts may be NULL). */
samc_status samc_predictor_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                   samc_predictor **out, samc_error *err);
void samc_predictor_free(samc_predictor *p);

/* "ref" (scalar reference, the default) or "fast". */
samc_status samc_predictor_set_impl(samc_predictor *p, const char *impl, samc_error *err);
/* "LAYER=IMPL", LAYER an official module name or prefix
 * ("image_encoder.trunk.blocks.3=ref"). */
samc_status samc_predictor_override(samc_predictor *p, const char *layer_eq_impl, samc_error *err);
void samc_predictor_set_threads(samc_predictor *p, int n);
/* SAM2ImagePredictor(max_hole_area=, max_sprinkle_area=): fill background
 * holes / remove foreground specks up to this many low-res pixels (8-connected
 * components) before upsampling. 0 (the default) turns each off. */
samc_status samc_predictor_set_postprocess(samc_predictor *p, double max_hole_area, double max_sprinkle_area,
                                           samc_error *err);

/* SAM2ImagePredictor.set_image: uint8 RGB, row-major h*w*3. */
samc_status samc_predictor_set_image(samc_predictor *p, const uint8_t *rgb, int h, int w, samc_error *err);

typedef struct samc_predict_request {
    const float *point_coords;   /* n_points*(x,y) in image pixels, or NULL */
    const int32_t *point_labels; /* n_points labels: 1 foreground, 0 background (-1..3 allowed) */
    int n_points;
    const float *box;            /* x0,y0,x1,y1 in image pixels, or NULL */
    const float *mask_input;     /* low-res logits (S/4 x S/4, e.g. 256x256), or NULL */
    int multimask_output;        /* 1: three masks (official default), 0: one */
    int return_logits;           /* 1: masks hold logits; 0: masks hold 0/1 (logit > 0) */
} samc_predict_request;

typedef struct samc_masks {
    int num_masks;               /* 3 with multimask_output, else 1 */
    int height, width;           /* the image size */
    int low_res_size;            /* S/4 */
    float *masks;                /* num_masks*height*width */
    float *iou;                  /* num_masks predicted IoUs */
    float *low_res;              /* num_masks*low_res_size^2 logits, clamped to [-32,32] */
    float object_score;          /* object-score logit (not used by the image predictor) */
} samc_masks;

samc_status samc_predictor_predict(samc_predictor *p, const samc_predict_request *rq, samc_masks *out,
                                   samc_error *err);
void samc_masks_free(samc_masks *m);

/* The image embedding of the current image (C x H x W), owned by p. */
samc_status samc_predictor_get_embedding(const samc_predictor *p, const float **data, int *c, int *h, int *w,
                                         samc_error *err);
/* Side of the low-res mask grid (mask_input must be this squared). */
int samc_predictor_low_res_size(const samc_predictor *p);
/* Name of the resolved config ("sam2.1_hiera_t", or the json file name). */
const char *samc_predictor_config_name(const samc_predictor *p);

/* ---- video: SAM2VideoPredictor -------------------------------------------
 *
 *   samc_tracker *t;
 *   samc_tracker_load("sam2.1_hiera_tiny.pt", NULL, &t, &err);
 *   samc_tracker_open_frames_dir(t, "video_frames/", &err);   // 00000.jpg, 00001.jpg, ...
 *   float pt[2] = {210, 350}; int32_t lab[1] = {1};
 *   samc_tracker_add_points(t, 0, 1, pt, lab, 1, NULL, 1, NULL, &err);  // frame 0, object 1
 *   samc_tracker_propagate(t, -1, -1, 0, on_frame, user, &err);   // on_frame gets every frame's masks
 *   samc_tracker_free(t);
 *
 * Objects are identified by caller-chosen integer ids and tracked
 * independently; prompts may be added on any frame, also after tracking. */

typedef struct samc_tracker samc_tracker;

typedef struct samc_frame_masks {
    int frame_idx;
    int n_obj;
    int height, width;           /* the video resolution */
    const int *obj_ids;          /* n_obj */
    const float *logits;         /* n_obj * height * width mask logits (> 0: object) */
    const float *object_scores;  /* n_obj object-score logits (<= 0: object absent) */
} samc_frame_masks;

typedef samc_status (*samc_frame_masks_cb)(void *user, const samc_frame_masks *masks);

samc_status samc_tracker_load(const char *checkpoint, const char *config, samc_tracker **out, samc_error *err);
/* samc_tracker_load with options (opts may be NULL). */
samc_status samc_tracker_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                 samc_tracker **out, samc_error *err);
void samc_tracker_free(samc_tracker *t);
samc_status samc_tracker_set_impl(samc_tracker *t, const char *impl, samc_error *err);
samc_status samc_tracker_override(samc_tracker *t, const char *layer_eq_impl, samc_error *err);
/* SAM2VideoPredictor options: fill_hole_area (8 by default as
 * build_sam2_video_predictor; 0 turns it off) and non_overlap_masks (0). Set
 * before opening frames. */
samc_status samc_tracker_set_options(samc_tracker *t, double fill_hole_area, int non_overlap_masks, samc_error *err);

/* init_state: a directory of JPEG frames named by number, or frames in
 * memory (T * h * w * 3 RGB, copied). Replaces any previous video. */
samc_status samc_tracker_open_frames_dir(samc_tracker *t, const char *dir, samc_error *err);
samc_status samc_tracker_open_frames(samc_tracker *t, const uint8_t *rgb, int T, int h, int w, samc_error *err);

/* Streaming (camera-like): open with the first frame, push the following ones
 * and propagate each new frame t with samc_tracker_propagate(t, t, 0, 0, ...).
 * Only what the memory bank can still read is kept, so memory stays flat
 * however long the stream runs; prompts go on frames not yet released. */
samc_status samc_tracker_open_stream(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err);
samc_status samc_tracker_push_frame(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err);

/* add_new_points_or_box on frame `frame` for object `obj_id`: n points
 * (x,y in video pixels) with labels (1 fg, 0 bg), and/or a box (x0,y0,x1,y1;
 * requires clear_old_points). `out` (may be NULL) receives the masks of all
 * objects on that frame; they stay valid until the next call on t. */
samc_status samc_tracker_add_points(samc_tracker *t, int frame, int obj_id, const float *points, const int32_t *labels,
                                    int n, const float *box, int clear_old_points, samc_frame_masks *out,
                                    samc_error *err);
/* add_new_mask: mask h x w, nonzero = object (resized to the model input). */
samc_status samc_tracker_add_mask(samc_tracker *t, int frame, int obj_id, const float *mask, int h, int w,
                                  samc_frame_masks *out, samc_error *err);
/* propagate_in_video: from `start` (< 0: the first prompted frame), at most
 * max_frames frames (< 0: all), forward or reverse; `cb` per frame. */
samc_status samc_tracker_propagate(samc_tracker *t, int start, int max_frames, int reverse, samc_frame_masks_cb cb,
                                   void *user, samc_error *err);
samc_status samc_tracker_clear_frame(samc_tracker *t, int frame, int obj_id, samc_error *err);
samc_status samc_tracker_remove_object(samc_tracker *t, int obj_id, samc_error *err);
void samc_tracker_reset(samc_tracker *t);
int samc_tracker_num_frames(const samc_tracker *t);
/* Per-frame outputs the tracker currently stores over all objects (its
 * memory-bank size; bounded when streaming). */
int samc_tracker_stored_outputs(const samc_tracker *t);

#ifdef __cplusplus
}
#endif
#endif
