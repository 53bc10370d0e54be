/* SPDX-License-Identifier: Apache-2.0 */
/* samc.h - Segment Anything 2 in C: the public API.
 *
 * In the manner of llama.cpp / whisper.cpp: a samc_model (weights and
 * config, loaded once, read-only afterwards) is shared by any number of image
 * predictors and video trackers, on any number of threads; each predictor or
 * tracker is used by one thread at a time.
 *
 *   samc_error err;
 *   samc_model *model;
 *   samc_model_params mp = samc_model_default_params();
 *   if (samc_model_load("sam2.1_hiera_tiny.pt", &mp, &model, &err)) { puts(err.msg); ... }
 *   samc_predictor_params pp = samc_predictor_default_params();    // impl "fast"
 *   samc_predictor *p;
 *   samc_predictor_new(model, &pp, &p, &err);
 *   samc_predictor_set_image(p, rgb, height, width, &err);      // computes the embedding once
 *   float pt[2] = {500, 375}; int32_t lab[1] = {1};
 *   samc_predict_request rq = {.point_coords = pt, .point_labels = lab, .n_points = 1,
 *                              .multimask_output = 1};
 *   samc_masks m;
 *   samc_predictor_predict(p, &rq, &m, &err);                   // any number of prompts
 *   ... m.masks[k*H*W + y*W + x] > 0 ...
 *   samc_masks_free(&m);
 *   samc_predictor_free(p);
 *   samc_model_free(model);                                     // after its predictors
 *
 * Every call returns SAMC_OK or a samc_status; `err` (may be NULL) is
 * cleared on entry and, on failure, holds a message that names the file, key
 * or argument at fault. Nothing here aborts on bad input, NULL handles
 * included. docs/api.md has complete example programs.
 */
#ifndef SAMC_H
#define SAMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------- */

#define SAMC_VERSION_MAJOR 0
#define SAMC_VERSION_MINOR 3
#define SAMC_VERSION_PATCH 0
#define SAMC_VERSION_STRING "0.3.0"

/* The version of the library linked ("0.3.0"), which may differ from the
 * header's SAMC_VERSION_STRING when linking a shared library. */
SAMC_API const char *samc_version(void);

/* ---- logging ---------------------------------------------------------- */

typedef enum samc_log_level {
    SAMC_LOG_ERROR = 0,
    SAMC_LOG_WARN = 1,
    SAMC_LOG_INFO = 2,  /* model loaded, implementation chosen */
    SAMC_LOG_DEBUG = 3
} samc_log_level;

/* Receives each message (one line, no trailing newline) at or below the
 * verbosity. Called from the thread that logs. */
typedef void (*samc_log_fn)(samc_log_level level, const char *msg, void *user);

/* Install a log callback for the whole process (NULL: the default, which
 * writes "samc: MSG" lines to stderr). Set it before using the library from
 * several threads. */
SAMC_API void samc_log_set(samc_log_fn fn, void *user);
/* Messages above `level` are dropped (default SAMC_LOG_WARN). */
SAMC_API void samc_log_set_level(samc_log_level level);
SAMC_API samc_log_level samc_log_get_level(void);

/* Progress of long work: `what` names it ("encode" for the image encoder's
 * blocks, "propagate" for a tracker's frames), `done` of `total` steps. */
/* Called from inside the call it reports on: it must not call back into the
 * predictor or tracker reporting (such calls that change it fail with
 * SAMC_ERR_ARG; see samc_frame_masks_cb). */
typedef void (*samc_progress_fn)(void *user, const char *what, int done, int total);

/* Asked at every layer boundary of a long call (set_image, predict, the
 * batched and automatic-mask-generator calls of samc_amg.h, SAM 3's
 * set_image / set_text / add_box) and at every frame boundary of propagate:
 * returning true stops the call there with SAMC_ERR_ABORTED. Nothing
 * half-made is handed out: an aborted set_image leaves no image set, an
 * aborted propagate has delivered whole frames only (each through its
 * callback) and can be run again. Called on the thread that made the call;
 * it must be cheap (a flag read), e.g. a flag a signal handler or a GUI's
 * cancel button sets. */
typedef bool (*samc_abort_fn)(void *user);

/* ---- the model -------------------------------------------------------- */

typedef struct samc_model samc_model;

