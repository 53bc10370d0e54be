# SPDX-License-Identifier: Apache-2.0
"""Write tests/data/pil_bicubic.bin and pil_bilinear.bin: inputs and Pillow's
Image.resize outputs (the default BICUBIC; BILINEAR, as torchvision's TF.resize
of a PIL image in SAM 3's frame loader), for tests/test_resize_pil.c.

Run with Debian's Pillow: /usr/bin/python3 tools/make_pil_cases.py
Format: repeated [int32 h, w, H, W][h*w*3 uint8 input][H*W*3 uint8 output].
"""
import numpy as np
from PIL import Image

CASES = [(37, 53, 61, 45), (120, 80, 32, 48), (20, 30, 70, 50), (10, 300, 40, 20), (16, 16, 16, 40)]


def write(path, resample):
    rng = np.random.default_rng(0)
    with open(path, "wb") as out:
        for h, w, H, W in CASES:
            a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            yy, xx = np.mgrid[0:h, 0:w]
            a[..., 0] = ((np.sin(yy / 7.0) + np.cos(xx / 5.0) + 2) * 60).astype(np.uint8)
            b = np.array(Image.fromarray(a).resize((W, H), resample))
            out.write(np.array([h, w, H, W], np.int32).tobytes())
            out.write(a.tobytes())
            out.write(b.tobytes())


def main():
    write("tests/data/pil_bicubic.bin", Image.BICUBIC)
    write("tests/data/pil_bilinear.bin", Image.BILINEAR)


if __name__ == "__main__":
    main()
