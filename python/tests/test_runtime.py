# SPDX-License-Identifier: Apache-2.0
"""What the binding does around the C calls: the GIL released while samc
computes, Ctrl-C and exceptions from callbacks turned into Python exceptions
once the call has returned, the library's log in `logging`."""
import logging
import os
import signal
import threading

import numpy as np
import pytest

import samc
from samc import _native
from conftest import AMG_DUMPS, IMAGE_DUMPS, build_sam2, read_dump


@pytest.fixture(scope="module")
def dump_a():
    return read_dump(IMAGE_DUMPS[0])


def test_gil_released_during_compute(dump_a):
    """Python code runs in another thread while set_image computes."""
    in_c = threading.Event()
    p = samc.SAM2ImagePredictor(build_sam2(IMAGE_DUMPS[0]), impl="ref", threads=1,
                                progress=lambda *a: in_c.set())  # the encoder has started
    img = dump_a["arrays"]["image_u8"]

    def encode():
        p.set_image(img)

    worker = threading.Thread(target=encode)
    worker.start()
    in_c.wait(30)
    spins = 0
    while worker.is_alive():
        spins += 1
    worker.join()
    assert spins > 1000, f"the main thread ran only {spins} iterations while samc computed"


def test_keyboard_interrupt_in_set_image(dump_a):
    """SIGINT during the encoder: KeyboardInterrupt out of set_image, no image
    left set, the predictor usable afterwards."""
    sent, seen, total = [], [], [0]

    def progress(what, done, n):
        seen.append(done)
        total[0] = n
        if not sent:
            sent.append(done)
            os.kill(os.getpid(), signal.SIGINT)

    p = samc.SAM2ImagePredictor(build_sam2(IMAGE_DUMPS[0]), progress=progress)
    with pytest.raises(KeyboardInterrupt):
        p.set_image(dump_a["arrays"]["image_u8"])
    if _native.HAS_ABORT:  # the library's abort callback stopped the encoder at the next layer
        assert len(seen) < total[0], f"the encoder ran all {total[0]} blocks after Ctrl-C"
    with pytest.raises(RuntimeError, match="An image must be set"):
        p.predict([[10, 10]], [1])
    p.set_image(dump_a["arrays"]["image_u8"])
    assert p.predict([[10, 10]], [1])[0].shape[0] == 3


def test_callback_exception_propagates(dump_a):
    def progress(what, done, total):
        raise ValueError(f"stop at {what} {done}/{total}")

    p = samc.SAM2ImagePredictor(build_sam2(IMAGE_DUMPS[0]), progress=progress)
    with pytest.raises(ValueError, match="stop at encode 1/"):
        p.set_image(dump_a["arrays"]["image_u8"])


def test_amg_progress_and_interrupt():
    dump = read_dump(AMG_DUMPS[0])
    seen = []

    def progress(what, done, total):
        seen.append((what, done, total))
        if len(seen) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    gen = samc.SAM2AutomaticMaskGenerator(build_sam2(AMG_DUMPS[0]), points_per_side=4,
                                          points_per_batch=4, progress=progress)
    with pytest.raises(KeyboardInterrupt):
        gen.generate(dump["arrays"]["image_u8"])
    assert seen[0][0] == "amg" and seen[-1][2] == 16
    assert len(gen.generate(dump["arrays"]["image_u8"])) >= 0 and seen[-1][1] == 16


def test_log_goes_to_logging(caplog):
    with caplog.at_level(logging.INFO, logger="samc"):
        samc.SAM2ImagePredictor(build_sam2(IMAGE_DUMPS[0]), impl="ref")
    assert any("impl ref" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_many_predictors_on_threads(dump_a):
    """One model, four predictors on four threads: the masks of one predictor
    run alone, bit for bit (docs/api.md's thread model through Python)."""
    model = build_sam2(IMAGE_DUMPS[0])
    img = dump_a["arrays"]["image_u8"]
    alone = samc.SAM2ImagePredictor(model, threads=1)
    alone.set_image(img)
    want = alone.predict([[80, 60]], [1], return_logits=True)[0]
    got = [None] * 4

    def run(i):
        p = samc.SAM2ImagePredictor(model, threads=1)
        p.set_image(img)
        got[i] = p.predict([[80, 60]], [1], return_logits=True)[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g in got:
        np.testing.assert_array_equal(g, want)
