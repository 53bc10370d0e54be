/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_video_model.c - SAM 3 with its tracker: the families that mount the
 * detector's parts at their image-model roots (keys under "detector.") and
 * the tracker's parts at SAM 3's roots ("tracker.*", keys and names alike),
 * the loop's records at the root (the video family), or the interactive
 * image predictor's (the inst family). Loading: sam3_load.c. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/models/sam3/sam3_inst.h"
#include "core/models/sam3/sam3_tracker_state_internal.h"
#include "core/models/sam3/sam3_video_internal.h"
#include "core/models/tracker/memory.h"
#include "core/models/tracker/sam_heads.h"
#include "core/models/tracker/track_step.h"

#define AT(field, cfg) .offset = offsetof(samc_sam3_model, field), .cfg_offset = offsetof(samc_sam3_model, cfg)
#define DETECTOR(p, r, field, cfg) {.part = &p, .root = r, .keys = "detector." r, AT(field, cfg)}
#define TRACKER(p, r, field) {.part = &p, .root = r, AT(field, tracker.cfg)}
/* The detector's parts with weights (all of them: the strict check). */
#define DETECTOR_PARTS                                                                                      \
    DETECTOR(samc_sam3_vision_part, "backbone.vision_backbone", vision, cfg.vision),                        \
        {.part = &samc_sam3_tokenizer_part, .root = "", AT(language, cfg.text)},                           \
        DETECTOR(samc_sam3_language_part, "backbone.language_backbone", language, cfg.text),                \
        DETECTOR(samc_sam3_geometry_part, "geometry_encoder", geo, cfg.geo),                                \
        DETECTOR(samc_sam3_fusion_part, "transformer.encoder", enc, cfg.enc),                               \
        DETECTOR(samc_sam3_decoder_part, "transformer.decoder", dec, cfg.dec),                              \
        DETECTOR(samc_sam3_scoring_part, "dot_prod_scoring", scoring, cfg.scoring),                         \
        DETECTOR(samc_sam3_segmentation_part, "segmentation_head", seg, cfg.seg)
/* Sam3TrackerBase's parts with weights. */
#define TRACKER_PARTS                                                                                       \
    TRACKER(samc_prompt_encoder_part, "tracker.sam_prompt_encoder", tracker.prompt_encoder),                \
        TRACKER(samc_mask_decoder_part, "tracker.sam_mask_decoder", tracker.mask_decoder),                  \
        TRACKER(samc_memory_attention_part, "tracker.transformer.encoder", tracker.memory_attention),       \
        TRACKER(samc_memory_encoder_part, "tracker.maskmem_backbone", tracker.memory_encoder),              \
        TRACKER(samc_tracker_part, "tracker", tracker)

static const samc_mount video_mounts[] = {
    {.part = &samc_sam3_video_preprocess_part, .root = ""}, /* on the model itself */
    DETECTOR_PARTS,
    TRACKER_PARTS,
    /* the tracker's function points: at the root, as the dumps name them */
    TRACKER(samc_memory_bank_part, "", tracker),
    TRACKER(samc_frame_filter_part, "", tracker),
    TRACKER(samc_track_step_part, "", tracker),
    TRACKER(samc_s3_tracker_predictor_part, "", tracker),
    {.part = &samc_sam3_loop_part, .root = ""},
};
const samc_layer_family samc_sam3_video_family = {.name = "sam3_video", .mounts = video_mounts,
                                                 .n_mounts = (int)(sizeof video_mounts / sizeof video_mounts[0])};

static const samc_mount inst_mounts[] = {
    {.part = &samc_sam3_preprocess_part, .root = "", AT(processor, cfg)},
    DETECTOR_PARTS,
    TRACKER_PARTS,
    TRACKER(samc_postprocess_part, "", tracker), /* SAM2Transforms.postprocess_masks as @postprocess */
    {.part = &samc_sam3_inst_part, .root = "", AT(tracker, tracker.cfg)},
};
const samc_layer_family samc_sam3_inst_family = {.name = "sam3_inst", .mounts = inst_mounts,
                                                .n_mounts = (int)(sizeof inst_mounts / sizeof inst_mounts[0])};

samc_status samc_sam3_inst_exec_init(samc_exec *x, samc_sam3_model *m, const char *impl, samc_error *err)
{
    if (!m->has_tracker)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "sam3: this model has no tracker half (tracker.* keys): clicks and "
                         "boxes on an image (predict_inst) need it");
    return samc_exec_init_impl(x, &samc_sam3_inst_family, m, &m->base, impl, err);
}

