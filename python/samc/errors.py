# SPDX-License-Identifier: Apache-2.0
"""The exceptions samc raises: one class per kind of samc_status, each also
an instance of the built-in exception a Python user would catch for it
(OSError for files, ValueError for bad content or arguments, ...).

    try:
        samc.build_sam2("sam2.1_hiera_t", "missing.pt")
    except samc.SamcIOError as e:          # also an OSError
        print(e.status, e)                 # "io", samc's own message
"""


class SamcError(Exception):
    """A failed samc call. str(e) is the library's message (it names the
    file, key, argument or layer at fault); e.status its short name ("io",
    "format", "argument", ...); e.code the samc_status value."""

    def __init__(self, message, status="internal", code=None):
        super().__init__(message)
        self.status = status
        self.code = code


class SamcIOError(SamcError, OSError):
    """A file is missing, unreadable or truncated (SAMC_ERR_IO)."""


class SamcFormatError(SamcError, ValueError):
    """A file or tensor does not follow its format, or lacks a key, or has the
    wrong shape or element type (SAMC_ERR_FORMAT, _KEY, _SHAPE, _DTYPE,
    _SECURITY)."""


class SamcArgumentError(SamcError, ValueError):
    """A bad argument: a prompt out of range, a wrong shape or dtype
    (SAMC_ERR_ARG, and the checks the package makes before calling C)."""


class SamcMemoryError(SamcError, MemoryError):
    """An allocation failed or a size is absurd (SAMC_ERR_NOMEM)."""


class SamcUnsupportedError(SamcError, NotImplementedError):
    """Valid input that samc does not handle (SAMC_ERR_UNSUPPORTED)."""


class SamcAbortedError(SamcError):
    """A call stopped by an abort callback that is not the package's own
    (SAMC_ERR_ABORTED; Ctrl-C raises KeyboardInterrupt)."""


class SamcInternalError(SamcError, RuntimeError):
    """A broken invariant inside samc, or a parity failure (SAMC_ERR_INTERNAL,
    SAMC_ERR_PARITY)."""


_BY_STATUS = {
    "io": SamcIOError,
    "format": SamcFormatError,
    "key": SamcFormatError,
    "shape": SamcFormatError,
    "dtype": SamcFormatError,
    "security": SamcFormatError,
    "argument": SamcArgumentError,
    "memory": SamcMemoryError,
    "unsupported": SamcUnsupportedError,
    "aborted": SamcAbortedError,
}


def error_class(status_name):
    return _BY_STATUS.get(status_name, SamcInternalError)
