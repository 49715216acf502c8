"""YAML data files read strictly and safely, as the data files' READMEs promise: a key given twice in one mapping
is an error (PyYAML would keep the last one silently), and whatever is wrong with a file — not a regular file
(a FIFO would block forever), unreadable, too large, not UTF-8, not YAML, a value YAML cannot construct, nesting
or aliases past a limit — is one line naming the file, never a traceback."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.given_paths import shown
from winsuite.given_paths import unreadable

MAX_BYTES = 4 << 20
MAX_ALIASES = 1000  # a real data file has a handful; an alias bomb has millions


class DuplicateKey(ConstructorError):
    """A key given twice in one mapping; says which and where, in one line."""

    def __init__(self, key: Any, mark: yaml.Mark) -> None:
        super().__init__(problem=f"found duplicate key {key!r}", problem_mark=mark)
        self.key = key

    def __str__(self) -> str:
        line = self.problem_mark.line + 1 if self.problem_mark is not None else 0
        return f"key {self.key!r} given twice (line {line}); the file is read strictly"


class _StrictLoader(yaml.SafeLoader):
    aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_ALIASES} aliases", mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: SafeLoader's own error says so
                break
            if duplicate:
                raise DuplicateKey(key, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load(text: str) -> Any:
    """The document in `text` (yaml.safe_load's types); yaml.YAMLError on bad YAML or a duplicate key."""
    return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass


def parse(text: str, source: str) -> Any:
    """The document in `text`; DataError naming `source` for anything wrong with it."""
    try:
        return load(text)
    except yaml.MarkedYAMLError as err:
        where = f" (line {err.problem_mark.line + 1})" if err.problem_mark is not None else ""
        problem = str(err) if isinstance(err, DuplicateKey) else f"{err.problem or err.context}{where}"
        raise DataError(source, "", f"not valid YAML: {problem}") from None
    except yaml.YAMLError as err:
        raise DataError(source, "", f"not valid YAML: {err}".replace("\n", " ")) from None
    except RecursionError:
        raise DataError(source, "", "not valid YAML: nested too deeply") from None
    # PyYAML's constructors fail on a tagged value (!!int abc) or a bad date (2026-13-45) with whatever exception
    # their code meets (ValueError, KeyError, AttributeError, OverflowError…): all of them are about the file.
    except Exception as err:
        raise DataError(source, "", f"a value YAML cannot read: {str(err)[:200] or type(err).__name__}") from None


def read_text(path: Path, what: str) -> str:
    """The text of a data file, refused in one line when it is not a regular, readable, UTF-8 file of sane size."""
    try:
        info = path.stat()
    except OSError as err:
        raise unreadable(what, path, err) from None
    except ValueError:  # a NUL in the path
        raise UsageError(f"cannot read {what} {str(path)!r}: not a file name") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(shown(path), "", f"not a regular file (the {what} must be a file)")
    if info.st_size > MAX_BYTES:
        raise DataError(shown(path), "", f"larger than {MAX_BYTES >> 20} MiB: not a {what}")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise unreadable(what, path, err) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(path, "", f"not UTF-8 text (byte {err.start})") from None


def read(path: Path, what: str) -> Any:
    """A YAML data file, read and parsed strictly (see read_text and parse)."""
    return parse(read_text(path, what), str(path))