/* The two model families a samc_model holds: SAM 2 / SAM 2.1 (point, box and
 * mask prompts: samc_predictor, samc_tracker) and SAM 3 (concepts: a text
 * and/or example boxes, samc_sam3_processor of samc_sam3.h). */
typedef enum samc_family { SAMC_FAMILY_SAM2 = 2, SAMC_FAMILY_SAM3 = 3 } samc_family;

/* Most threads samc runs a call on: larger requests (n_threads,
 * samc_*_set_threads, OMP_NUM_THREADS) are refused or capped. */
#define SAMC_MAX_THREADS 256

typedef struct samc_model_params {
    /* A preset name ("sam2.1_hiera_t", "sam2_hiera_b+", ... or
     * "sam2.1_hiera_tiny"), a path to a .json config (the YAML `model:`
     * section as JSON), or NULL: a parity dump's own /model/config_json, else
     * the preset detected from the weight shapes. */
    const char *config;
    /* Weights holding NaN or Inf are refused at load (the message names the
     * first such key and index); 1 loads them anyway. */
    int allow_nonfinite;
    /* SAM 3 only: the tokenizer's vocabulary, the official
     * bpe_simple_vocab_16e6.txt.gz. NULL: a SAM 3 parity dump's own
     * /model/bpe_vocab_gz; a SAM 3 checkpoint without one is refused. */
    const char *vocab;
    /* The family, when the caller has already told it from the file (the
     * command line checks its options against it before loading):
     * SAMC_FAMILY_SAM2 or SAMC_FAMILY_SAM3, and the file is not examined for
     * it again (a file of the other family then fails the strict key walk).
     * 0 (the default): told from the file. */
    samc_family family;
} samc_model_params;

SAMC_API samc_model_params samc_model_default_params(void);

/* Load a checkpoint: an official .pt (torch.save zip) or a .safetensors
 * file, recognised by content, of either family (SAM 2 or SAM 3, told by
 * its keys). A parity dump .h5 loads too in programs that link samc's parity
 * harness (the samc command, the tests: libsamc has no HDF5 and refuses one
 * with SAMC_ERR_UNSUPPORTED). Every key and shape is checked first. params
 * NULL: the defaults. */
SAMC_API samc_status samc_model_load(const char *path, const samc_model_params *params, samc_model **out, samc_error *err);
/* Free a model after every predictor and tracker made from it. NULL is a no-op. */
SAMC_API void samc_model_free(samc_model *model);
/* The family of a loaded model (SAMC_FAMILY_SAM2 for NULL). */
SAMC_API samc_family samc_model_family(const samc_model *model);
/* "SAM 2" or "SAM 3". */
SAMC_API const char *samc_family_name(samc_family family);
/* Name of the resolved config ("sam2.1_hiera_t", the json file name; SAM 3:
 * "sam3 (built-in release)" or the config's path); "" for NULL. */
SAMC_API const char *samc_model_config_name(const samc_model *model);
/* The model's input side (1024 for the official SAM 2 checkpoints, 1008 for
 * SAM 3); 0 for NULL. */
SAMC_API int samc_model_image_size(const samc_model *model);

/* The implementations a predictor or tracker can run: "fast" (OpenMP, SIMD,
 * BLAS; the default), "ref" (the scalar reference), "bf16", ... */
SAMC_API const char *samc_default_impl(void);
/* What samc runs on this machine, one line, e.g. "kernels v4 (avx512), bf16
 * avx512_bf16 (vdpbf16ps), OpenMP 201511 (16 threads), compiled for
 * x86-64-v2": the instruction-set level of the kernels, chosen at run time
 * from the CPU (the environment variable SAMC_ISA=v2|v3|v4 lowers it), the
 * bf16 kernel, OpenMP's version and default threads, the build's baseline.
 * A static string, valid for the life of the process. */
SAMC_API const char *samc_system_info(void);

/* ---- images ------------------------------------------------------------ */

/* Decode a JPEG (CMYK/YCCK converted as Pillow does), PNG, BMP, GIF, TGA,
 * PSD, HDR, PIC or PNM file to 8-bit RGB (row-major h*w*3), as Pillow's
 * Image.open(path).convert("RGB"); truncated and corrupt files are refused
 * (Pillow's LOAD_TRUNCATED_IMAGES off). *rgb is released with samc_free. */
