"""Ending a process whose work is done without the interpreter's finalization.

A winsuite process holds the kubernetes client's and pydantic's large object graphs; tearing its modules down
and collecting them takes about half a second, after every file is written. The exit handlers still run (temporary
directories, logging), the standard streams are flushed, and only the teardown is skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            stream.flush()
    os._exit(code)
