# SPDX-License-Identifier: Apache-2.0
"""The compiled binding (samc._samc_cffi) and what every class uses with it:
errors from a samc_error, the Python side of the C callbacks, the guard
around long calls (interruption, exceptions raised in callbacks), and numpy
views of memory the library allocated.

cffi releases the GIL around every C call, so other Python threads run while
samc computes; the callbacks take it back for the few microseconds they run.
"""
import logging
import threading

import numpy as np

from . import errors

try:
    from ._samc_cffi import ffi, lib
except ImportError as e:  # pragma: no cover - an install problem, said plainly
    raise ImportError(
        "samc's compiled module is missing or cannot load its libsamc "
        f"({e}); install the package with `pip install --no-build-isolation ./python` "
        "after building the library (docs/python.md)") from e

log = logging.getLogger("samc")

# ---- errors -----------------------------------------------------------------


def new_error():
    return ffi.new("samc_error *")


def raise_for(st, err):
    """Raise the exception of a non-OK samc_status with the library's message."""
    if st == lib.SAMC_OK:
        return
    name = ffi.string(lib.samc_status_name(st)).decode()
    msg = ffi.string(err.msg).decode("utf-8", "replace") if err is not None else ""
    raise errors.error_class(name)(msg or f"samc call failed ({name})", name, int(st))


def arg_error(msg):
    return errors.SamcArgumentError(msg, "argument", int(lib.SAMC_ERR_ARG))


# ---- the library's log -> logging.getLogger("samc") --------------------------

_LEVELS = {lib.SAMC_LOG_ERROR: logging.ERROR, lib.SAMC_LOG_WARN: logging.WARNING,
           lib.SAMC_LOG_INFO: logging.INFO, lib.SAMC_LOG_DEBUG: logging.DEBUG}


@ffi.def_extern()
def samc_py_log(level, msg, user):
    log.log(_LEVELS.get(level, logging.INFO), "%s", ffi.string(msg).decode("utf-8", "replace"))


def _install_log():
    lib.samc_log_set(lib.samc_py_log, ffi.NULL)
    lib.samc_log_set_level(lib.SAMC_LOG_INFO)  # logging filters further


_install_log()

# ---- long calls: callbacks, interruption --------------------------------------

_tls = threading.local()


# The library's abort callback (samc_abort_fn), when the library has one:
# see python/build_ffi.py. Each predictor, tracker and SAM 3 processor gets
# its own state (its params' abort_user); Call resets it around every call.
HAS_ABORT = hasattr(lib, "samc_py_abort_check")


def new_abort_state():
    return ffi.new("samc_py_abort *") if HAS_ABORT else None


def abort_args(params):
    """Route params.abort_callback to the binding's check (samc_py_abort_check)
    with a state of its own; returns the state (None without the API)."""
    if not HAS_ABORT:
        return None
    state = new_abort_state()
    params.abort_callback = ffi.addressof(lib, "samc_py_abort_check")
    params.abort_user = state
    return state


class Call:
    """The Python side of one C call that runs callbacks (progress, frames).

        with Call(progress) as c:
            st = lib.samc_...(..., err)
        c.finish(st, err)

    The library's callbacks are registered once, with no user pointer, and
    find the call through this thread's current Call (they run in the thread
    that made the C call). A KeyboardInterrupt that arrives while C runs is
    raised by Python's signal handler inside the next callback of the main
    thread: it is recorded here (c.interrupted) and re-raised by finish() once
    the C call has returned, so no samc object is left mid-update; an
    exception raised by the user's progress callback likewise. `cancel()`
    (from any thread) asks a call to stop at its next frame.
    """

    def __init__(self, progress=None, on_frame=None, abort=None):
        self.progress = progress
        self.on_frame = on_frame
        self.abort = abort  # the object's samc_py_abort state, or None
        self.interrupted = False
        self.cancelled = False
        self.error = None

    def __enter__(self):
        self._prev = getattr(_tls, "call", None)
        _tls.call = self
        if self.abort is not None:
            self.abort.stop = self.abort.interrupted = 0
            self.abort.next_check = 0.0
        return self

    def __exit__(self, *exc):
        _tls.call = self._prev
        if self.abort is not None and self.abort.interrupted:
            self.interrupted = True  # Ctrl-C seen by the abort check
        return False

    def cancel(self):
        self.cancelled = True
        if self.abort is not None:
            self.abort.stop = 1  # read by the C check without the GIL

    @property
    def stopping(self):
        return self.interrupted or self.cancelled or self.error is not None

    def fail(self, exc):
        if isinstance(exc, KeyboardInterrupt):
            self.interrupted = True
        elif self.error is None:
            self.error = exc
        if self.abort is not None:
            self.abort.stop = 1  # the library stops at its next check

    def finish(self, st, err):
        """Raise what stopped the call: Ctrl-C, an exception of a callback, or
        the library's error; a call stopped by cancel() raises nothing."""
        if self.interrupted:
            raise KeyboardInterrupt
        if self.error is not None:
            raise self.error
        if not self.cancelled:
            raise_for(st, err)