SAMC_API samc_status samc_read_image(const char *path, uint8_t **rgb, int *height, int *width, samc_error *err);
/* The decompression-bomb limit every image read checks from the file's
 * header before allocating: width*height at most this many pixels.
 * Default: Pillow's (2 * PIL.Image.MAX_IMAGE_PIXELS = 178956970), or the
 * environment's SAMC_MAX_IMAGE_PIXELS; never above 2^28 (and 16384 pixels a
 * side). <= 0 restores the default. Returns the previous limit; applies to
 * the whole process. */
SAMC_API long long samc_set_image_pixel_limit(long long max_pixels);
/* Write an 8-bit PNG with 1 (gray) or 3 (RGB) channels (libpng, row by row;
 * a temporary beside `path`, created exclusively, renamed at the end). */
SAMC_API samc_status samc_write_png(const char *path, const uint8_t *data, int height, int width, int channels,
                           samc_error *err);
/* The same for an encoded image held in memory (`n` bytes: a request body,
 * a database blob), under the same limits; `what` names it in messages
 * (NULL: "image"). */
SAMC_API samc_status samc_decode_image(const void *data, size_t n, const char *what, uint8_t **rgb, int *height, int *width,
                              samc_error *err);
/* The size of an encoded image in memory from its header alone (nothing
 * decoded): a server refuses an image too large to decode before it does. */
SAMC_API samc_status samc_probe_image(const void *data, size_t n, const char *what, int *height, int *width, samc_error *err);
/* An 8-bit PNG (1 or 3 channels) encoded in memory; *png (n bytes) is
 * released with samc_free. */
SAMC_API samc_status samc_encode_png(const uint8_t *data, int height, int width, int channels, uint8_t **png, size_t *n,
                            samc_error *err);
/* Release memory samc handed out (samc_read_image, samc_decode_image,
 * samc_encode_png). NULL is a no-op. */
SAMC_API void samc_free(void *ptr);

/* ---- image predictor: SAM2ImagePredictor ---------------------------- */

typedef struct samc_predictor samc_predictor;

typedef struct samc_predictor_params {
    const char *impl;          /* NULL: samc_default_impl() ("fast"); "ref", "bf16", ... */
    int n_threads;             /* 0..SAMC_MAX_THREADS; 0: OpenMP's default (OMP_NUM_THREADS, capped
                                  at SAMC_MAX_THREADS); ref runs on one */
    /* SAM2ImagePredictor(max_hole_area=, max_sprinkle_area=): fill background
     * holes / remove foreground specks up to this many low-res pixels
     * (8-connected components) before upsampling. 0 (the default) turns each off. */
    double max_hole_area, max_sprinkle_area;
    samc_progress_fn progress; /* set_image: "encode", one step per encoder block; NULL: none */
    void *progress_user;
    samc_abort_fn abort_callback; /* NULL: calls run to the end */
    void *abort_user;
} samc_predictor_params;

SAMC_API samc_predictor_params samc_predictor_default_params(void);

/* A predictor on `model` (which must outlive it), a SAM 2 model (a SAM 3
 * one is refused: samc_sam3_processor_new). params NULL: the defaults. */
SAMC_API samc_status samc_predictor_new(const samc_model *model, const samc_predictor_params *params, samc_predictor **out,
                               samc_error *err);
SAMC_API void samc_predictor_free(samc_predictor *p);
/* The implementation it runs ("fast") and the threads it uses; "" / 0 for NULL. */
SAMC_API const char *samc_predictor_impl(const samc_predictor *p);
SAMC_API int samc_predictor_threads(const samc_predictor *p);
SAMC_API const samc_model *samc_predictor_model(const samc_predictor *p);

/* Model and predictor in one: samc_model_load + samc_predictor_new, the
 * predictor owning its model (kept from the first API). */
SAMC_API samc_status samc_predictor_load(const char *checkpoint, const char *config, samc_predictor **out,
                                samc_error *err);

/* Options of the *_load_ex functions; {0} gives the defaults of *_load. */
typedef struct samc_load_options {
    int allow_nonfinite;       /* as samc_model_params.allow_nonfinite */
} samc_load_options;

