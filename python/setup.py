# SPDX-License-Identifier: Apache-2.0
"""Build and install the samc Python package (docs/python.md).

    pip install --no-build-isolation ./python

compiles samc._samc_cffi against the public headers and libsamc.so
(build_ffi.py says where they are looked for) and puts a copy of the shared
library beside it, so the installed package needs neither the build tree nor
LD_LIBRARY_PATH.
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # build_ffi.py, beside this file


def version():
    """SAMC_VERSION_STRING of include/samc.h: one version for C and Python."""
    import build_ffi

    inc, _ = build_ffi.locate()
    with open(os.path.join(inc, "samc.h"), encoding="utf-8") as f:
        m = re.search(r'#define SAMC_VERSION_STRING "([^"]+)"', f.read())
    return m.group(1)


def soname(path):
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else os.path.basename(path)


class BuildExtWithLib(build_ext):
    """build_ext, then libsamc.so.MAJOR.MINOR copied next to the extension
    (which finds it through its $ORIGIN rpath)."""

    def run(self):
        super().run()
        import build_ffi

        _, libdir = build_ffi.locate()
        src = os.path.realpath(os.path.join(libdir, "libsamc.so"))
        dest_dir = os.path.join(self.build_lib, "samc")
        os.makedirs(dest_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dest_dir, soname(src)))
        if self.inplace:
            shutil.copyfile(src, os.path.join(HERE, "samc", soname(src)))


setup(
    name="samc",
    version=version(),
    description="Segment Anything 2 and 3 in C, from Python: the official predictor classes over libsamc",
    packages=["samc"],
    python_requires=">=3.9",
    install_requires=["numpy", "cffi>=1.15"],
    extras_require={"batch": ["distributed"], "test": ["pytest", "h5py"]},
    setup_requires=["cffi>=1.15"],
    cffi_modules=["build_ffi.py:ffibuilder"],
    cmdclass={"build_ext": BuildExtWithLib},
    entry_points={"console_scripts": ["samc-batch=samc.batch:main"]},
    zip_safe=False,
)
