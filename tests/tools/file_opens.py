"""Counting how often any process opens a file, through the kernel's inotify (IN_OPEN): a test can hold a whole run
of processes to "reads this file once"."""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path
from types import TracebackType

IN_OPEN = 0x00000020
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)


class FileOpens:
    """`with FileOpens([a, b]) as opens: …` then `opens.count(a)`: opens of each file while the block ran."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = [p.resolve() for p in paths]
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = -1
        self._watches: dict[int, Path] = {}
        self._counts = dict.fromkeys(self.paths, 0)

    def __enter__(self) -> FileOpens:
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        for path in self.paths:
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), IN_OPEN)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
            self._watches[wd] = path
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._drain()
        os.close(self._fd)

    def count(self, path: Path) -> int:
        self._drain()
        return self._counts[path.resolve()]

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + length
                if mask & IN_OPEN and wd in self._watches:
                    self._counts[self._watches[wd]] += 1
