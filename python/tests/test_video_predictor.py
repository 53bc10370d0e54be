# SPDX-License-Identifier: Apache-2.0
"""SAM2VideoPredictor on the committed video dumps: every propagated frame
within the harness tolerance of the official one and bit-equal to the C
tracker's; the generator stops cleanly when left early or interrupted."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import samc
import capi
from conftest import TOL, VIDEO_DUMPS, build_sam2, ids, read_dump, rel


def frames_dir(path):
    return path.with_name(path.stem + "_frames")


def apply_prompts(predictor, state, prompts):
    for d, a in prompts:
        if "mask" in d:
            out = predictor.add_new_mask(state, a["frame_idx"], a["obj_id"], d["mask"].astype(bool))
        else:
            has_pts = len(d["point_coords"]) > 0
            out = predictor.add_new_points_or_box(state, a["frame_idx"], a["obj_id"],
                                                  points=d["point_coords"] if has_pts else None,
                                                  labels=d["point_labels"] if has_pts else None, box=d.get("box"),
                                                  clear_old_points=bool(a.get("clear_old_points", 1)))
        frame_idx, obj_ids, masks = out
        assert frame_idx == a["frame_idx"] and a["obj_id"] in obj_ids
        assert masks.shape == (len(obj_ids), 1, state["video_height"], state["video_width"])


def propagate_args(inputs):
    return dict(start_frame_idx=inputs.get("start_frame_idx"),
                max_frame_num_to_track=inputs.get("max_frame_num_to_track"), reverse=bool(inputs.get("reverse")))


@pytest.mark.parametrize("path", VIDEO_DUMPS, ids=ids(VIDEO_DUMPS))
def test_propagate_matches_official_and_c(path, impl):
    dump = read_dump(path)
    predictor = samc.SAM2VideoPredictor(build_sam2(path), impl=impl)
    state = predictor.init_state(frames_dir(path))
    T, H, W = dump["arrays"]["frames_u8"].shape[:3]
    assert (state["num_frames"], state["video_height"], state["video_width"]) == (T, H, W)
    apply_prompts(predictor, state, dump["prompts"])
    args = propagate_args(dump["inputs"])
    got = {t: (obj_ids, masks) for t, obj_ids, masks in predictor.propagate_in_video(state, **args)}
    assert sorted(got) == sorted(dump["outputs"])
    for t, (obj_ids, masks) in got.items():
        assert masks.dtype == np.float32 and isinstance(masks, samc.TensorArray)
        for i, obj in enumerate(obj_ids):
            assert rel(masks[i, 0], dump["outputs"][t][obj]) <= TOL[impl], f"frame {t} object {obj}"
    start = -1 if args["start_frame_idx"] is None else args["start_frame_idx"]
    count = -1 if args["max_frame_num_to_track"] is None else args["max_frame_num_to_track"]
    c = capi.track(capi.Model(path), frames_dir(path), dump["prompts"], start, count, args["reverse"], impl)
    assert sorted(c) == sorted(got)
    for t in c:
        assert c[t][0] == got[t][0]
        np.testing.assert_array_equal(c[t][1], got[t][1])


@pytest.fixture()
def v1():
    path = VIDEO_DUMPS[0]
    dump = read_dump(path)
    predictor = samc.SAM2VideoPredictor(build_sam2(path))
    return path, dump, predictor


def test_frames_in_memory(v1):
    """init_state on a (T, H, W, 3) array gives what the JPEG directory gives
    when the frames are the decoded JPEGs (the dump's frames_u8)."""
    path, dump, predictor = v1
    a = predictor.init_state(frames_dir(path))
    b = predictor.init_state(dump["arrays"]["frames_u8"])
    for s in (a, b):
        apply_prompts(predictor, s, dump["prompts"])
    ra = list(predictor.propagate_in_video(a, **propagate_args(dump["inputs"])))
    rb = list(predictor.propagate_in_video(b, **propagate_args(dump["inputs"])))
    assert [r[0] for r in ra] == [r[0] for r in rb]
    for x, y in zip(ra, rb):
        np.testing.assert_array_equal(x[2], y[2])


def test_generator_left_early_then_state_usable(v1):
    path, dump, predictor = v1
    state = predictor.init_state(frames_dir(path))
    apply_prompts(predictor, state, dump["prompts"][:1])
    gen = predictor.propagate_in_video(state)
    first = next(gen)
    assert first[0] == 0
    gen.close()
    predictor.add_new_points_or_box(state, 0, 1, points=[[60, 45]], labels=[1], clear_old_points=False)
    frames = [t for t, _, _ in predictor.propagate_in_video(state)]
    assert frames == list(range(state["num_frames"]))


def test_keyboard_interrupt_stops_propagation(v1):
    """Ctrl-C during tracking: KeyboardInterrupt in the caller at the next
    frame boundary, the state usable afterwards."""
    path, dump, predictor = v1
    p = samc.SAM2VideoPredictor(predictor.model)
    state = p.init_state(frames_dir(path))
    apply_prompts(p, state, dump["prompts"][:1])
    seen = []
    with pytest.raises(KeyboardInterrupt):
        for t, _, _ in p.propagate_in_video(state):
            seen.append(t)
            if len(seen) == 2:  # SIGINT lands while the loop sleeps or C computes the next frame
                threading.Timer(0.001, os.kill, (os.getpid(), signal.SIGINT)).start()
            time.sleep(0.01)
    assert 2 <= len(seen) < state["num_frames"]
    assert len(list(p.propagate_in_video(state))) == state["num_frames"]


def test_normalize_coords_false(v1):
    """add_new_points_or_box(normalize_coords=False): points and box in
    [0, 1] of the video size, multiplied by the model size alone; x / W in
    float32 gives the pixel call's masks bit for bit, on the prompt and
    through propagation."""
    path, dump, predictor = v1
    H, W = dump["arrays"]["frames_u8"].shape[1:3]
    scale = np.array([W, H], np.float32)
    pts, box = np.array([[50, 40], [30, 25]], np.float32), np.array([10, 10, 60, 50], np.float32)
    runs = []
    for norm in (False, True):
        state = predictor.init_state(frames_dir(path))
        p, b = (pts / scale, box / np.tile(scale, 2)) if norm else (pts, box)
        first = predictor.add_new_points_or_box(state, 0, 1, points=p, labels=[1, 0], normalize_coords=not norm)
        second = predictor.add_new_points_or_box(state, 0, 2, box=b, normalize_coords=not norm)
        runs.append([first, second] + list(predictor.propagate_in_video(state)))
    for x, y in zip(*runs):
        assert x[0] == y[0] and list(x[1]) == list(y[1])
        np.testing.assert_array_equal(x[2], y[2])


def test_remove_and_reset(v1):
    path, dump, predictor = v1
    state = predictor.init_state(frames_dir(path))
    predictor.add_new_points_or_box(state, 0, 1, points=[[50, 40]], labels=[1])
    predictor.add_new_points_or_box(state, 0, 7, box=[10, 10, 60, 50])
    assert state["obj_ids"] == [1, 7]
    obj_ids, updated = predictor.remove_object(state, 7)
    assert obj_ids == [1] and updated == []
    assert all(ids == [1] for _, ids, _ in predictor.propagate_in_video(state))
    with pytest.raises(RuntimeError, match="doesn't exist"):
        predictor.remove_object(state, 7, strict=True)
    predictor.reset_state(state)
    assert state["obj_ids"] == []
    with pytest.raises(samc.SamcArgumentError, match="no points, box or mask"):
        list(predictor.propagate_in_video(state))


def test_video_file(v1):
    """init_state on a video file (fixtures/video/clip_v1.mp4, the v1 frames as
    H.264): the size and count of the video, a propagation over every frame."""
    path, dump, predictor = v1
    clip = path.parent / "clip_v1.mp4"
    state = predictor.init_state(clip)
    assert (state["num_frames"], state["video_height"], state["video_width"]) == (5, 96, 144)
    predictor.add_new_points_or_box(state, 0, 1, points=[[72, 48]], labels=[1])
    frames = [f for f, _, _ in predictor.propagate_in_video(state)]
    assert frames == [0, 1, 2, 3, 4]
    with pytest.raises(samc.SamcError, match="cannot open as a video"):
        predictor.init_state(path)  # a parity dump is not a video