/* samc_predictor_load with options (opts may be NULL). */
SAMC_API samc_status samc_predictor_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                   samc_predictor **out, samc_error *err);

/* Change the implementation ("fast", "ref", ...; NULL: the default). */
SAMC_API samc_status samc_predictor_set_impl(samc_predictor *p, const char *impl, samc_error *err);
/* "LAYER=IMPL", LAYER an official module name or prefix
 * ("image_encoder.trunk.blocks.3=ref"). */
SAMC_API samc_status samc_predictor_override(samc_predictor *p, const char *layer_eq_impl, samc_error *err);
/* n <= 0: OpenMP's default; capped at SAMC_MAX_THREADS. */
SAMC_API void samc_predictor_set_threads(samc_predictor *p, int n);
SAMC_API samc_status samc_predictor_set_postprocess(samc_predictor *p, double max_hole_area, double max_sprinkle_area,
                                           samc_error *err);
/* Replace the abort callback of samc_predictor_params (NULL: none). */
SAMC_API void samc_predictor_set_abort_callback(samc_predictor *p, samc_abort_fn fn, void *user);

/* SAM2ImagePredictor.set_image: uint8 RGB, row-major h*w*3. */
SAMC_API samc_status samc_predictor_set_image(samc_predictor *p, const uint8_t *rgb, int h, int w, samc_error *err);

