/* SPDX-License-Identifier: Apache-2.0 */
/* tracker_config.c - the tracker's config section checked before any
 * weight is bound: every size the key list and the layers use within what
 * the official code would build (SAM 2's checks, found by
 * fuzz/fuzz_config_json.c, shared with SAM 3's tracker). */
#include "core/models/tracker/tracker_config.h"

#include "core/base/error.h"
#include "core/models/tracker/tracker_layers.h" /* the arrays the layer counts index */

samc_status samc_tracker_config_validate(const samc_tracker_config *c, samc_error *err)
{
#define RANGE(v, lo, hi, name)                                                                               \
    do {                                                                                                     \
        if (!((v) >= (lo) && (v) <= (hi)))                                                                   \
            return samc_fail(err, SAMC_ERR_FORMAT, "config: %s = %g is outside %g..%g", name, (double)(v),     \
                             (double)(lo), (double)(hi));                                                    \
    } while (0)
    const samc_memory_attention_config *ma = &c->mem_attn;
    RANGE(ma->d_model, 1, 65536, "memory_attention.d_model");
    RANGE(ma->num_layers, 0, SAMC_MAX_MEMATTN_LAYERS, "memory_attention.num_layers");
    RANGE(ma->dim_feedforward, 1, 1 << 20, "memory_attention.layer.dim_feedforward");
    RANGE(ma->self_heads, 1, 1024, "memory_attention.layer.self_attention.num_heads");
    RANGE(ma->cross_heads, 1, 1024, "memory_attention.layer.cross_attention.num_heads");
    RANGE(ma->kv_in_dim, 1, 65536, "memory_attention.layer.cross_attention.kv_in_dim");
    RANGE(ma->rope_theta, 1e-6, 1e12, "memory_attention.layer.*.rope_theta");
    RANGE(ma->feat_h, 1, 1024, "memory_attention.layer.*.feat_sizes");
    RANGE(ma->feat_w, 1, 1024, "memory_attention.layer.*.feat_sizes");
    if (ma->d_model % ma->self_heads || ma->d_model % ma->cross_heads)
        return samc_fail(err, SAMC_ERR_FORMAT, "config: memory_attention.d_model %d is not divisible by its heads",
                         ma->d_model);
    const samc_memory_encoder_config *me = &c->mem_enc;
    RANGE(me->out_dim, 1, 65536, "memory_encoder.out_dim");
    RANGE(me->in_dim, 1, 65536, "memory_encoder.in_dim");
    RANGE(me->ds_kernel, 1, 15, "memory_encoder.mask_downsampler.kernel_size");
    RANGE(me->ds_stride, 1, 16, "memory_encoder.mask_downsampler.stride");
    RANGE(me->ds_padding, 0, 15, "memory_encoder.mask_downsampler.padding");
    RANGE(me->ds_total_stride, 1, 1024, "memory_encoder.mask_downsampler.total_stride");
    RANGE(me->ds_embed_dim, 1, 65536, "memory_encoder.mask_downsampler.embed_dim");
    RANGE(me->fuser_layers, 0, SAMC_MAX_FUSER_LAYERS, "memory_encoder.fuser.num_layers");
    RANGE(me->fuser_dim, 1, 65536, "memory_encoder.fuser.layer.dim");
    RANGE(me->fuser_kernel, 1, 31, "memory_encoder.fuser.layer.kernel_size");
    RANGE(me->fuser_padding, 0, 31, "memory_encoder.fuser.layer.padding");
    RANGE(me->layer_scale_init_value, -1e6, 1e6, "memory_encoder.fuser.layer.layer_scale_init_value");
    RANGE(me->pe.num_pos_feats, 1, 65536, "memory_encoder.position_encoding.num_pos_feats");
    RANGE(me->pe.temperature, 1e-6, 1e12, "memory_encoder.position_encoding.temperature");
    RANGE(me->pe.scale, -1e6, 1e6, "memory_encoder.position_encoding.scale");
    RANGE(c->num_maskmem, 0, 64, "num_maskmem");
    RANGE(c->sigmoid_scale_for_mem_enc, -1e6, 1e6, "sigmoid_scale_for_mem_enc");
    RANGE(c->sigmoid_bias_for_mem_enc, -1e6, 1e6, "sigmoid_bias_for_mem_enc");
    RANGE(c->max_cond_frames_in_attn, -1, 1 << 20, "max_cond_frames_in_attn");
    RANGE(c->video.fill_hole_area, 0, 1e12, "fill_hole_area");
    RANGE(c->multimask_min_pt_num, 0, 1 << 20, "multimask_min_pt_num");
    RANGE(c->multimask_max_pt_num, 0, 1 << 20, "multimask_max_pt_num");
    RANGE(c->memory_temporal_stride_for_eval, 1, 1 << 20, "memory_temporal_stride_for_eval");
    RANGE(c->max_obj_ptrs_in_encoder, 0, 1 << 20, "max_obj_ptrs_in_encoder");
    RANGE(c->dynamic_multimask_stability_delta, -1e6, 1e6, "dynamic_multimask_stability_delta");
    RANGE(c->dynamic_multimask_stability_thresh, -1e6, 1e6, "dynamic_multimask_stability_thresh");
    RANGE(c->sam3.mf_threshold, -1e6, 1e6, "mf_threshold");
    if (c->sam3.use_memory_selection && c->max_obj_ptrs_in_encoder > 64)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED, "config: max_obj_ptrs_in_encoder = %d with memory selection "
                         "(samc keeps at most 64 selected frames)", c->max_obj_ptrs_in_encoder);
#undef RANGE
    return SAMC_OK;
}
