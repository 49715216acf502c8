"""Data files are read strictly: a key given twice is an error naming the key and its line."""

from __future__ import annotations

import pytest
import yaml

from winsuite.policy import strict_yaml


def test_a_document_reads_as_safe_load_reads_it() -> None:
    text = "a: 1\nb: [1, {c: 2}]\nd: {e: f}\n"
    assert strict_yaml.load(text) == yaml.safe_load(text)


@pytest.mark.parametrize(("text", "key", "line"), [
    ("a: 1\nb: 2\na: 3\n", "a", 3),
    ("x:\n  y: 1\n  y: 2\n", "y", 3),
    ("- {k: 1, k: 2}\n", "k", 1),
    ("1: a\n1: b\n", 1, 2),
])
def test_a_key_given_twice_is_refused(text: str, key: object, line: int) -> None:
    with pytest.raises(strict_yaml.DuplicateKey) as raised:
        strict_yaml.load(text)
    assert raised.value.key == key and f"(line {line})" in str(raised.value)
    assert isinstance(raised.value, yaml.YAMLError)  # the loaders' YAML error handling reports it