def call(fn, *args, abort=None, progress=None, on_frame=None):
    """fn(*args, err) as a Call: every C call that computes goes through here
    with its object's abort state, so Ctrl-C and callback errors surface as
    Python exceptions once it returns."""
    err = new_error()
    with Call(progress, on_frame, abort) as c:
        st = fn(*args, err)
    c.finish(st, err)


def current_call():
    return getattr(_tls, "call", None)


def _record(exc_type, exc_value, tb):
    """onerror of every callback: an exception escaping a callback (the
    KeyboardInterrupt of a Ctrl-C among them, which Python may raise before
    the callback's first line runs) goes to the current Call."""
    call = current_call()
    if call is not None:
        call.fail(exc_value)
    else:  # pragma: no cover - a callback outside a Call is a bug here
        log.error("exception in a samc callback outside a call", exc_info=(exc_type, exc_value, tb))


def _record_stop(exc_type, exc_value, tb):
    _record(exc_type, exc_value, tb)
    return lib.SAMC_ERR_INTERNAL  # stops the C loop; finish() raises the cause


@ffi.def_extern(onerror=_record)
def samc_py_progress(user, what, done, total):
    call = current_call()
    if call is not None and call.progress is not None:
        call.progress(ffi.string(what).decode(), done, total)


@ffi.def_extern(onerror=_record)
def samc_py_amg_progress(user, p):
    call = current_call()
    if call is not None and call.progress is not None:
        call.progress("amg", int(p.points_done), int(p.points_total))


def _deliver(frame):
    """A frame to the current Call's on_frame; a status that stops the C loop
    when the call is stopping (Ctrl-C, an exception, cancel())."""
    call = current_call()
    if call is None or call.stopping:
        return lib.SAMC_ERR_INTERNAL
    call.on_frame(frame)
    return lib.SAMC_ERR_INTERNAL if call.stopping else lib.SAMC_OK


@ffi.def_extern(onerror=_record_stop)
def samc_py_frame(user, masks):
    return _deliver(masks)


@ffi.def_extern(onerror=_record_stop)
def samc_py_sam3_frame(user, frame):
    """SAM 3 video's per-frame callback (samc_sam3_frame_fn)."""
    return _deliver(frame)


# ---- numpy views of C memory ---------------------------------------------------


class _CBuffer:
    """Exposes `nbytes` at `ptr` to numpy (the array's base), keeping the
    owner of that memory alive as long as any array views it."""

    def __init__(self, owner, ptr, shape, dtype):
        self._owner = owner
        self.__array_interface__ = {"version": 3, "shape": tuple(shape), "typestr": np.dtype(dtype).str,
                                    "data": (int(ffi.cast("uintptr_t", ptr)), False)}


def view(owner, ptr, shape, dtype=np.float32):
    """A writable numpy array over C memory that `owner` frees when the last
    array viewing it is gone (no copy)."""
    if int(np.prod(shape)) == 0 or ptr == ffi.NULL:
        return np.zeros(shape, dtype)
    return np.asarray(_CBuffer(owner, ptr, shape, dtype))


def copy_out(ptr, shape, dtype=np.float32):
    """A copy of C memory the library keeps (valid only until its next call)."""
    n = int(np.prod(shape))
    if n == 0 or ptr == ffi.NULL:
        return np.zeros(shape, dtype)
    return np.frombuffer(ffi.buffer(ptr, n * np.dtype(dtype).itemsize), dtype).reshape(shape).copy()


def ptr(arr, ctype):
    """A pointer to the data of a C-contiguous array (NULL for None), for C to
    read; the array stays alive as long as the pointer."""
    return ffi.NULL if arr is None else ffi.from_buffer(ctype, arr)


def text(s):
    """A C string argument (NULL for None)."""
    return ffi.NULL if s is None else ffi.new("char[]", str(s).encode("utf-8"))
