# SPDX-License-Identifier: Apache-2.0
"""A script written against the official Python API (the calls of the
sam2 and sam3 READMEs and notebooks: image_predictor_example.ipynb,
automatic_mask_generator_example.ipynb, video_predictor_example.ipynb,
sam3_image_predictor_example.ipynb), run unchanged on samc's classes. Only
the marked import and constructor lines differ from the official script;
the torch.inference_mode()/autocast("cuda") wrappers of the notebooks are
device settings and are left out.

    python3 official_api_script.py MODEL_CFG CHECKPOINT VIDEO_DIR SAM3_CKPT SAM3_CFG BPE
"""
import sys

import numpy as np

# ---- the lines that differ (official: from sam2.build_sam import build_sam2, ...) ----
from samc import build_sam2, build_sam2_video_predictor
from samc import SAM2ImagePredictor, SAM2AutomaticMaskGenerator
from samc import build_sam3_image_model, Sam3Processor

model_cfg, checkpoint, video_dir, sam3_checkpoint, sam3_cfg, bpe_path = sys.argv[1:7]
sam2 = build_sam2(model_cfg, checkpoint, device="cpu", apply_postprocessing=True)
sam3_model = build_sam3_image_model(bpe_path=bpe_path, checkpoint_path=sam3_checkpoint, config=sam3_cfg)
# ---- from here on, the official calls as written for sam2 / sam3 ----

rng = np.random.default_rng(0)
image = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)

# image_predictor_example.ipynb
predictor = SAM2ImagePredictor(sam2)
predictor.set_image(image)
input_point = np.array([[80, 60]])
input_label = np.array([1])
masks, scores, logits = predictor.predict(point_coords=input_point, point_labels=input_label, multimask_output=True)
sorted_ind = np.argsort(scores)[::-1]
masks = masks[sorted_ind]
scores = scores[sorted_ind]
logits = logits[sorted_ind]
assert masks.shape == (3, 120, 160) and scores.shape == (3,)
mask_input = logits[np.argmax(scores), :, :]
masks, scores, _ = predictor.predict(point_coords=input_point, point_labels=input_label,
                                     mask_input=mask_input[None, :, :], multimask_output=False)
assert masks.shape == (1, 120, 160)
input_box = np.array([20, 10, 140, 100])
masks, scores, _ = predictor.predict(point_coords=None, point_labels=None, box=input_box[None, :],
                                     multimask_output=False)
input_boxes = np.array([[20, 10, 140, 100], [5, 5, 60, 60]])
masks, scores, _ = predictor.predict(point_coords=None, point_labels=None, box=input_boxes, multimask_output=False)
assert masks.shape == (2, 1, 120, 160)
image2 = rng.integers(0, 256, (90, 100, 3), dtype=np.uint8)
img_batch = [image, image2]
predictor.set_image_batch(img_batch)
pts_batch = [np.array([[[80, 60]], [[20, 20]]]), np.array([[[50, 40]]])]
labels_batch = [np.array([[1], [1]]), np.array([[1]])]
masks_batch, scores_batch, _ = predictor.predict_batch(pts_batch, labels_batch, box_batch=None,
                                                       multimask_output=True)
assert masks_batch[0].shape == (2, 3, 120, 160) and masks_batch[1].shape == (3, 90, 100)
best = [scores.argmax(-1) for scores in scores_batch]

# automatic_mask_generator_example.ipynb
mask_generator = SAM2AutomaticMaskGenerator(sam2, points_per_side=8, pred_iou_thresh=0.0,
                                            stability_score_thresh=0.0)
masks = mask_generator.generate(image)
sorted_anns = sorted(masks, key=(lambda x: x["area"]), reverse=True)
for ann in sorted_anns:
    m = ann["segmentation"]
    assert m.shape == (120, 160) and m.dtype == bool
mask_generator_2 = SAM2AutomaticMaskGenerator(model=sam2, points_per_side=4, points_per_batch=8,
                                              pred_iou_thresh=0.0, stability_score_thresh=0.0,
                                              stability_score_offset=0.7, crop_n_layers=1, box_nms_thresh=0.7,
                                              crop_n_points_downscale_factor=2, min_mask_region_area=25.0,
                                              use_m2m=True)
masks2 = mask_generator_2.generate(image)

# video_predictor_example.ipynb
predictor = build_sam2_video_predictor(model_cfg, checkpoint, device="cpu")
inference_state = predictor.init_state(video_path=video_dir)
predictor.reset_state(inference_state)
ann_frame_idx = 0
ann_obj_id = 1
points = np.array([[50, 40]], dtype=np.float32)
labels = np.array([1], np.int32)
_, out_obj_ids, out_mask_logits = predictor.add_new_points_or_box(inference_state=inference_state,
                                                                  frame_idx=ann_frame_idx, obj_id=ann_obj_id,
                                                                  points=points, labels=labels)
first_mask = (out_mask_logits[0] > 0.0).cpu().numpy()
box = np.array([60, 20, 130, 80], dtype=np.float32)
_, out_obj_ids, out_mask_logits = predictor.add_new_points_or_box(inference_state=inference_state,
                                                                  frame_idx=ann_frame_idx, obj_id=4, box=box)
video_segments = {}
for out_frame_idx, out_obj_ids, out_mask_logits in predictor.propagate_in_video(inference_state):
    video_segments[out_frame_idx] = {
        out_obj_id: (out_mask_logits[i] > 0.0).cpu().numpy() for i, out_obj_id in enumerate(out_obj_ids)
    }
assert sorted(video_segments) == list(range(inference_state["num_frames"]))
assert list(video_segments[0]) == [1, 4] and video_segments[0][1].shape[0] == 1

# sam3_image_predictor_example.ipynb
processor = Sam3Processor(sam3_model, confidence_threshold=0.0)
inference_state = processor.set_image(image)
processor.reset_all_prompts(inference_state)
inference_state = processor.set_text_prompt(state=inference_state, prompt="shoe")
masks, boxes, scores = inference_state["masks"], inference_state["boxes"], inference_state["scores"]
assert masks.shape[1:] == (1, 120, 160) and boxes.shape == (len(scores), 4)
box_input_xywh = np.array([40.0, 30.0, 60.0, 40.0])
box_input_cxcywh = [(box_input_xywh[0] + box_input_xywh[2] / 2) / 160, (box_input_xywh[1] + box_input_xywh[3] / 2) / 120,
                    box_input_xywh[2] / 160, box_input_xywh[3] / 120]
processor.reset_all_prompts(inference_state)
inference_state = processor.add_geometric_prompt(state=inference_state, box=box_input_cxcywh, label=True)
for i in range(len(inference_state["scores"])):
    score = inference_state["scores"][i].item()
    x0, y0, x1, y1 = inference_state["boxes"][i].cpu().numpy().tolist()
print("official API script: OK")
