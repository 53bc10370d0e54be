# SPDX-License-Identifier: Apache-2.0
"""samc: Segment Anything 2 and 3 in C, from Python.

The official classes over the C library (docs/python.md):

    import samc
    model = samc.build_sam2("sam2.1_hiera_t", "sam2.1_hiera_tiny.pt")
    predictor = samc.SAM2ImagePredictor(model)           # sam2.sam2_image_predictor
    video = samc.build_sam2_video_predictor("sam2.1_hiera_t", "sam2.1_hiera_tiny.pt")
    generator = samc.SAM2AutomaticMaskGenerator(model)   # sam2.automatic_mask_generator
    processor = samc.Sam3Processor(samc.build_sam3_image_model(
        bpe_path="bpe_simple_vocab_16e6.txt.gz", checkpoint_path="sam3.pt"))
    tracker = samc.Sam3VideoPredictor(processor.model)       # sam3.model.sam3_video_predictor
"""
from .errors import (SamcArgumentError, SamcError, SamcFormatError, SamcInternalError, SamcIOError,
                     SamcMemoryError, SamcUnsupportedError)
from .model import Model, build_sam2, build_sam2_video_predictor, build_sam3_image_model, version
from .image_predictor import SAM2ImagePredictor
from .video_predictor import SAM2VideoPredictor
from .amg import SAM2AutomaticMaskGenerator
from .sam3 import Sam3Processor
from .sam3_video import Sam3VideoPredictor
from .arrays import TensorArray
from .images import read_image, write_png

__version__ = version()

__all__ = [
    "Model", "build_sam2", "build_sam2_video_predictor", "build_sam3_image_model", "version",
    "SAM2ImagePredictor", "SAM2VideoPredictor", "SAM2AutomaticMaskGenerator", "Sam3Processor", "Sam3VideoPredictor", "TensorArray", "read_image", "write_png",
    "SamcError", "SamcIOError", "SamcFormatError", "SamcArgumentError", "SamcMemoryError",
    "SamcUnsupportedError", "SamcInternalError",
]
