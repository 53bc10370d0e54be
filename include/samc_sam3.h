/* SPDX-License-Identifier: Apache-2.0 */
/* samc_sam3.h - SAM 3 image segmentation by concept (facebookresearch/sam3,
 * Sam3Processor): every instance of what a short text and/or example boxes
 * describe, with a mask, a box and a score each.
 *
 * The model is the samc_model of samc.h (one load, either family: a SAM 3
 * checkpoint is recognised by its keys), shared read-only by any number of
 * processors, each used by one thread at a time:
 *
 *   samc_model_params mp = samc_model_default_params();
 *   mp.vocab = "bpe_simple_vocab_16e6.txt.gz";  // the tokenizer's vocabulary
 *   samc_model *m;
 *   samc_model_load("sam3.pt", &mp, &m, &err);
 *   samc_sam3_processor *p;
 *   samc_sam3_processor_new(m, NULL, &p, &err);   // impl "fast", threshold 0.5
 *   samc_sam3_processor_set_image(p, rgb, h, w, &err);
 *   samc_sam3_processor_set_text(p, "a dog", &err);            // runs the detector
 *   samc_sam3_processor_add_box(p, (float[]){.5f, .5f, .2f, .3f}, true, &err);
 *   samc_sam3_results r;  samc_sam3_processor_results(p, &r, &err);
 *
 * As the official processor: set_text and add_box each run the detector
 * on the prompt so far (add_box without a text uses the text "visual");
 * reset clears the text and the boxes; set_threshold re-runs the last
 * prompt; scores are sigmoid(logit) * sigmoid(presence), kept when above
 * the threshold (0.5 by default), boxes are x0, y0, x1, y1 in pixels of the
 * original image (not clipped), masks are probabilities at the original
 * size (> 0.5 is the mask). Every call clears `err` on entry, refuses NULL
 * handles with a status, and never aborts on bad input.
 */
#ifndef SAMC_SAM3_H
#define SAMC_SAM3_H

#include <stdbool.h>
#include <stdint.h>

#include "samc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samc_sam3_processor samc_sam3_processor;

typedef struct samc_sam3_processor_params {
    const char *impl;          /* NULL: samc_default_impl() ("fast"); "ref", ... */
    int n_threads;             /* 0..SAMC_MAX_THREADS; 0: OpenMP's default (capped); ref runs on one */
    float threshold;           /* Sam3Processor's confidence_threshold, in [0, 1] (0.5) */
    samc_progress_fn progress; /* set_image: "encode", one step per ViT block; NULL: none */
    void *progress_user;
    samc_abort_fn abort_callback; /* samc.h; NULL: calls run to the end */
    void *abort_user;
} samc_sam3_processor_params;

SAMC_API samc_sam3_processor_params samc_sam3_processor_default_params(void);

/* A processor on `model` (which must outlive it), a SAM 3 model (a SAM 2 one
 * is refused: samc_predictor_new). params NULL: the defaults. */
SAMC_API samc_status samc_sam3_processor_new(const samc_model *model, const samc_sam3_processor_params *params,
                                    samc_sam3_processor **out, samc_error *err);
SAMC_API void samc_sam3_processor_free(samc_sam3_processor *p);
/* The implementation it runs ("fast") and the threads it uses; "" / 0 for NULL. */
SAMC_API const char *samc_sam3_processor_impl(const samc_sam3_processor *p);
SAMC_API int samc_sam3_processor_threads(const samc_sam3_processor *p);
/* Run one layer with another implementation ("LAYER=IMPL", names as
 * `samc info CKPT --layers` lists them). */
SAMC_API samc_status samc_sam3_processor_override(samc_sam3_processor *p, const char *spec, samc_error *err);
/* Replace the abort callback of the params (NULL: none). */
SAMC_API void samc_sam3_processor_set_abort_callback(samc_sam3_processor *p, samc_abort_fn fn, void *user);

/* rgb: h x w x 3, row-major. Clears the prompt and results. */
SAMC_API samc_status samc_sam3_processor_set_image(samc_sam3_processor *p, const uint8_t *rgb, int h, int w,
                                          samc_error *err);
