# SPDX-License-Identifier: Apache-2.0
"""Write the video-file fixture and what OpenCV reads from it.

fixtures/video/clip_v1.mp4: the five frames of fixtures/video/tiny_v1_sam21_s128_frames as
H.264 (libx264, yuv420p, two B-frames, a key frame every three: frames that need
reordering and seeking), made with the ffmpeg command line. Re-encoding with another x264
gives other bytes: the committed file is the fixture, this records how it was made.

tests/data/video/clip_v1_cv2.json: the CRC-32 of every frame as SAM 3's official video-file
loader (sam3/model/io_utils.py, load_video_frames_from_video_file_using_cv2) sees it:
cv2.VideoCapture's frame converted BGR -> RGB, and that frame after
cv2.resize((S, S), interpolation=cv2.INTER_CUBIC), for S = 128 and 1024.
tests/test_video_file.c checks samc's frames against them.

Run with Debian's OpenCV (python3-opencv) and ffmpeg:
    /usr/bin/python3 tools/make_video_clip.py [--encode]
"""
import json
import subprocess
import sys
import zlib

import cv2

FRAMES = "fixtures/video/tiny_v1_sam21_s128_frames/%05d.jpg"
CLIP = "fixtures/video/clip_v1.mp4"
OUT = "tests/data/video/clip_v1_cv2.json"
SIZES = [128, 1024]


def encode():
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-framerate", "10", "-i", FRAMES, "-c:v", "libx264",
                    "-pix_fmt", "yuv420p", "-bf", "2", "-g", "3", CLIP], check=True)


def main():
    if "--encode" in sys.argv:
        encode()
    cap = cv2.VideoCapture(CLIP)
    frames = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        rec = {"crc32": zlib.crc32(rgb.tobytes())}
        for s in SIZES:
            rs = cv2.resize(rgb, (s, s), interpolation=cv2.INTER_CUBIC)
            rec["crc32_%d" % s] = zlib.crc32(rs.tobytes())
        frames.append(rec)
    h, w = rgb.shape[:2]
    doc = {"clip": CLIP, "opencv": cv2.__version__, "height": h, "width": w, "fps": cap.get(cv2.CAP_PROP_FPS),
           "sizes": SIZES, "frames": frames}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
