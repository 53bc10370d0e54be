# SPDX-License-Identifier: Apache-2.0
"""Sam3VideoPredictor on fixtures/sam3_video/tiny_vt_loop.h5, as
tests/test_sam3_video_api.c checks the C API: the text prompt (request 0),
its propagation in both directions (request 1) and the clicks refining an
object (request 2) give the official ids, probabilities and boxes (1e-4)
and masks (bit for bit) of every frame, with fast and ref; then the
refusals (a SAM 2 model, an unknown object id, bad prompts, closed sessions)."""
import h5py
import numpy as np
import pytest

import samc
from PIL import Image
from conftest import FIXTURES, load_model

LOOP = FIXTURES / "sam3_video" / "tiny_vt_loop.h5"


def _official(g):
    return {k: g[k][()] for k in ("out_obj_ids", "out_probs", "out_boxes_xywh", "out_binary_masks")}


@pytest.fixture(scope="module")
def loop():
    with h5py.File(LOOP, "r") as f:
        req = {k: dict(f["inputs/requests"][k].attrs) for k in ("0", "1", "2")}
        points = f["inputs/requests/2/points"][()]
        labels = f["inputs/requests/2/point_labels"][()]
        frames = f["inputs/frames_u8"][()]
        yields = f["outputs/requests/1/yields"]
        official = {"0": _official(f["outputs/requests/0"]), "2": _official(f["outputs/requests/2"]),
                    "1": [(int(yields[k].attrs["frame_index"]), _official(yields[k]))
                          for k in sorted(yields.keys(), key=int)]}
    return load_model(LOOP), frames, req, points, labels, official


def check(out, want):
    np.testing.assert_array_equal(out["out_obj_ids"], want["out_obj_ids"].astype(np.int64))
    assert out["out_obj_ids"].dtype == np.int64 and out["out_binary_masks"].dtype == np.bool_
    np.testing.assert_allclose(out["out_probs"], want["out_probs"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out["out_boxes_xywh"], want["out_boxes_xywh"], rtol=0, atol=1e-4)
    np.testing.assert_array_equal(out["out_binary_masks"], want["out_binary_masks"] != 0)


def test_loop_matches_official(loop, impl):
    model, frames, req, points, labels, official = loop
    predictor = samc.Sam3VideoPredictor(model, impl=impl, threads=2)
    sid = predictor.handle_request({"type": "start_session", "resource_path": frames})["session_id"]
    r = predictor.handle_request({"type": "add_prompt", "session_id": sid,
                                  "frame_index": int(req["0"]["frame_index"]), "text": req["0"]["text"]})
    assert r["frame_index"] == req["0"]["frame_index"]
    check(r["outputs"], official["0"])
    got = list(predictor.handle_stream_request({"type": "propagate_in_video", "session_id": sid,
                                                "propagation_direction": "both"}))
    assert [g["frame_index"] for g in got] == [f for f, _ in official["1"]]  # every official yield, no more
    for g, (_, want) in zip(got, official["1"]):
        check(g["outputs"], want)
    r = predictor.add_prompt(sid, int(req["2"]["frame_index"]), points=points.tolist(), point_labels=labels,
                             obj_id=int(req["2"]["obj_id"]))
    check(r["outputs"], official["2"])
    gen = predictor.propagate_in_video(sid, "both", None, None)  # left after one frame: stops there
    first = next(gen)
    with pytest.raises(samc.SamcArgumentError, match="inside one of the session's callbacks"):
        predictor.remove_object(sid, 0)  # the C call is open until the loop ends
    gen.close()
    again = list(predictor.propagate_in_video(sid, "both", None, None))
    assert again[0]["frame_index"] == first["frame_index"] and len(again) == len(got)
    for x, y in zip(first["outputs"].values(), again[0]["outputs"].values()):
        np.testing.assert_array_equal(x, y)
    assert predictor.close_session(sid) == {"is_success": True}
    assert predictor.close_session(sid) == {"is_success": True}  # idempotent, as officially


def test_frames_dir_remove_and_reset(loop, tmp_path):
    """A session on a directory of JPEG frames; remove_object and
    reset_session as the C session does them."""
    model, frames, *_ = loop
    for i, fr in enumerate(frames):
        Image.fromarray(fr).save(tmp_path / f"{i:05d}.jpg", quality=95)
    predictor = samc.Sam3VideoPredictor(model)
    sid = predictor.start_session(str(tmp_path))["session_id"]
    predictor.add_prompt(sid, 2, text="a red car")
    fwd = list(predictor.propagate_in_video(sid, "forward", None, 3))
    assert [g["frame_index"] for g in fwd] == [2, 3, 4, 5]  # start + max, as officially
    r = predictor.add_prompt(sid, 3, points=[[0.5, 0.45]], point_labels=[1], obj_id=7)  # a new object
    assert 7 in r["outputs"]["out_obj_ids"].tolist()
    assert r["outputs"]["out_binary_masks"].shape[1:] == frames.shape[1:3]
    assert predictor.remove_object(sid, 7) == {"is_success": True}
    with pytest.raises(samc.SamcArgumentError):
        predictor.remove_object(sid, 7)  # gone: unknown
    predictor.reset_session(sid)
    with pytest.raises(samc.SamcArgumentError, match="no prompts"):
        list(predictor.propagate_in_video(sid, "forward"))
    predictor.shutdown()


def test_refusals(loop):
    model, frames, *_ = loop
    with pytest.raises(samc.SamcArgumentError, match="Sam3VideoPredictor needs a SAM 3 model"):
        samc.Sam3VideoPredictor(load_model(FIXTURES / "tiny_a_sam21_s128.h5"))
    predictor = samc.Sam3VideoPredictor(model)
    sid = predictor.start_session(frames)["session_id"]
    predictor.add_prompt(sid, 2, text="a red car")
    with pytest.raises(samc.SamcArgumentError):
        predictor.remove_object(sid, 12345)  # unknown object id: samc's message
    with pytest.raises(samc.SamcArgumentError, match="outside the video"):
        predictor.add_prompt(sid, 99, points=[[0.5, 0.5]], point_labels=[1], obj_id=9)
    with pytest.raises(samc.SamcArgumentError, match="must lie in the 64 x 48 frame"):
        predictor.add_prompt(sid, 1, points=[[1.01, 0.2]], point_labels=[1], obj_id=9)
    with pytest.raises(samc.SamcArgumentError, match="obj_id must be provided"):
        predictor.add_prompt(sid, 1, points=[[0.5, 0.5]], point_labels=[1])
    with pytest.raises(samc.SamcArgumentError):
        predictor.add_prompt(sid, 0, text="")
    with pytest.raises(samc.SamcArgumentError):
        predictor.add_prompt(sid, 0)  # no text, no box
    with pytest.raises(samc.SamcUnsupportedError, match="one box"):
        predictor.add_prompt(sid, 0, bounding_boxes=[[0.1, 0.1, 0.2, 0.2]] * 2, bounding_box_labels=[1, 1])
    with pytest.raises(ValueError, match="invalid propagation direction"):
        predictor.propagate_in_video(sid, "sideways")
    with pytest.raises(samc.SamcIOError):
        predictor.start_session("/nonexistent-frames-dir")
    with pytest.raises(samc.SamcArgumentError, match="uint8"):
        predictor.start_session(frames.astype(np.float32))
    predictor.close_session(sid)
    with pytest.raises(RuntimeError, match="Cannot find session"):
        predictor.add_prompt(sid, 0, text="a red car")
    with pytest.raises(RuntimeError, match="invalid request type"):
        predictor.handle_request({"type": "teleport"})
