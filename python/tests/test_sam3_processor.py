# SPDX-License-Identifier: Apache-2.0
"""Sam3Processor on the committed SAM 3 dumps: each prompt session's
results within the harness tolerance of the official ones and equal to the
C API's; the state dict as the official processor leaves it."""
import numpy as np
import pytest

import samc
import capi
from conftest import FIXTURES, SAM3_DUMPS, TOL, ids, load_model, read_dump, rel


def run_session(processor, state, d, a):
    processor.reset_all_prompts(state)
    if "text" in a:
        state = processor.set_text_prompt(a["text"], state)
    for box, label in zip(d.get("box_cxcywh", []), d.get("box_labels", [])):
        state = processor.add_geometric_prompt(box.tolist(), bool(label), state)
    return state


@pytest.mark.parametrize("path", SAM3_DUMPS, ids=ids(SAM3_DUMPS))
def test_sessions_match_official_and_c(path, impl):
    dump = read_dump(path)
    thr = dump["inputs"]["confidence_threshold"]
    model = load_model(path)
    processor = samc.Sam3Processor(model, confidence_threshold=thr, impl=impl)
    img = dump["arrays"]["image_u8"]
    state = processor.set_image(img)
    assert (state["original_height"], state["original_width"]) == img.shape[:2]
    oracle = capi.Sam3(capi.Model(path), thr, impl)
    for k, (d, a) in enumerate(dump["prompts"]):
        state = run_session(processor, state, d, a)
        ref = dump["outputs"][k]
        M = len(ref["scores"])
        assert state["masks_logits"].shape == (M, 1) + img.shape[:2] and state["masks"].dtype == np.bool_
        assert rel(state["scores"], ref["scores"]) <= TOL[impl]
        assert rel(state["boxes"], ref["boxes"]) <= TOL[impl]
        assert rel(state["masks_logits"][:, 0], ref["masks"]) <= TOL[impl]
        np.testing.assert_array_equal(state["masks"], state["masks_logits"] > 0.5)
        c = oracle.run(img, a.get("text"), d.get("box_cxcywh", []), d.get("box_labels", []))
        for got, want in zip((state["scores"], state["boxes"], state["masks_logits"][:, 0]), c):
            np.testing.assert_array_equal(got, want)


def test_checkpoint_and_threshold():
    """A SAM 3 checkpoint (.pt) with the tokenizer vocabulary, through the
    official builder; set_confidence_threshold re-filters a state."""
    model = samc.build_sam3_image_model(bpe_path=FIXTURES.parent / "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz",
                                        checkpoint_path=FIXTURES / "sam3/tiny_s2_sam3.pt",
                                        config=str(FIXTURES / "sam3/tiny_s2_sam3.config.json"))
    assert model.family == "sam3"
    processor = samc.Sam3Processor(model, confidence_threshold=0.0)
    rng = np.random.default_rng(0)
    state = processor.set_image(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8))
    state = processor.set_text_prompt("a cat", state)
    n_all = len(state["scores"])
    assert n_all > 0 and state["boxes"].shape == (n_all, 4)
    cut = float(np.median(state["scores"]))
    state = processor.set_confidence_threshold(cut, state)
    assert len(state["scores"]) == int(np.sum(np.float32(state["scores"]) > np.float32(cut))) < n_all
    assert np.all(state["scores"] > cut)
    processor.reset_all_prompts(state)
    assert "scores" not in state and "backbone_out" in state
    with pytest.raises(ValueError, match="set_image"):
        processor.set_text_prompt("a cat", {})
    with pytest.raises(samc.SamcArgumentError, match="Sam3Processor needs a SAM 3 model"):
        samc.Sam3Processor(load_model(FIXTURES / "tiny_a_sam21_s128.h5"))
