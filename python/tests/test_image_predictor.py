# SPDX-License-Identifier: Apache-2.0
"""SAM2ImagePredictor on the committed image dumps: the official outputs
within the harness tolerance, the C API's bit for bit, the official shapes
and dtypes for single and batched prompts."""
import numpy as np
import pytest

import samc
import capi
from conftest import IMAGE_DUMPS, TOL, build_sam2, ids, read_dump, rel


def prompt_args(d, a):
    """A dump prompt as the official predict() arguments."""
    coords = d["point_coords"] if len(d["point_coords"]) else None
    return dict(point_coords=coords, point_labels=d["point_labels"] if coords is not None else None,
                box=d.get("box"), mask_input=d.get("mask_input"), multimask_output=bool(a["multimask_output"]))


@pytest.mark.parametrize("path", IMAGE_DUMPS, ids=ids(IMAGE_DUMPS))
def test_predict_matches_official_and_c(path, impl):
    dump = read_dump(path)
    model = build_sam2(path)
    predictor = samc.SAM2ImagePredictor(model, impl=impl)
    assert predictor.impl == impl
    predictor.set_image(dump["arrays"]["image_u8"])
    oracle = capi.Predictor(capi.Model(path), impl)
    oracle.set_image(dump["arrays"]["image_u8"])
    for k, (d, a) in enumerate(dump["prompts"]):
        args = prompt_args(d, a)
        masks, iou, low = predictor.predict(**args, return_logits=True)
        ref = dump["outputs"][k]
        for name, got in (("masks", masks), ("iou_predictions", iou), ("low_res_masks", low)):
            assert got.dtype == np.float32
            assert rel(got, ref[name]) <= TOL[impl], f"prompt {k} {name}"
        c = oracle.predict(args["point_coords"], args["point_labels"], args["box"], args["mask_input"],
                           args["multimask_output"])
        for got, want in zip((masks, iou, low), c):
            np.testing.assert_array_equal(got, want)
        # 0/1 masks: the logits thresholded at 0, float32 as the official .float()
        binary, iou2, _ = predictor.predict(**args)
        np.testing.assert_array_equal(binary, (masks > 0).astype(np.float32))
        np.testing.assert_array_equal(iou2, iou)


