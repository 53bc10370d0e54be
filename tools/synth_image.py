#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Seeded synthetic RGB test images: a colour gradient with soft-edged
ellipses and rotated rectangles, plus +-2 of noise.  Smooth regions give the
model shapes to segment; the noise keeps the image from being piecewise flat.

  /usr/bin/python3 tools/synth_image.py --size 240x320 --seed 7 --out demo.png
(--size is HxW).  Deterministic for a given numpy version (RandomState).
"""

import argparse

import numpy as np


def _coverage(dist):
    """Soft edge: 1 inside, 0 outside, linear over one pixel at the border."""
    return np.clip(0.5 - dist, 0.0, 1.0)


def _ellipse(yy, xx, cy, cx, ry, rx, angle):
    c, s = np.cos(angle), np.sin(angle)
    u = ((xx - cx) * c + (yy - cy) * s) / rx
    v = (-(xx - cx) * s + (yy - cy) * c) / ry
    r = np.sqrt(u * u + v * v)
    return _coverage((r - 1.0) * min(rx, ry))  # approx. distance in pixels


def _rectangle(yy, xx, cy, cx, hy, hx, angle):
    c, s = np.cos(angle), np.sin(angle)
    u = np.abs((xx - cx) * c + (yy - cy) * s) - hx
    v = np.abs(-(xx - cx) * s + (yy - cy) * c) - hy
    return _coverage(np.maximum(u, v))


def synth_image(h, w, seed, num_shapes=None):
    """uint8 [h, w, 3] image; same (h, w, seed) -> same pixels."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    c0, c1 = rng.uniform(40, 215, 3), rng.uniform(40, 215, 3)
    theta = rng.uniform(0, 2 * np.pi)
    t = (xx * np.cos(theta) + yy * np.sin(theta))
    t = (t - t.min()) / max(t.max() - t.min(), 1e-9)
    img = c0 * (1 - t[..., None]) + c1 * t[..., None]
    n = num_shapes or rng.randint(5, 9)
    scale = min(h, w)
    for _ in range(n):
        cy, cx = rng.uniform(0.1, 0.9) * h, rng.uniform(0.1, 0.9) * w
        a, b = rng.uniform(0.08, 0.3, 2) * scale
        angle = rng.uniform(0, np.pi)
        color = rng.uniform(0, 255, 3)
        shape = _ellipse if rng.rand() < 0.5 else _rectangle
        alpha = shape(yy, xx, cy, cx, a, b, angle)[..., None]
        img = img * (1 - alpha) + color * alpha
    img = img + rng.uniform(-2, 2, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def parse_hw(text):
    h, w = text.lower().split("x")
    return int(h), int(w)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="240x320", help="HxW")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help=".png or .jpg")
    a = p.parse_args()
    from PIL import Image
    h, w = parse_hw(a.size)
    Image.fromarray(synth_image(h, w, a.seed)).save(a.out)


if __name__ == "__main__":
    main()
