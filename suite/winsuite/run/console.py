"""What a run says: to the terminal and, once its build directory exists, to the build's build-log.txt."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO


class Console:
    def __init__(self) -> None:
        self.path: Path | None = None
        self.log: TextIO = open(os.devnull, "w")  # noqa: SIM115  # replaced by the build log in open_log()

    def open_log(self, path: Path) -> None:
        """From now on, everything said is also appended to `path` (the build log)."""
        self.log.close()
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.log = path.open("a", encoding="utf-8")

    def say(self, text: str, *, warning: bool = False) -> None:
        print(text, file=sys.stderr if warning else sys.stdout, flush=True)
        self.write(text + "\n")

    def show(self, text: str) -> None:
        """To the terminal only (what the build log holds already)."""
        print(text, flush=True)

    def write(self, text: str) -> None:
        """To the build log only (a traceback, a command line)."""
        if not self.log.closed:
            self.log.write(text)
            self.log.flush()

    def reopen(self) -> None:
        """The build log may have been replaced (the credential scan rewrites files in place): append to the file
        now at its path."""
        if self.path is not None:
            self.log.close()
            self.log = self.path.open("a", encoding="utf-8")

    def close(self) -> None:
        self.log.close()