def normalized(xy, h, w):
    """Pixel coordinates (..., 2k) as [0, 1] of the image, in float32 as
    transform_coords(normalize=True) divides them before * resolution."""
    xy = np.asarray(xy, np.float32)
    return xy / np.tile(np.array([w, h], np.float32), xy.shape[-1] // 2)


@pytest.mark.parametrize("path", IMAGE_DUMPS, ids=ids(IMAGE_DUMPS))
def test_normalize_coords_false(path):
    """normalize_coords=False: points and boxes already in [0, 1], scaled by
    the model size alone (transform_coords / transform_boxes with
    normalize=False). Given x / w in float32, the result is the pixel call's
    bit for bit, since that is the value the pixel call scales."""
    dump = read_dump(path)
    predictor = samc.SAM2ImagePredictor(build_sam2(path))
    img = dump["arrays"]["image_u8"]
    H, W = img.shape[:2]
    predictor.set_image(img)
    for d, a in dump["prompts"]:
        args = prompt_args(d, a)
        norm = dict(args)
        if args["point_coords"] is not None:
            norm["point_coords"] = normalized(args["point_coords"], H, W)
        if args["box"] is not None:
            norm["box"] = normalized(args["box"], H, W)
        for x, y in zip(predictor.predict(**args, return_logits=True),
                        predictor.predict(**norm, normalize_coords=False, return_logits=True)):
            np.testing.assert_array_equal(x, y)
    boxes = np.array([[30, 40, 170, 120], [50, 30, 160, 130]], np.float32)  # batched boxes, (B, 4)
    for x, y in zip(predictor.predict(box=boxes), predictor.predict(box=normalized(boxes, H, W), normalize_coords=False)):
        np.testing.assert_array_equal(x, y)
    # not the pixel values: a pixel point read as [0, 1] is outside the image
    with pytest.raises(samc.SamcArgumentError, match=r"outside \[0, 1\]"):
        predictor.predict([[80, 60]], [1], normalize_coords=False)


@pytest.fixture(scope="module")
def tiny_a():
    path = IMAGE_DUMPS[0]
    dump = read_dump(path)
    predictor = samc.SAM2ImagePredictor(build_sam2(path))
    predictor.set_image(dump["arrays"]["image_u8"])
    return path, dump, predictor


def test_batched_boxes(tiny_a):
    """(N, 4) boxes: one mask set per box, (N, C, H, W), as _predict with B boxes."""
    path, dump, predictor = tiny_a
    H, W = dump["arrays"]["image_u8"].shape[:2]
    boxes = np.array([[30, 40, 170, 120], [50, 30, 160, 130], [10, 10, 60, 50]], np.float32)
    masks, iou, low = predictor.predict(box=boxes, multimask_output=False, return_logits=True)
    S = predictor.low_res_size
    assert masks.shape == (3, 1, H, W) and iou.shape == (3, 1) and low.shape == (3, 1, S, S)
    oracle = capi.Predictor(capi.Model(path))
    oracle.set_image(dump["arrays"]["image_u8"])
    c_masks, c_iou = oracle.predict_batch(3, boxes=boxes, multimask=False)
    np.testing.assert_array_equal(masks, c_masks)
    np.testing.assert_array_equal(iou, c_iou)
    for b in range(3):  # each row as its own prompt: the same within rounding
        one, one_iou, _ = predictor.predict(box=boxes[b], multimask_output=False, return_logits=True)
        assert rel(masks[b], one) <= 1e-4 and rel(iou[b], one_iou) <= 1e-4
    # a (1, 4) box is one prompt: squeezed as the official predictor does
    assert predictor.predict(box=boxes[:1])[0].shape == (3, H, W)


def test_batched_points(tiny_a):
    _, dump, predictor = tiny_a
    H, W = dump["arrays"]["image_u8"].shape[:2]
    pts = np.array([[[80, 60]], [[150, 110]]], np.float32)
    masks, iou, low = predictor.predict(pts, np.ones((2, 1), np.int32))
    assert masks.shape == (2, 3, H, W) and iou.shape == (2, 3)
    assert set(np.unique(masks)) <= {0.0, 1.0}


def test_lists_and_float64_prompts(tiny_a):
    """Prompts as lists and float64 are converted as torch.as_tensor does."""
    _, _, predictor = tiny_a
    a = predictor.predict([[80.0, 60.0], [150.0, 110.0]], [1, 0])
    b = predictor.predict(np.array([[80, 60], [150, 110]], np.float64), np.array([1, 0], np.int64))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_image_batch(tiny_a):
    """set_image_batch + predict_batch: each image as set_image + predict."""
    path, dump, predictor = tiny_a
    img = dump["arrays"]["image_u8"]
    other = np.ascontiguousarray(img[::2, ::3])
    p2 = samc.SAM2ImagePredictor(predictor.model)
    p2.set_image_batch([img, other])
    coords = [np.array([[80, 60]], np.float32), np.array([[20, 30]], np.float32)]
    labels = [np.array([1]), np.array([1])]
    masks, ious, lows = p2.predict_batch(coords, labels, return_logits=True)
    assert len(masks) == 2 and masks[1].shape == (3,) + other.shape[:2]
    for i, im in enumerate((img, other)):
        single = samc.SAM2ImagePredictor(predictor.model)
        single.set_image(im)
        m, iou, low = single.predict(coords[i], labels[i], return_logits=True)
        assert rel(masks[i], m) <= 1e-4 and rel(ious[i], iou) <= 1e-4 and rel(lows[i], low) <= 1e-4
    with pytest.raises(RuntimeError, match="predict_batch"):
        p2.predict(coords[0], labels[0])
    # normalize_coords=False: each image's own size
    norm = [normalized(c, *im.shape[:2]) for c, im in zip(coords, (img, other))]
    for x, y in zip((masks, ious, lows), p2.predict_batch(norm, labels, return_logits=True, normalize_coords=False)):
        for xi, yi in zip(x, y):
            np.testing.assert_array_equal(xi, yi)


def test_embedding_and_reset(tiny_a):
    _, _, predictor = tiny_a
    emb = predictor.get_image_embedding()
    assert emb.ndim == 4 and emb.shape[0] == 1 and emb.dtype == np.float32
    assert isinstance(emb, samc.TensorArray) and emb.cpu().numpy().shape == emb.shape
    p = samc.SAM2ImagePredictor(predictor.model)
    with pytest.raises(RuntimeError, match="set_image"):
        p.predict([[1, 1]], [1])
    p.set_image(np.zeros((20, 30, 3), np.uint8))
    p.reset_predictor()
    with pytest.raises(RuntimeError, match="An image must be set"):
        p.get_image_embedding()


def test_mask_threshold(tiny_a):
    """mask_threshold binarises the logits (SAM2ImagePredictor(mask_threshold=))."""
    _, dump, predictor = tiny_a
    p = samc.SAM2ImagePredictor(predictor.model, mask_threshold=2.5)
    p.set_image(dump["arrays"]["image_u8"])
    logits, _, _ = p.predict([[80, 60]], [1], return_logits=True)
    masks, _, _ = p.predict([[80, 60]], [1])
    np.testing.assert_array_equal(masks, (logits > np.float32(2.5)).astype(np.float32))


def test_outputs_are_views_of_samc_memory(tiny_a):
    """The masks are samc's own buffer (no copy), kept alive by the array."""
    _, _, predictor = tiny_a
    masks, iou, low = predictor.predict([[80, 60]], [1], return_logits=True)
    assert masks.base is not None and not masks.flags.owndata
    keep = masks.copy()
    del iou, low
    import gc
    gc.collect()
    np.testing.assert_array_equal(masks, keep)


def test_overrides_and_threads(tiny_a):
    """One layer on ref inside a fast predictor, on one thread: the same
    masks within the fast tolerance, computed by another body."""
    path, dump, predictor = tiny_a
    model = build_sam2(path)
    p = samc.SAM2ImagePredictor(model, threads=1, overrides={"image_encoder.trunk.blocks.0": "ref"})
    assert p.threads == 1 and p.impl == "fast"
    p.set_image(dump["arrays"]["image_u8"])
    d, a = dump["prompts"][0]
    mixed, _, _ = p.predict(**prompt_args(d, a), return_logits=True)
    fast, _, _ = predictor.predict(**prompt_args(d, a), return_logits=True)
    assert rel(mixed, dump["outputs"][0]["masks"]) <= TOL["fast"]
    assert not np.array_equal(mixed, fast)  # the override did run another body
    with pytest.raises(samc.SamcArgumentError, match="no_such_layer"):
        samc.SAM2ImagePredictor(model, overrides=["no_such_layer=ref"])
    with pytest.raises(samc.SamcArgumentError):
        samc.SAM2ImagePredictor(model, impl="no_such_impl")


def test_transformers_format_checkpoint_is_the_same_model():
    """The hub's transformers-format safetensors (fixtures/ckpt/tiny_c_bf16_hf.safetensors,
    written by the converter's own key map) and the official .pt: the same masks, bit for bit."""
    from conftest import FIXTURES

    cfg = FIXTURES / "ckpt/tiny_c_bf16.config.json"
    image = samc.read_image(FIXTURES / "demo/demo.png")
    out = []
    for ckpt in ("tiny_c_bf16.pt", "tiny_c_bf16_hf.safetensors"):
        p = samc.SAM2ImagePredictor(samc.build_sam2(cfg, FIXTURES / "ckpt" / ckpt))
        p.set_image(image)
        out.append(p.predict([[100, 90]], [1], box=[40, 30, 280, 200], return_logits=True))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
