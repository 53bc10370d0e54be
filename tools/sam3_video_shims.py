# SPDX-License-Identifier: Apache-2.0
"""What the official SAM 3 *video* path (Sam3VideoPredictor ->
Sam3VideoInferenceWithInstanceInteractivity -> Sam3TrackerPredictor) needs
beyond sam3_shims.py to run on a CPU-only torch 1.13, and nothing more.
tools/README.md ("SAM 3 video shims") lists each with its reason.

Three kinds, recorded in SHIMS (written to each dump's /model@note_shims):
  device  the official code hard-codes CUDA (`.cuda()`, a "cuda" storage
          device, GPU statistics in log messages); here everything stays on
          the CPU.  No numerics change.
  api     torch >= 2 API the video path calls that torch 1.13 lacks, restated
          exactly (a multi-dimension `Tensor.any`, a no-op SDPA backend
          switch).
  cpu     the official CPU fallback of the connected-components kernel
          crashes on an empty batch (torch.stack of an empty list); an empty
          batch has an empty answer.
and the bf16 upcasts (install_bf16_upcasts): on CUDA the whole video model
runs under a process-wide bf16 autocast (Sam3TrackerPredictor.__init__
enters it), so explicit `.to(torch.bfloat16)` casts meet layers that autocast
runs in bf16.  On the CPU autocast is off and such a tensor reaches an fp32
layer, which raises.  At exactly those layers the bf16 input is converted to
float32 (exact: every bf16 value is a float32 value); the official bf16
roundings themselves stay.
"""

import torch

SHIMS = []          # names of the stand-ins installed, for /model@note_shims

# Layers where an explicitly bf16-rounded tensor meets an fp32 layer in the
# official video path (run with autocast off), and why.
BF16_SITES = {
    "tracker.sam_mask_decoder.conv_s0":
        "Sam3ImageOnVideoMultiGPU._build_multigpu_buffer_next_chunk casts the tracker "
        "neck features (sam2_convs) to bfloat16; Sam3VideoBase.run_backbone_and_detection "
        "applies conv_s0 to level 0",
    "tracker.sam_mask_decoder.conv_s1":
        "the same bfloat16 tracker neck features, level 1 through conv_s1",
    "tracker.maskmem_backbone.pix_feat_proj":
        "level 2 of the bfloat16 tracker neck features is the tracker's vision feature; "
        "Sam3TrackerBase._encode_new_memory passes it to the memory encoder's pix_feat_proj",
}
# The memory-attention value projection sees the bf16 stored memory
# (maskmem_features, rounded by _run_single_frame_inference / _run_memory_encoder)
# when no object pointer is concatenated to it (torch.cat promotes otherwise).
V_PROJ_SITE = "tracker.transformer.encoder.layers.{}.cross_attn_image.v_proj"
V_PROJ_REASON = ("the object's stored memory (maskmem_features, bfloat16) reached the "
                 "cross-attention value projection without an object pointer to promote "
                 "it (torch.cat of bf16 memories alone stays bf16)")


def _no_cuda():
    return not torch.cuda.is_available()


# --------------------------------------------------------------------------
# device: keep everything on the CPU
# --------------------------------------------------------------------------

def _shim_tensor_cuda():
    """io_utils (frame loading), Sam3TrackerBase._prepare_memory_conditioned_features
    and Sam3TrackerPredictor.add_new_points_or_box call `.cuda()` on tensors;
    without CUDA that raises.  The tensor stays where it is (the CPU)."""
    real = torch.Tensor.cuda

    def cuda(self, *args, **kwargs):
        return self if _no_cuda() else real(self, *args, **kwargs)

    torch.Tensor.cuda = cuda
    SHIMS.append("device: Tensor.cuda -> the tensor itself (no CUDA)")


def _shim_storage_device():
    """Sam3TrackerPredictor.init_state sets storage_device = cuda (unless
    offload_state_to_cpu, which the video model never passes); stored
    outputs are moved there with `.to(storage_device)`."""
    import sam3.model.sam3_tracking_predictor as tp
    real = tp.Sam3TrackerPredictor.init_state

    def init_state(self, *args, **kwargs):
        state = real(self, *args, **kwargs)
        if _no_cuda():
            state["storage_device"] = torch.device("cpu")
        return state

    init_state.__wrapped__ = real
    tp.Sam3TrackerPredictor.init_state = init_state
    SHIMS.append("device: Sam3TrackerPredictor.init_state storage_device cuda -> cpu")


def _shim_gpu_log_helpers():
    """Sam3VideoPredictor.start_session / close_session format GPU memory
    statistics and device properties into debug messages (evaluated even
    when debug logging is off); torch.cuda raises without CUDA."""
    from sam3.model.sam3_video_predictor import Sam3VideoPredictor
    Sam3VideoPredictor._get_torch_and_gpu_properties = lambda self: f"torch {torch.__version__}, CPU"
    Sam3VideoPredictor._get_session_stats = lambda self: (
        f"live sessions: {list(self._ALL_INFERENCE_STATES)}, CPU")
    SHIMS.append("device: Sam3VideoPredictor GPU statistics in log messages -> CPU text")


