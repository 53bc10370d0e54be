/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_internal.h - the video session's state, shared by its files:
 *   sam3_video_maps.c     small insertion-ordered maps (Python dicts of the metadata)
 *   sam3_video_frames.c   the frame loader (@preprocess), the session's frames
 *   sam3_video_detect.c   backbone and detection of a frame, the detector buffer, the
 *                         tracker's features (4.1)
 *   sam3_video_assoc.c    NMS and mask IoUs, association, the object limit (4.3a-c)
 *   sam3_video_hotstart.c hot start, occlusion and shrink suppression (4.3e, g, h)
 *   sam3_video_loop.c     one frame: propagation, planning, execution, outputs (4, 5.1)
 *   sam3_video_outputs.c  the frame outputs, their cache, the hot-start buffer (5.2, 5.3)
 *   sam3_video.c          requests: prompts, clicks, propagation, removal, reset (3, 7)
 *   sam3_video_records.c  the loop's parity records (one part) and their runners
 * Section numbers refer to docs/sam3_video.md. */
#ifndef SAMC_CORE_MODELS_SAM3_VIDEO_INTERNAL_H
#define SAMC_CORE_MODELS_SAM3_VIDEO_INTERNAL_H

#include "core/models/sam3/sam3_predict.h"
#include "core/models/sam3/sam3_tracker_state.h"
#include "core/models/sam3/sam3_video.h"

/* ---- maps (sam3_video_maps.c) ------------------------------------------------------ */

/* An insertion-ordered int -> double map (a Python dict; an assignment to an
 * existing key keeps its place). */
typedef struct s3_kv { int key; double v; } s3_kv;
typedef struct s3_map { s3_kv *e; int n, cap; } s3_map;
bool samc__s3m_get(const s3_map *m, int key, double *v);
samc_status samc__s3m_set(s3_map *m, int key, double v);
bool samc__s3m_del(s3_map *m, int key);
samc_status samc__s3m_copy(s3_map *dst, const s3_map *src);
void samc__s3m_free(s3_map *m);
static inline bool samc__s3m_has(const s3_map *m, int key) { return samc__s3m_get(m, key, NULL); }

/* A (first, later) -> count map (overlap_pair_to_frame_inds: only the
 * number of frames is read). */
typedef struct s3_pair { int a, b, count; } s3_pair;
typedef struct s3_pairs { s3_pair *e; int n, cap; } s3_pairs;

/* frame -> map (obj_id_to_tracker_score_frame_wise, suppressed_obj_ids). */
typedef struct s3_frame_map { int frame; s3_map m; } s3_frame_map;
typedef struct s3_frame_maps { s3_frame_map *e; int n, cap; } s3_frame_maps;
s3_map *samc__s3fm_get(s3_frame_maps *f, int frame, bool create);
void samc__s3fm_free(s3_frame_maps *f);
/* Drop the maps of frames outside [lo, hi] (streaming). */
void samc__s3fm_keep(s3_frame_maps *f, int lo, int hi);

/* ---- the tracker metadata (_initialize_metadata) ------------------------------------- */

typedef struct s3_rank0 {
    s3_map first_frame;                 /* obj_first_frame_idx */
    s3_map unmatched;                   /* unmatched_frame_inds: obj -> number of frames */
    s3_map keep_alive;                  /* trk_keep_alive (a defaultdict(int)) */
    s3_pairs overlaps;                  /* overlap_pair_to_frame_inds */
    s3_map removed;                     /* removed_obj_ids (values unused) */
    s3_frame_maps suppressed;           /* suppressed_obj_ids[frame] (values unused) */
} s3_rank0;

typedef struct s3_meta {
    bool initialised;
    int *obj_ids, n_obj, cap_obj;       /* obj_ids_all_gpu */
    int max_obj_id;
    s3_map score;                       /* obj_id_to_score */
    s3_frame_maps trk_score;            /* obj_id_to_tracker_score_frame_wise */
    s3_map last_occluded;               /* obj_id_to_last_occluded */
    s3_rank0 r0;
} s3_meta;

void samc__s3_meta_free(s3_meta *m);
samc_status samc__s3_meta_add_obj(s3_meta *m, int id);
void samc__s3_meta_del_obj(s3_meta *m, int id);
int samc__s3_meta_find(const s3_meta *m, int id);
samc_status samc__s3_pairs_add(s3_pairs *p, int a, int b);

/* ---- the session ------------------------------------------------------------------- */

/* multigpu_buffer[frame]: the detector's outputs of a frame (NMS applied to
 * the logits) and the tracker neck's levels (bfloat16 values). */
typedef struct s3_det_buffer {
    int frame;
    samc_tensor logits;                 /* (Q) joint logits */
    samc_tensor boxes;                  /* (Q,4) xyxy normalised */
    samc_tensor masks;                  /* (Q,4G,4G) */
    samc_tensor levels[3], pos[3];      /* the tracker neck, levels 0-2 */
} s3_det_buffer;