typedef struct samc_predict_request {
    const float *point_coords;   /* n_points*(x,y) in image pixels, or NULL */
    const int32_t *point_labels; /* n_points labels: 1 foreground, 0 background (-1..3 allowed) */
    int n_points;
    const float *box;            /* x0,y0,x1,y1 in image pixels, or NULL */
    const float *mask_input;     /* low-res logits (S/4 x S/4, e.g. 256x256), or NULL */
    int multimask_output;        /* 1: three masks (official default), 0: one */
    int return_logits;           /* 1: masks hold logits; 0: masks hold 0/1 (logit > 0) */
    int normalized_coords;       /* 1: point_coords and box in [0, 1] of the image width and height (the
                                    official normalize_coords=False); 0: image pixels */
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

SAMC_API samc_status samc_predictor_predict(samc_predictor *p, const samc_predict_request *rq, samc_masks *out,
                                   samc_error *err);
SAMC_API void samc_masks_free(samc_masks *m);

/* The image embedding of the current image (C x H x W), owned by p. */
SAMC_API samc_status samc_predictor_get_embedding(const samc_predictor *p, const float **data, int *c, int *h, int *w,
                                         samc_error *err);
/* ---- image embeddings held apart from a predictor ----------------------
 *
 * What set_image computes, owned by the caller: a cache of many images (a
 * server) encodes each image once and predicts on any of them from any
 * predictor of the same model, without copying. An embedding is read-only
 * once made, so any number of predictors (one thread each) may predict on
 * the same embedding at the same time. SAM 3 processors make and use them
 * too (samc_sam3.h).
 *
 *   samc_embedding *e;
 *   samc_predictor_embed(p, rgb, h, w, &e, &err);            // the encoder, once
 *   samc_predictor_predict_on(p, e, &rq, &m, &err);           // any number of prompts
 *   samc_embedding_free(e);                                   // before its model */

typedef struct samc_embedding samc_embedding;

/* Encode an RGB image (h*w*3) with p's implementation and threads; p's own
 * current image is left as it was. */
SAMC_API samc_status samc_predictor_embed(samc_predictor *p, const uint8_t *rgb, int h, int w, samc_embedding **out,
                                 samc_error *err);
/* samc_predictor_predict on `e` (made from p's model) instead of p's current image. */
SAMC_API samc_status samc_predictor_predict_on(samc_predictor *p, const samc_embedding *e, const samc_predict_request *rq,
                                      samc_masks *out, samc_error *err);
/* The model an embedding belongs to, its image size and the bytes it
 * holds (for a cache's memory budget); NULL / 0 for NULL. */
SAMC_API const samc_model *samc_embedding_model(const samc_embedding *e);
SAMC_API int samc_embedding_height(const samc_embedding *e);
SAMC_API int samc_embedding_width(const samc_embedding *e);
SAMC_API size_t samc_embedding_bytes(const samc_embedding *e);
/* Free an embedding once no predictor or processor uses it. NULL is a no-op. */
SAMC_API void samc_embedding_free(samc_embedding *e);

/* Side of the low-res mask grid (mask_input must be this squared); 0 for NULL. */
SAMC_API int samc_predictor_low_res_size(const samc_predictor *p);
/* Name of the resolved config ("sam2.1_hiera_t", or the json file name). */
SAMC_API const char *samc_predictor_config_name(const samc_predictor *p);

/* ---- video tracker: SAM2VideoPredictor -------------------------------
 *
 *   samc_tracker *t;
 *   samc_tracker_new(model, NULL, &t, &err);
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

/* A non-OK return stops propagation with that status. `masks` is valid
 * until the callback returns. The callback (and the tracker's progress
 * function) may read the tracker (samc_tracker_num_frames, _frame_path,
 * _stored_outputs, _impl, _threads) and use other objects freely; every call
 * that would change this tracker (open, push, add, clear, remove, reset,
 * propagate, set_*, override) fails with SAMC_ERR_ARG, and
 * samc_tracker_free is ignored (with an error logged) until propagate
 * returns. */
typedef samc_status (*samc_frame_masks_cb)(void *user, const samc_frame_masks *masks);

typedef struct samc_tracker_params {
    const char *impl;            /* NULL: samc_default_impl() ("fast") */
    int n_threads;               /* 0..SAMC_MAX_THREADS; 0: OpenMP's default (capped) */
    /* SAM2VideoPredictor options, each < 0 (the default) for the config's:
     * fill_hole_area (8 for the official configs; 0 turns it off) and
     * non_overlap_masks (0 or 1; false in the official configs). */
    double fill_hole_area;
    int non_overlap_masks;
    samc_progress_fn progress;   /* propagate: "propagate", one step per frame; NULL: none */
    void *progress_user;
    samc_abort_fn abort_callback; /* NULL: calls run to the end */
    void *abort_user;
} samc_tracker_params;

SAMC_API samc_tracker_params samc_tracker_default_params(void);

/* A tracker on `model` (which must outlive it), a SAM 2 model (SAM 3 video
 * is not supported). params NULL: the defaults. */
SAMC_API samc_status samc_tracker_new(const samc_model *model, const samc_tracker_params *params, samc_tracker **out,
                             samc_error *err);
SAMC_API void samc_tracker_free(samc_tracker *t);
SAMC_API const char *samc_tracker_impl(const samc_tracker *t);
SAMC_API int samc_tracker_threads(const samc_tracker *t);

/* Model and tracker in one, the tracker owning its model (the first API). */
SAMC_API samc_status samc_tracker_load(const char *checkpoint, const char *config, samc_tracker **out, samc_error *err);
SAMC_API samc_status samc_tracker_load_ex(const char *checkpoint, const char *config, const samc_load_options *opts,
                                 samc_tracker **out, samc_error *err);
SAMC_API samc_status samc_tracker_set_impl(samc_tracker *t, const char *impl, samc_error *err);
SAMC_API samc_status samc_tracker_override(samc_tracker *t, const char *layer_eq_impl, samc_error *err);
SAMC_API void samc_tracker_set_threads(samc_tracker *t, int n);
/* Replace the abort callback of samc_tracker_params (NULL: none). */
SAMC_API void samc_tracker_set_abort_callback(samc_tracker *t, samc_abort_fn fn, void *user);
/* fill_hole_area (>= 0) and non_overlap_masks; set before opening frames. */
SAMC_API samc_status samc_tracker_set_options(samc_tracker *t, double fill_hole_area, int non_overlap_masks, samc_error *err);

/* init_state: a directory of JPEG frames named by number, or frames in
 * memory (T * h * w * 3 RGB, copied). Replaces any previous video. */
SAMC_API samc_status samc_tracker_open_frames_dir(samc_tracker *t, const char *dir, samc_error *err);
SAMC_API samc_status samc_tracker_open_frames(samc_tracker *t, const uint8_t *rgb, int T, int h, int w, samc_error *err);

/* init_state on a video file (mp4, webm, mkv, mov, avi: whatever FFmpeg's
 * libraries decode) or, when `path` is a directory, its JPEG frames as
 * samc_tracker_open_frames_dir. A file's frames are decoded on demand with
 * bounded memory, their pixels and the resize to the model's input those
 * of SAM 3's official video-file loader (OpenCV; docs/video.md). A file
 * whose tail is truncated or corrupt opens with the frames before the
 * damage (samc_tracker_video_info says what and where). */
SAMC_API samc_status samc_tracker_open_video(samc_tracker *t, const char *path, samc_error *err);
/* The same on a video file's n bytes in memory, read in place: they must
 * stay valid until t opens another video or is freed. */
SAMC_API samc_status samc_tracker_open_video_memory(samc_tracker *t, const void *data, size_t n, samc_error *err);

/* What a tracker's (or samc_video_reader's) video is. */
typedef struct samc_video_info {
    int frames, height, width;
    double fps;                /* frames per second of a video file; 0: unknown (frames, directories) */
    const char *source;        /* "video file", "frames directory", "frames in memory", "stream" */
    const char *codec;         /* a video file's codec ("h264", "vp9", ...), else "" */
    const char *damage;        /* a video file cut short or corrupt after its last readable frame:
                                * what and where (the frames are those before it); NULL: intact */
    int first_concealed;       /* the first frame read so far in which the decoder hid errors
                                * (decodable, damaged: kept as OpenCV keeps it), -1: none */
} samc_video_info;

/* Valid until the tracker opens another video or is freed. */
SAMC_API samc_status samc_tracker_video_info(const samc_tracker *t, samc_video_info *out, samc_error *err);

/* Streaming (camera-like): open with the first frame, push the following ones
 * and propagate each new frame t with samc_tracker_propagate(t, t, 0, 0, ...).
 * Only what the memory bank can still read is kept, so memory stays flat
 * however long the stream runs; prompts go on frames not yet released. */
SAMC_API samc_status samc_tracker_open_stream(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err);
SAMC_API samc_status samc_tracker_push_frame(samc_tracker *t, const uint8_t *rgb, int h, int w, samc_error *err);

/* add_new_points_or_box on frame `frame` for object `obj_id`: n points
 * (x,y in video pixels) with labels (1 fg, 0 bg), and/or a box (x0,y0,x1,y1;
 * requires clear_old_points). `out` (may be NULL) receives the masks of all
 * objects on that frame; they stay valid until the next call on t. */
SAMC_API samc_status samc_tracker_add_points(samc_tracker *t, int frame, int obj_id, const float *points, const int32_t *labels,
                                    int n, const float *box, int clear_old_points, samc_frame_masks *out,
                                    samc_error *err);
/* The same with points and box in [0, 1] of the video width and height
 * (add_new_points_or_box(normalize_coords=False)). */
SAMC_API samc_status samc_tracker_add_points_normalized(samc_tracker *t, int frame, int obj_id, const float *points,
                                               const int32_t *labels, int n, const float *box,
                                               int clear_old_points, samc_frame_masks *out, samc_error *err);
/* add_new_mask: mask h x w, nonzero = object (resized to the model input). */
SAMC_API samc_status samc_tracker_add_mask(samc_tracker *t, int frame, int obj_id, const float *mask, int h, int w,
                                  samc_frame_masks *out, samc_error *err);
/* propagate_in_video: from `start` (< 0: the first prompted frame), at most
 * max_frames frames (< 0: all), forward or reverse; `cb` per frame. */
SAMC_API samc_status samc_tracker_propagate(samc_tracker *t, int start, int max_frames, int reverse, samc_frame_masks_cb cb,
                                   void *user, samc_error *err);
SAMC_API samc_status samc_tracker_clear_frame(samc_tracker *t, int frame, int obj_id, samc_error *err);
SAMC_API samc_status samc_tracker_remove_object(samc_tracker *t, int obj_id, samc_error *err);
SAMC_API samc_status samc_tracker_reset(samc_tracker *t, samc_error *err);
SAMC_API int samc_tracker_num_frames(const samc_tracker *t);
/* The file frame t was read from (open_frames_dir), else NULL. */
SAMC_API const char *samc_tracker_frame_path(const samc_tracker *t, int frame);
/* Per-frame outputs the tracker currently stores over all objects (its
 * memory-bank size; bounded when streaming). */
SAMC_API int samc_tracker_stored_outputs(const samc_tracker *t);

#ifdef __cplusplus
}
#endif
#endif
