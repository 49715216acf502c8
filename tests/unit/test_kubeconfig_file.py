"""A kubeconfig is checked field by field, and the kubernetes client is given only the fields it reads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from winsuite.cluster.kubeconfig import api_client
from winsuite.cluster.kubeconfig_file import check_kubeconfig
from winsuite.errors import DataError

# 9^8 list elements through 72 aliases: cheap to parse, endless to print.
BOMB = "[x, x, x, x, x, x, x, x, x]"
for level in range(8):
    BOMB = "[" + ", ".join([f"&l{level} {BOMB}"] + [f"*l{level}"] * 8) + "]"


def kubeconfig(tmp_path: Path, user: dict[str, object], **cluster: object) -> Path:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443", **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    }))
    return path


def test_relative_file_names_are_read_from_the_kubeconfigs_directory(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("not checked until a request\n")
    (tmp_path / "token").write_text("abcdefgh")
    api = api_client(kubeconfig(tmp_path, {"tokenFile": "token"}, **{"certificate-authority": "ca.crt"}))
    assert api.configuration.host == "https://127.0.0.1:6443"
    assert api.configuration.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert api.configuration.api_key["BearerToken"] == "Bearer abcdefgh"


def test_a_field_inside_exec_is_named_by_its_full_path(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, {"exec": {"command": "true", "apiVersion": ["v1"]}})
    with pytest.raises(DataError, match=r"users\[0\]\.user\.exec\.apiVersion: expected a string"):
        check_kubeconfig(path, None)


def test_the_client_gets_only_the_fields_it_reads(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, {"token": "abcdefgh", "extra": "kept out"}, extensions=[{"name": "x"}])
    checked = check_kubeconfig(path, None)
    assert checked["users"] == [{"name": "u", "user": {"token": "abcdefgh"}}]
    assert checked["clusters"] == [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443"}}]


def test_an_alias_bomb_in_a_field_the_client_ignores_is_never_expanded(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, {"token": "abcdefgh"})
    path.write_text(path.read_text().replace("    token: abcdefgh\n", f"    token: abcdefgh\n    extra: {BOMB}\n"))
    assert api_client(path).configuration.api_key["BearerToken"] == "Bearer abcdefgh"
