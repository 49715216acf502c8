"""The native phase's process: `python -m pytest`, ended without the interpreter's finalization (process_exit)."""

from __future__ import annotations

import pytest

from winsuite.process_exit import exit_now

if __name__ == "__main__":
    exit_now(int(pytest.console_main()))
