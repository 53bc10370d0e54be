# SPDX-License-Identifier: Apache-2.0
"""Import the official automatic mask generator (sam2/automatic_mask_generator.py,
sam2/utils/amg.py) in this environment.

The generator needs the real torchvision for `torchvision.ops.batched_nms` /
`box_area` (Debian: python3-torchvision, 0.14), and `remove_small_regions`
imports cv2 (Debian: python3-opencv).  sam2_shims.install() refuses a
torchvision older than 0.17, because SAM2Transforms would then resize
without antialias; here the real package is kept for its ops and only its
three transforms are replaced by the shim's exact torchvision >= 0.17
versions (sam2_shims.ToTensor / Resize / Normalize).  The `SAMC_SHIM` mark
tells sam2_shims.install() to leave that package alone.
"""

import sam2_build
import sam2_shims


def prepare_torchvision():
    """Real torchvision ops + exact >= 0.17 transforms; returns the version."""
    try:
        import torchvision
        import torchvision.ops  # noqa: F401  (batched_nms, box_area)
        import torchvision.transforms as transforms
    except ImportError as e:
        raise SystemExit(f"the automatic mask generator needs torchvision's batched_nms "
                         f"(Debian: apt-get install python3-torchvision): {e}")
    version = tuple(int(p) for p in torchvision.__version__.split(".")[:2])
    if version < (0, 17):
        transforms.ToTensor = sam2_shims.ToTensor
        transforms.Resize = sam2_shims.Resize
        transforms.Normalize = sam2_shims.Normalize
        torchvision.SAMC_SHIM = True
    return torchvision.__version__


def import_official(src=None):
    """Shims, torchvision, then the official package; returns (root, pkg)."""
    prepare_torchvision()
    return sam2_build.import_sam2(src)
