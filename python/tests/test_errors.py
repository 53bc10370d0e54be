# SPDX-License-Identifier: Apache-2.0
"""Bad input raises a clear Python exception carrying samc's message (or the
package's own check, before anything is computed); nothing crashes."""
import numpy as np
import pytest

import samc
from conftest import FIXTURES, IMAGE_DUMPS, SAM3_DUMPS, build_sam2, load_model, read_dump

IMG = np.zeros((40, 60, 3), np.uint8)


@pytest.fixture(scope="module")
def predictor():
    p = samc.SAM2ImagePredictor(build_sam2(IMAGE_DUMPS[0]))
    p.set_image(IMG)
    return p


def test_missing_and_bad_files(tmp_path):
    with pytest.raises(samc.SamcIOError, match="no_such.pt") as e:
        samc.Model(tmp_path / "no_such.pt")
    assert isinstance(e.value, OSError) and e.value.status == "io"
    bad = tmp_path / "garbage.pt"
    bad.write_bytes(b"PK\x03\x04 this is not a checkpoint")
    with pytest.raises(samc.SamcError, match="garbage.pt"):
        samc.Model(bad)
    with pytest.raises(samc.SamcError, match="no_such_preset"):
        samc.build_sam2("configs/sam2.1/no_such_preset.yaml", FIXTURES / "ckpt/tiny_c_f32.pt")
    with pytest.raises(samc.SamcArgumentError, match="ckpt_path is required"):
        samc.build_sam2("sam2.1_hiera_t")
    with pytest.raises(samc.SamcArgumentError, match="build_sam2 needs a SAM 2 model"):
        samc.build_sam2(FIXTURES / "sam3/tiny_s2_sam3.config.json", FIXTURES / "sam3/tiny_s2_sam3.pt",
                        vocab=FIXTURES.parent / "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz")


@pytest.mark.parametrize("image, message", [
    (IMG.astype(np.float32), "must be uint8"),
    (IMG[:, :, 0], r"shape \(H, W, 3\)"),
    (np.zeros((40, 60, 4), np.uint8), r"shape \(H, W, 3\)"),
    (IMG[:, ::2], "C-contiguous"),
    (np.zeros((0, 60, 3), np.uint8), "empty"),
    ([[1, 2, 3]], "numpy array"),
])
def test_bad_images(predictor, image, message):
    with pytest.raises(samc.SamcArgumentError, match=message):
        predictor.set_image(image)


@pytest.mark.parametrize("kwargs, message", [
    (dict(point_coords=[[70, 10]], point_labels=[1]), "outside the 60x40 image"),
    (dict(point_coords=[[-1, 10]], point_labels=[1]), "outside"),
    (dict(point_coords=[[10, np.nan]], point_labels=[1]), "non-finite"),
    (dict(point_coords=[[10, 10]]), "point_labels must be supplied"),
    (dict(point_coords=[[10, 10], [5, 5]], point_labels=[1]), "point_labels must have shape"),
    (dict(point_coords=[10, 10, 5], point_labels=[1]), "point_coords must be"),
    (dict(point_coords=[[10, 10]], point_labels=[7]), "label 7"),
    (dict(point_coords=[[10, 10]], point_labels=[1.5]), "integers"),
    (dict(box=[50, 30, 10, 5]), "x1 < x0"),
    (dict(box=[1, 2, 3]), "box must be"),
    (dict(box=[[0, 0, 9, 9], [0, 0, 5, 5]], point_coords=[[1, 1]], point_labels=[1]), "one box per prompt"),
    (dict(point_coords=[[10, 10]], point_labels=[1], mask_input=np.zeros((1, 32, 32))), "float32"),
    (dict(point_coords=[[10, 10]], point_labels=[1], mask_input=np.zeros((1, 16, 16), np.float32)),
     r"shape \(1, 32, 32\)"),
    (dict(point_coords=[[10, 10]], point_labels=[1],
          mask_input=np.zeros((1, 32, 64), np.float32)[:, :, ::2]), "shape|C-contiguous"),
])
def test_bad_prompts(predictor, kwargs, message):
    with pytest.raises(samc.SamcArgumentError, match=message):
        predictor.predict(**kwargs)


def test_unsupported_options_are_refused(predictor):
    with pytest.raises(NotImplementedError):
        samc.build_sam2(None, FIXTURES / "ckpt/tiny_c_f32.pt", apply_postprocessing=False)
    with pytest.raises(samc.SamcArgumentError, match="threads"):
        samc.SAM2ImagePredictor(predictor.model, threads=-2)
    with pytest.raises(samc.SamcArgumentError, match="samc.Model"):
        samc.SAM2ImagePredictor("sam2.1_hiera_tiny.pt")


def test_bad_video_input(tmp_path):
    path = FIXTURES / "video/tiny_v1_sam21_s128.h5"
    vp = samc.SAM2VideoPredictor(build_sam2(path))
    with pytest.raises(samc.SamcIOError, match="no_frames_here"):
        vp.init_state(tmp_path / "no_frames_here")
    with pytest.raises(samc.SamcArgumentError, match="uint8 of shape"):
        vp.init_state(np.zeros((2, 8, 8, 3), np.float32))
    state = vp.init_state(path.with_name(path.stem + "_frames"))
    with pytest.raises(samc.SamcArgumentError, match="frame"):
        vp.add_new_points_or_box(state, 99, 1, points=[[10, 10]], labels=[1])
    with pytest.raises(ValueError, match="provided together"):
        vp.add_new_points_or_box(state, 0, 1, points=[[10, 10]])
    with pytest.raises(ValueError, match="without clearing old points"):
        vp.add_new_points_or_box(state, 0, 1, box=[1, 1, 9, 9], clear_old_points=False)
    with pytest.raises(samc.SamcArgumentError, match="2-D"):
        vp.add_new_mask(state, 0, 1, np.zeros((2, 3, 4)))


def test_bad_sam3_input():
    dump = read_dump(SAM3_DUMPS[0])
    proc = samc.Sam3Processor(load_model(SAM3_DUMPS[0]))
    state = proc.set_image(dump["arrays"]["image_u8"])
    with pytest.raises(samc.SamcArgumentError, match="non-empty string"):
        proc.set_text_prompt("", state)
    with pytest.raises(samc.SamcArgumentError, match="normalised"):
        proc.add_geometric_prompt([10, 10, 5, 5], True, state)
    with pytest.raises(samc.SamcUnsupportedError, match="resolution"):
        samc.Sam3Processor(proc.model, resolution=512)


def test_read_and_write_images(tmp_path):
    img = samc.read_image(FIXTURES / "demo/demo.png")
    assert img.dtype == np.uint8 and img.shape == (240, 320, 3)
    samc.write_png(tmp_path / "m.png", img[:, :, 0] > 128)
    back = samc.read_image(tmp_path / "m.png")
    np.testing.assert_array_equal(back[:, :, 0], np.where(img[:, :, 0] > 128, 255, 0))
    with pytest.raises(samc.SamcIOError, match="nope.png"):
        samc.read_image(tmp_path / "nope.png")
    with pytest.raises(samc.SamcArgumentError, match="uint8"):
        samc.write_png(tmp_path / "x.png", np.zeros((4, 4), np.float32))