/* The image features set_image computes, kept apart from the processor
 * (samc_embedding of samc.h): made once per image, used by any processor
 * of the same model. samc_sam3_processor_use_embedding is set_image on
 * them: it clears the prompt and results, and reads `e` (not copied) until
 * the next set_image, use_embedding or free of p; `e` must outlive that. */
SAMC_API samc_status samc_sam3_processor_embed(samc_sam3_processor *p, const uint8_t *rgb, int h, int w, samc_embedding **out,
                                      samc_error *err);
SAMC_API samc_status samc_sam3_processor_use_embedding(samc_sam3_processor *p, const samc_embedding *e, samc_error *err);
/* A non-empty UTF-8 text (longer than the context: truncated as the
 * official tokenizer does, with a warning through the log). */
SAMC_API samc_status samc_sam3_processor_set_text(samc_sam3_processor *p, const char *text, samc_error *err);
/* box: centre x, centre y, width, height, normalised to [0, 1] by the image
 * size; the centre must lie in the image and the size be positive. */
SAMC_API samc_status samc_sam3_processor_add_box(samc_sam3_processor *p, const float box[4], bool positive,
                                        samc_error *err);
SAMC_API void samc_sam3_processor_reset(samc_sam3_processor *p);
SAMC_API samc_status samc_sam3_processor_set_threshold(samc_sam3_processor *p, float threshold, samc_error *err);

typedef struct samc_sam3_results {
    int n;                 /* instances kept */
    int h, w;              /* the original image size */
    const float *scores;   /* n */
    const float *boxes;    /* n x 4: x0, y0, x1, y1 in pixels */
    const float *masks;    /* n x h x w probabilities */
} samc_sam3_results;

/* The last prompt's results (valid until the next call on p). */
SAMC_API samc_status samc_sam3_processor_results(const samc_sam3_processor *p, samc_sam3_results *out, samc_error *err);

/* ---- clicks on the image: Sam3Image.predict_inst (the SAM 1 task) -----
 * Points, a box and/or a low-res mask on the processor's image, through the
 * tracker's SAM heads (a model loaded with its tracker half, as sam3.pt is;
 * SAMC_ERR_UNSUPPORTED otherwise), holes of up to 256 pixels filled as
 * SAM3InteractiveImagePredictor does. The request and the result are
 * samc_predictor_predict's (samc.h): points and box in image pixels,
 * mask_input (4 R/14)^2 logits (288 x 288 at the released 1008). */
SAMC_API samc_status samc_sam3_processor_predict_inst(samc_sam3_processor *p, const samc_predict_request *rq,
                                                      samc_masks *out, samc_error *err);
/* Side of predict_inst's low-res masks (mask_input is this squared); 0 for
 * NULL or a model without its tracker half. */
SAMC_API int samc_sam3_processor_low_res_size(const samc_sam3_processor *p);

/* ---- video: concept tracking (Sam3VideoPredictor) ---------------------
 * A session over one video's frames: a text (and/or one example box)
 * detects every instance on a frame, propagation tracks them through the
 * video with the official detector-tracker loop (new objects appear,
 * duplicates and lost objects are removed), clicks add or refine one
 * object. Object ids are stable for the session and never reused.
 *
 *   samc_sam3_tracker *t;
 *   samc_sam3_tracker_new(m, NULL, "frames/", &t, &err);  // a model with its tracker half
 *   samc_sam3_tracker_add_prompt(t, 0, "a dog", NULL, 1, on_frame, user, &err);
 *   samc_sam3_tracker_propagate(t, SAMC_SAM3_FORWARD, -1, -1, on_frame, user, &err);
 *   samc_sam3_tracker_free(t);
 *
 * Each result frame comes through the callback (valid during the call):
 * the ids ascending, each object's probability (its detection score at
 * birth, 1 after a click), its box and its mask at the frame's size. A
 * callback's non-OK status stops the call and is returned. A session is
 * used by one thread at a time; calls on it from inside its callback are
 * refused. */
typedef struct samc_sam3_tracker samc_sam3_tracker;

