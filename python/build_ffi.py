# SPDX-License-Identifier: Apache-2.0
"""cffi builder of samc._samc_cffi (API mode, out of line).

The declarations are the public headers themselves (include/samc*.h), read
at build time with the preprocessor lines removed, so the binding cannot
drift from the C API: the C compiler checks every declaration, struct layout
and enum value against the real headers when the module is compiled. Only the
callbacks that Python implements are declared here.

Where the library comes from (checked in this order):
  SAMC_BUILD_DIR  a CMake build directory of samc (libsamc.so; the headers
                  from SAMC_INCLUDE_DIR, else the source tree above this file)
  SAMC_PREFIX     an install prefix (PREFIX/include, PREFIX/lib*/libsamc.so)
  the repository's own build/ (this file is python/build_ffi.py)
  pkg-config samc
"""
import os
import re
import shlex
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
HEADERS = ("samc_status.h", "samc.h", "samc_amg.h", "samc_sam3.h")

# Implemented in Python (samc/_native.py): the log, progress, abort and
# per-frame callbacks the C calls take.
CALLBACKS = """
extern "Python" void samc_py_log(samc_log_level, const char *, void *);
extern "Python" void samc_py_progress(void *, const char *, int, int);
extern "Python" void samc_py_amg_progress(void *, const samc_amg_progress *);
extern "Python" samc_status samc_py_frame(void *, const samc_frame_masks *);
extern "Python" samc_status samc_py_sam3_frame(void *, const samc_sam3_frame *);
"""


def _find_lib(libdir):
    for name in ("libsamc.so",):
        if os.path.exists(os.path.join(libdir, name)):
            return True
    return False


def locate():
    """(include_dir, lib_dir) of the samc to build against."""
    build = os.environ.get("SAMC_BUILD_DIR")
    if build:
        build = os.path.abspath(build)
        if not _find_lib(build):
            raise RuntimeError(f"SAMC_BUILD_DIR={build}: no libsamc.so there (build samc first)")
        return os.environ.get("SAMC_INCLUDE_DIR", os.path.join(REPO, "include")), build
    prefix = os.environ.get("SAMC_PREFIX")
    if prefix:
        for lib in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
            if _find_lib(os.path.join(prefix, lib)):
                return os.path.join(prefix, "include"), os.path.join(prefix, lib)
        raise RuntimeError(f"SAMC_PREFIX={prefix}: no libsamc.so under its lib directories")
    if _find_lib(os.path.join(REPO, "build")) and os.path.exists(os.path.join(REPO, "include", "samc.h")):
        return os.path.join(REPO, "include"), os.path.join(REPO, "build")
    try:
        cflags = subprocess.run(["pkg-config", "--cflags-only-I", "samc"], check=True, capture_output=True,
                                text=True).stdout
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "samc"], check=True, capture_output=True,
                                text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise RuntimeError("libsamc not found: build it first (cmake -S . -B build && cmake --build build), "
                           "or set SAMC_BUILD_DIR to a build directory or SAMC_PREFIX to an install prefix")
    incs = [f[2:] for f in shlex.split(cflags) if f.startswith("-I")]
    inc = next((i for i in incs if os.path.exists(os.path.join(i, "samc.h"))), None)
    if inc is None:
        raise RuntimeError("pkg-config samc: samc.h is not in its include directories")
    return inc, libdir


def declarations(include_dir):
    """The public headers as cffi declarations: comments stay (cffi drops
    them), preprocessor lines go except integer #defines, the
    `extern "C"` guards of C++ go with their #ifdef block, and the SAMC_API
    export macro goes from the function declarations."""
    out = []
    for name in HEADERS:
        with open(os.path.join(include_dir, name), encoding="utf-8") as f:
            skip = 0
            for line in f:
                s = line.strip()
                if s.startswith("#ifdef __cplusplus"):
                    skip = 1
                    continue
                if skip:
                    if s.startswith("#endif"):
                        skip = 0
                    continue
                if s.startswith("#"):
                    if re.match(r"#define\s+\w+\s+-?\d+\s*$", s):
                        out.append(s)
                    continue
                out.append(re.sub(r"\bSAMC_API\b\s*", "", line.rstrip("\n")))  # the export macro
    return "\n".join(out) + "\n"


# The abort callback of the long calls (samc_abort_fn, when the headers have
# it), written in C so that it costs nothing between checks: it reads the
# call's stop flag (set by Call.cancel() from any thread) and, at most every
# 50 ms, takes the GIL to run Python's pending signal handlers
# (PyErr_CheckSignals): a Ctrl-C then stops the call at the next layer or
# frame boundary instead of when it returns. samc/_native.py's Call resets
# the state before each call and turns `interrupted` into KeyboardInterrupt.
ABORT_CDEF = """
typedef struct samc_py_abort { int stop; int interrupted; double next_check; } samc_py_abort;
bool samc_py_abort_check(void *user);
"""
ABORT_SOURCE = r"""
#include <time.h>
typedef struct samc_py_abort { int stop; int interrupted; double next_check; } samc_py_abort;
static bool samc_py_abort_check(void *user)
{
    samc_py_abort *s = user;
    if (*(volatile int *)&s->stop)
        return true;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    if (now < s->next_check)
        return false;
    s->next_check = now + 0.05;
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_CheckSignals() < 0) { /* a handler raised (KeyboardInterrupt): re-raised after the call */
        PyErr_Clear();
        s->interrupted = 1;
        s->stop = 1;
    }
    PyGILState_Release(g);
    return s->stop != 0;
}
"""


def make_ffibuilder():
    include_dir, lib_dir = locate()
    decls = declarations(include_dir)
    has_abort = "samc_abort_fn" in decls
    ffi = FFI()
    ffi.cdef(decls + CALLBACKS + (ABORT_CDEF if has_abort else ""))
    ffi.set_source(
        "samc._samc_cffi",
        "#include <samc.h>\n#include <samc_amg.h>\n#include <samc_sam3.h>\n" + (ABORT_SOURCE if has_abort else ""),
        include_dirs=[include_dir],
        library_dirs=[lib_dir],
        libraries=["samc"],
        # The package carries its own copy of libsamc (setup.py): found
        # next to the extension, wherever the package is installed.
        extra_link_args=["-Wl,-rpath,$ORIGIN"],
    )
    ffi.samc_lib_dir = lib_dir
    return ffi


ffibuilder = make_ffibuilder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
