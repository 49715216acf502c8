"""Reading files as a user without root's override of file permissions, for the tests of unreadable paths."""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator


@contextlib.contextmanager
def without_dac_override() -> Iterator[None]:
    """Root reads a directory of mode 000 all the same (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): while this holds,
    the calling thread's effective set lacks both, so it meets permissions as any user does. They stay permitted,
    and come back on exit. Nothing changes for a process without them."""
    libc = ctypes.CDLL(None, use_errno=True)
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    effective = data[0].effective
    data[0].effective &= ~_DAC_CAPABILITIES
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    try:
        yield
    finally:
        data[0].effective = effective
        libc.capset(ctypes.byref(header), data)


_CAPABILITY_VERSION_3 = 0x20080522
_DAC_CAPABILITIES = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