typedef struct samc_sam3_tracker_params {
    const char *impl;          /* NULL: samc_default_impl() */
    int n_threads;             /* 0: OpenMP's default */
} samc_sam3_tracker_params;
SAMC_API samc_sam3_tracker_params samc_sam3_tracker_default_params(void);

typedef struct samc_sam3_frame {
    int frame;                 /* its index in the video */
    int n;                     /* objects shown */
    int h, w;                  /* the frame's size */
    const int *obj_ids;        /* n, ascending */
    const float *probs;        /* n */
    const float *boxes;        /* n x 4: x, y, w, h normalised by the frame's size */
    const uint8_t *masks;      /* n x h x w, 0 / 1 */
} samc_sam3_frame;
typedef samc_status (*samc_sam3_frame_fn)(void *user, const samc_sam3_frame *f);

typedef enum samc_sam3_direction { SAMC_SAM3_FORWARD = 0, SAMC_SAM3_BACKWARD = 1, SAMC_SAM3_BOTH = 2 } samc_sam3_direction;

/* A session on the JPEG frames of `frames_dir` ("00000.jpg", ...: every
 * frame of one size), decoded when the loop needs them. */
SAMC_API samc_status samc_sam3_tracker_new(const samc_model *model, const samc_sam3_tracker_params *params,
                                           const char *frames_dir, samc_sam3_tracker **out, samc_error *err);
/* The same on n_frames RGB frames of h x w in memory (copied). */
SAMC_API samc_status samc_sam3_tracker_new_frames(const samc_model *model, const samc_sam3_tracker_params *params,
                                                  const uint8_t *rgb, int n_frames, int h, int w,
                                                  samc_sam3_tracker **out, samc_error *err);
SAMC_API void samc_sam3_tracker_free(samc_sam3_tracker *t);
/* Frames, their size, the file of frame i (NULL in memory), impl, threads; 0 / NULL / "" for NULL. */
SAMC_API int samc_sam3_tracker_num_frames(const samc_sam3_tracker *t);
SAMC_API int samc_sam3_tracker_height(const samc_sam3_tracker *t);
SAMC_API int samc_sam3_tracker_width(const samc_sam3_tracker *t);
SAMC_API const char *samc_sam3_tracker_frame_path(const samc_sam3_tracker *t, int frame);
SAMC_API const char *samc_sam3_tracker_impl(const samc_sam3_tracker *t);
SAMC_API int samc_sam3_tracker_threads(const samc_sam3_tracker *t);

/* A new prompt on `frame` (the session starts over, as officially): a text
 * (NULL: none) and/or one box (x0, y0, x1, y1 in pixels, NULL: none;
 * positive 1 / 0). The frame's result goes to cb (NULL: none). */
SAMC_API samc_status samc_sam3_tracker_add_prompt(samc_sam3_tracker *t, int frame, const char *text,
                                                  const float *box, int positive, samc_sam3_frame_fn cb, void *user,
                                                  samc_error *err);
/* Clicks (n points x, y in pixels, labels 1 / 0) on object obj_id of
 * `frame`: an existing object is refined, a new id adds an object; the
 * frame's result goes to cb. */
SAMC_API samc_status samc_sam3_tracker_add_points(samc_sam3_tracker *t, int frame, int obj_id, const float *points,
                                                  const int32_t *labels, int n, samc_sam3_frame_fn cb, void *user,
                                                  samc_error *err);
/* propagate_in_video from `start` (< 0: the first frame with results) over
 * at most max_frames frames (< 0: all), each result frame to cb. */
SAMC_API samc_status samc_sam3_tracker_propagate(samc_sam3_tracker *t, samc_sam3_direction direction, int start,
                                                 int max_frames, samc_sam3_frame_fn cb, void *user, samc_error *err);
SAMC_API samc_status samc_sam3_tracker_remove_object(samc_sam3_tracker *t, int obj_id, samc_error *err);
/* Forget the prompts, objects and results (the frames stay). */
SAMC_API void samc_sam3_tracker_reset(samc_sam3_tracker *t);

#ifdef __cplusplus
}
#endif
#endif
