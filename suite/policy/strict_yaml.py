"""YAML read strictly, as the data files' READMEs promise: a key given twice in one mapping is an error (PyYAML
would keep the last one silently)."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError


class DuplicateKey(ConstructorError):
    """A key given twice in one mapping; says which and where, in one line."""

    def __init__(self, key: Any, mark: yaml.Mark) -> None:
        super().__init__(problem=f"found duplicate key {key!r}", problem_mark=mark)
        self.key = key

    def __str__(self) -> str:
        line = self.problem_mark.line + 1 if self.problem_mark is not None else 0
        return f"key {self.key!r} given twice (line {line}); the file is read strictly"


class _StrictLoader(yaml.SafeLoader):
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