# --------------------------------------------------------------------------
# api: torch >= 2 functions missing from torch 1.13
# --------------------------------------------------------------------------

def _shim_any_dims():
    """Tensor.any(dim=(a, b)) (torch >= 2.2): the video path reduces masks
    over two dimensions (Sam3VideoBase._associate_det_trk, _tracker_update_memories,
    _suppress_overlapping_based_on_recent_occlusion, _postprocess_output).
    Restated as one boolean any() per dimension, highest first (exact)."""
    try:
        torch.zeros(1, 1, dtype=torch.bool).any(dim=(0, 1))
        return
    except TypeError:
        pass
    real = torch.Tensor.any

    def any_(self, *args, **kwargs):
        dim = kwargs.get("dim", args[0] if args else None)
        if isinstance(dim, (tuple, list)):
            keepdim = kwargs.get("keepdim", args[1] if len(args) > 1 else False)
            out = self
            for d in sorted((d % self.dim() for d in dim), reverse=True):
                out = real(out, d, keepdim)
            return out
        return real(self, *args, **kwargs)

    torch.Tensor.any = any_
    SHIMS.append("api: Tensor.any(dim=tuple) (torch >= 2.2) as one any() per dimension")


def _shim_sdp_switches():
    """sam/transformer.py (tracker attention) calls
    torch.backends.cuda.enable_{flash,math,mem_efficient}_sdp(True) before
    every attention; torch 1.13 lacks enable_mem_efficient_sdp.  A backend
    choice for CUDA kernels: a no-op here."""
    b = torch.backends.cuda
    for name in ("enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp"):
        if not hasattr(b, name):
            setattr(b, name, lambda enabled: None)
            SHIMS.append(f"api: torch.backends.cuda.{name} (torch >= 2.0) -> no-op")


# --------------------------------------------------------------------------
# cpu: the official CPU connected-components fallback on an empty batch
# --------------------------------------------------------------------------

def _shim_empty_connected_components():
    """sam3/perflib/connected_components.connected_components_cpu stacks one
    result per batch item: with no item (build_outputs fills the holes of the
    new detections' masks on every frame, usually none) torch.stack raises
    "stack expects a non-empty TensorList".  The CUDA kernels return empty
    label / count tensors; so does this stand-in, for an empty batch only."""
    import sam3.perflib.connected_components as cc
    real = cc.connected_components_cpu

    def connected_components_cpu(input_tensor):
        if input_tensor.shape[0] == 0:
            z = torch.zeros(input_tensor.shape, dtype=torch.int64)
            return z, z.clone()
        return real(input_tensor)

    cc.connected_components_cpu = connected_components_cpu
    SHIMS.append("cpu: perflib connected_components_cpu on an empty batch -> empty result")


def install(video=True):
    """Install the stand-ins (after sam3_build.import_sam3): the torch API
    ones always (the tracker's SAM heads need them for predict_inst too),
    the device and CPU ones for the video path."""
    if not _no_cuda():
        raise SystemExit("these tools run the official code on the CPU; a CUDA device is "
                         "visible (set CUDA_VISIBLE_DEVICES= to hide it)")
    _shim_any_dims()
    _shim_sdp_switches()
    if video:
        _shim_tensor_cuda()
        _shim_storage_device()
        _shim_gpu_log_helpers()
        _shim_empty_connected_components()


# --------------------------------------------------------------------------
# bf16 upcasts
# --------------------------------------------------------------------------

def install_bf16_upcasts(model, on_upcast):
    """Wrap the forward of every layer of BF16_SITES (and each tracker
    memory-attention layer's v_proj) so that a bfloat16 tensor argument is
    passed as float32.  on_upcast(site, reason) is called for every call
    that needed it (the dump counts them and marks the enclosing trace
    records); a call without a bf16 argument is not touched."""
    modules = dict(model.named_modules())
    sites = dict(BF16_SITES)
    n_layers = len(model.tracker.transformer.encoder.layers)
    for i in range(n_layers):
        sites[V_PROJ_SITE.format(i)] = V_PROJ_REASON
    for name, reason in sites.items():
        _wrap_upcast(modules[name], name, reason, on_upcast)
    SHIMS.append("bf16: float32 input at " + ", ".join(sorted(sites)))
    return sites


def _wrap_upcast(module, name, reason, on_upcast):
    real = module.forward

    def up(x):
        return x.float() if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16 else x

    def forward(*args, **kwargs):
        hit = any(isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16
                  for x in list(args) + list(kwargs.values()))
        if not hit:
            return real(*args, **kwargs)
        on_upcast(name, reason)
        return real(*[up(a) for a in args], **{k: up(v) for k, v in kwargs.items()})

    module.forward = forward
