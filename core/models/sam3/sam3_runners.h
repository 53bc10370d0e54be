/* sam3_runners.h - isolated runners of the SAM 3 image parity points
 * (PARITY_DUMP_FORMAT.md, "SAM 3"): each reads one recorded call's inputs
 * through a samc_layer_io, runs the layer (or, for composite points, its
 * subtree) with m->ops, and returns the named output slots.
 *
 * Slot names are the dump's: "0", "1", "0.2", or dict keys ("memory",
 * "pred_masks", ...). Outputs recorded as None are not produced.
 *
 * One input is not in the record itself: backbone.language_backbone receives
 * the captions as strings, so its runner reads the token ids as in-slot
 * "input_ids" ((B, L), from the @tokenize call that precedes it); the caller's
 * samc_layer_io supplies it.
 */
#ifndef SAMC_CORE_MODELS_SAM3_RUNNERS_H
#define SAMC_CORE_MODELS_SAM3_RUNNERS_H

#include "core/models/sam3/sam3_model.h"
#include "core/runtime/layer_io.h"

typedef samc_status (*samc_sam3_runner)(const samc_sam3_model *m, int index,
                                        const samc_layer_io *io, samc_layer_out *out,
                                        samc_error *err);

typedef struct samc_sam3_runner_entry {
    const char *pattern;   /* module name; "{i}" stands for the index */
    samc_sam3_runner run;
} samc_sam3_runner_entry;

/* Every parity point of the SAM 3 image task, in dump order. */
extern const samc_sam3_runner_entry samc_sam3_runners[];
extern const int samc_sam3_n_runners;

/* The runner of `module` and its index ({i}, else -1); NULL if none. */
samc_sam3_runner samc_sam3_runner_find(const char *module, int *index);

/* The runners themselves. */
samc_status samc_sam3_run_preprocess(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                     samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_patch_embed(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                      samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_vit_block(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                    samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_trunk(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_neck_level(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                     samc_layer_out *out, samc_error *err);
/* sam2_convs.{i}: the tracker's neck copy (add_sam2_neck); not an image parity point */
samc_status samc_sam3_run_sam2_neck_level(const samc_sam3_model *m, int index,
                                          const samc_layer_io *io, samc_layer_out *out,
                                          samc_error *err);
samc_status samc_sam3_run_vision_backbone(const samc_sam3_model *m, int index,
                                          const samc_layer_io *io, samc_layer_out *out,
                                          samc_error *err);
samc_status samc_sam3_run_text_block(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                     samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_text_encoder(const samc_sam3_model *m, int index,
                                       const samc_layer_io *io, samc_layer_out *out,
                                       samc_error *err);
samc_status samc_sam3_run_language_backbone(const samc_sam3_model *m, int index,
                                            const samc_layer_io *io, samc_layer_out *out,
                                            samc_error *err);
samc_status samc_sam3_run_geo_layer(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                    samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_geometry_encoder(const samc_sam3_model *m, int index,
                                           const samc_layer_io *io, samc_layer_out *out,
                                           samc_error *err);
samc_status samc_sam3_run_enc_layer(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                    samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_fusion_encoder(const samc_sam3_model *m, int index,
                                         const samc_layer_io *io, samc_layer_out *out,
                                         samc_error *err);
samc_status samc_sam3_run_dec_layer(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                    samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_decoder(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                  samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_dot_scoring(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                      samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_pixel_decoder(const samc_sam3_model *m, int index,
                                        const samc_layer_io *io, samc_layer_out *out,
                                        samc_error *err);
samc_status samc_sam3_run_seg_head(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                   samc_layer_out *out, samc_error *err);
samc_status samc_sam3_run_postprocess(const samc_sam3_model *m, int index, const samc_layer_io *io,
                                      samc_layer_out *out, samc_error *err);

#endif