/* det_out of run_backbone_and_detection. */
typedef struct s3_detections {
    int n;
    samc_tensor bbox, mask, scores;     /* (n,4), (n,4G,4G), (n) */
} s3_detections;
void samc__s3_detections_free(s3_detections *d);

/* cached_frame_outputs[frame]: obj_id -> video-size binary mask. */
typedef struct s3_cached { int frame, n, cap; int *ids; uint8_t **masks; } s3_cached;

/* What _run_single_frame_inference returns for one frame (a snapshot of
 * the metadata it read, for the hot-start buffer). */
typedef struct s3_frame_out {
    int frame;
    int n;
    int *ids;
    uint8_t **masks;                    /* obj_id_to_mask, video size */
    s3_map score, trk_score;            /* obj_id_to_score, obj_id_to_tracker_score (this frame) */
    s3_map removed, suppressed;
} s3_frame_out;
void samc__s3_frame_out_free(s3_frame_out *o);

typedef struct s3_action {              /* action_history */
    int type;                           /* S3_ADD ... */
    bool has_frame;
    int frame;
    int *obj_ids, n_obj;                /* NULL / 0: None */
} s3_action;
enum { S3_ADD, S3_REMOVE, S3_REFINE, S3_PROP_FULL, S3_PROP_PARTIAL, S3_PROP_FETCH };

struct samc_sam3_video {
    samc_exec *x;
    const samc_sam3_model *m;
    samc_sam3_video_options opt;
    samc_frames *frames;
    int T, H, W;
    /* the prompt */
    bool has_text;
    char *text;                         /* find_text_batch[0] (text or "<text placeholder>") */
    int *geo_label;                     /* per frame: -1 none, else the visual box's label */
    float (*geo_box)[4];                /* per frame: cx, cy, w, h */
    bool *has_outputs;                  /* previous_stages_out */
    /* caches */
    char *text_key;                     /* feature_cache["text"]'s key, NULL: none */
    samc_sam3_text text_feats;          /* both strings' encodings (L,2,d), (2,L) */
    s3_det_buffer *buf;                 /* multigpu_buffer */
    int n_buf, cap_buf;
    int feat_frame;                     /* feature_cache's tracker features: this frame's (-1: none) */
    samc_frame_features feat;
    int click_obj;                      /* during a click: its object, the scope of its fill and outputs
                                           records (as the official run records them); else -1 */
    /* the loop's state */
    samc_s3_state **states;             /* tracker_inference_states */
    int n_states, cap_states;
    s3_meta meta;
    s3_cached *cache;                   /* cached_frame_outputs */
    int n_cache, cap_cache;
    s3_action *history;
    int n_history, cap_history;
    int bound_start, bound_max;         /* feature_cache["tracking_bounds"] (-1: None) */
};

/* sam3_video_frames.c */
samc_status samc__s3v_frame_image(samc_sam3_video *v, int t, samc_tensor *img, samc_error *err);
extern const samc_part_def samc_sam3_video_preprocess_part;

/* sam3_video_detect.c: run_backbone_and_detection of frame t; the frame's
 * tracker features become v->feat. */
samc_status samc__s3v_detect(samc_sam3_video *v, int t, bool reverse, bool allow_new, s3_detections *det,
                             samc_error *err);
void samc__s3v_clear_caches(samc_sam3_video *v);

/* sam3_video_assoc.c */
typedef struct s3_assoc {
    int *new_det, n_new;                /* new_det_fa_inds */
    int *unmatched, n_unmatched;        /* unmatched_trk_obj_ids */
    int *empty, n_empty;                /* empty_trk_obj_ids */
    int **matched;                      /* det_to_matched_trk_obj_ids[d] (n_matched[d] ids) */
    int *n_matched;
    int n_det;
    int *hc_trk, *hc_det, n_hc;         /* trk_id_to_max_iou_high_conf_det, in dict order */
} s3_assoc;
void samc__s3_assoc_free(s3_assoc *a);
samc_status samc__s3v_associate(samc_sam3_video *v, int t, const s3_detections *det, const float *trk_masks,
                                const int *trk_ids, int M, int s4, s3_assoc *a, samc_error *err);
/* The mask IoUs of binary masks a (N x hw) and b (M x hw): intersection /
 * max(union, 1) in float32 (perflib mask_iou). */
void samc__s3_mask_iou(const uint8_t *a, int N, const uint8_t *b, int M, int64_t hw, float *ious);
/* NMS over the frame's queries (@nms); suppressed logits lowered by 1e4. */
/* A loop decision by a threshold: values compared with thr by cmp, the
 * recorded values in slot `slot` of the next `module` record of frame t (a
 * parity run may adopt the recorded side within its tolerance: exec.h). */
void samc__s3v_decide(samc_sam3_video *v, int t, const char *module, const char *slot, float *values, int64_t n,
                      float thr, samc_cmp cmp);
