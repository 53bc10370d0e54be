# SPDX-License-Identifier: Apache-2.0
"""The official API's calls, unchanged, on samc's classes: official_api_script.py
run as a user runs a script."""
import os
import subprocess
import sys

from conftest import FIXTURES, REPO


def test_official_script_runs_unchanged():
    script = os.path.join(os.path.dirname(__file__), "official_api_script.py")
    args = [str(FIXTURES / "ckpt/tiny_c_f32.config.json"), str(FIXTURES / "ckpt/tiny_c_f32.pt"),
            str(FIXTURES / "video/tiny_v1_sam21_s128_frames"), str(FIXTURES / "sam3/tiny_s2_sam3.pt"),
            str(FIXTURES / "sam3/tiny_s2_sam3.config.json"),
            str(REPO / "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz")]
    r = subprocess.run([sys.executable, script] + args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "official API script: OK" in r.stdout
