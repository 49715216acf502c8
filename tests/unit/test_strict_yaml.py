"""Data files are read strictly: a key given twice is an error naming the key and its line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs import strict_yaml


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



def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "job.yaml"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        strict_yaml.read(fifo, "job")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a regular file"):
        strict_yaml.read(tmp_path, "job")


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot read job .*No such file"):
        strict_yaml.read(tmp_path / "absent.yaml", "job")


def test_a_huge_file_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (strict_yaml.MAX_BYTES + 1))
    with pytest.raises(DataError, match="larger than 4 MiB"):
        strict_yaml.read(big, "job")


@pytest.mark.parametrize(("data", "says"), [
    (b"name: caf\xe9\n", "not UTF-8 text (byte 9)"),
    (b"expires: 2026-13-45\n", "a value YAML cannot read: month must be in 1..12"),
    (b"n: !!int abc\n", "a value YAML cannot read"),
    (b"b: !!bool maybe\n", "a value YAML cannot read"),
    (b"focus: " + b"[" * 2000 + b"]" * 2000 + b"\n", "not valid YAML: nested too deeply"),
    (b"a: &a [x, x]\n" + b"".join(b"%c: &%c [*%c, *%c]\n" % (98 + i, 98 + i, 97 + i, 97 + i) for i in range(20))
     + b"".join(b"z%d: [*a, *a]\n" % i for i in range(600)), "more than 1000 aliases"),
    (b"a: [unclosed\n", "not valid YAML: "),
])
def test_bad_content_is_one_line_naming_the_file(tmp_path: Path, data: bytes, says: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_bytes(data)
    with pytest.raises(DataError) as raised:
        strict_yaml.read(path, "job")
    assert str(raised.value).startswith(str(path)) and says in str(raised.value)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 400