samc_status samc__s3v_nms(samc_sam3_video *v, int t, samc_tensor *logits, const samc_tensor *masks,
                          samc_error *err);
samc_status samc__s3v_drop_over_limit(samc_sam3_video *v, int t, s3_assoc *a, const s3_detections *det, int keep,
                                      samc_error *err);

/* sam3_video_hotstart.c */
samc_status samc__s3v_hotstart(samc_sam3_video *v, int t, bool reverse, const s3_assoc *a, const int *new_ids,
                               int n_new, s3_map *removed_now, samc_error *err);
samc_status samc__s3v_occlusion(samc_sam3_video *v, int t, bool reverse, float *masks, const int *ids, int M,
                                int s4, const s3_map *removed_now, s3_map *last_occluded, samc_error *err);
samc_status samc__s3v_shrink(samc_sam3_video *v, int t, samc_tensor *masks, samc_error *err);

/* sam3_video_loop.c */
samc_status samc__s3v_one_frame(samc_sam3_video *v, int t, bool reverse, s3_frame_out *out, samc_error *err);
samc_status samc__s3v_propagate_states(samc_sam3_video *v, int t, bool reverse, bool run_mem, samc_s3_state **states,
                                       int n_states, float **masks, float **scores, int **ids, int *M,
                                       samc_error *err);
samc_status samc__s3v_remove_from_states(samc_sam3_video *v, int obj_id, samc_error *err);
samc_s3_frame samc__s3v_frame(const samc_sam3_video *v, int t);

/* sam3_video_outputs.c */
samc_status samc__s3v_postprocess(samc_sam3_video *v, const s3_frame_out *fo, const s3_map *removed,
                                  const s3_map *suppressed, samc_sam3_outputs *out, samc_error *err);
samc_status samc__s3v_cache_put(samc_sam3_video *v, const s3_frame_out *fo, const s3_map *hide, samc_error *err);
s3_cached *samc__s3v_cache_get(samc_sam3_video *v, int frame);
void samc__s3v_cache_del_obj(samc_sam3_video *v, int obj_id);
void samc__s3v_cache_free(samc_sam3_video *v);
/* A frame output from the cache (with refined masks replacing theirs) and
 * the metadata's current scores. */
samc_status samc__s3v_from_cache(samc_sam3_video *v, int frame, const int *ids, uint8_t *const *masks, int n,
                                 s3_frame_out *fo, samc_error *err);
/* A video-size binary mask of low-res logits (bilinear, > 0). */
samc_status samc__s3v_video_mask(const samc_sam3_video *v, const float *low, int s, uint8_t *out, samc_error *err);

/* sam3_video_records.c: the loop's parity records (the part mounted at the
 * family's root; `what` a row of SAM3_ROWS). */
#define SAM3_ROWS(X)                                                                                           \
    X(NMS, "@nms") X(DETECTIONS, "@detections") X(TRACKER_BACKBONE, "@tracker_backbone")                       \
    X(PROPAGATE, "@propagate_tracker") X(FILL_HOLES, "@fill_holes") X(ASSOCIATE, "@associate")                 \
    X(DROP, "@drop_over_limit") X(HOTSTART, "@hotstart") X(RECONDITION, "@recondition")                        \
    X(OCCLUSION, "@occlusion") X(SUPPRESS_OCCLUSION, "@suppress_occlusion") X(UPDATE_MEMORIES, "@update_memories") \
    X(SHRINK, "@suppress_shrinkage") X(PLAN, "@plan") X(ADD_OBJECTS, "@add_new_objects")                       \
    X(REMOVE_OBJECTS, "@remove_objects") X(BUILD_OUTPUTS, "@build_outputs") X(POSTPROCESS, "@postprocess")     \
    X(CLEAR_COND, "@clear_detector_cond_frames")
#define SAM3_ROW_ENUM(id, pattern) S3R_##id,
enum { SAM3_ROWS(SAM3_ROW_ENUM) S3R_N };
#undef SAM3_ROW_ENUM
extern const samc_part_def samc_sam3_loop_part;
/* A record's slot builder: named tensors owned until samc__s3_rec_emit. */
typedef struct s3_rec {
    int n;
    const char *slots[24];
    samc_tensor t[24];
    char names[24][64];
} s3_rec;
void samc__s3_rec_ints(s3_rec *r, const char *slot, const int *v, int n);
/* A map as [K,2] (key, value) rows, keys ascending; its keys alone, ascending. */
void samc__s3_rec_pairs(s3_rec *r, const char *slot, const s3_map *m);
void samc__s3_rec_keys(s3_rec *r, const char *slot, const s3_map *m);
void samc__s3_rec_floats(s3_rec *r, const char *slot, int ndim, const int64_t *shape, const float *v);
/* Trace the record as row `row` (< 0: none) when a trace listens; the
 * record's tensors are released either way (r is empty again). */
void samc__s3_rec_emit(samc_sam3_video *v, s3_rec *r, int row, int frame, int obj);

#endif
