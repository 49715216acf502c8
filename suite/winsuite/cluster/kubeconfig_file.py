"""A kubeconfig checked before the kubernetes client reads it: the client turns a malformed file into a TypeError,
a KeyError or urllib3 warnings deep in a request, so the shape of every field it reads is checked here first and a
problem is one line naming the file and the field (`clusters[0].cluster.server`). The client is then given only
those fields: it formats whole entries into strings, which never ends for a YAML alias bomb in a field it ignores."""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import shown
from winsuite.inputs import strict_yaml

Check = Callable[[Any], None]


def check_kubeconfig(path: Path, context: str | None) -> dict[str, Any]:
    """The kubeconfig reduced to the fields the kubernetes client reads, each checked; DataError naming `path` and
    the field for anything the client would trip on."""
    doc = strict_yaml.read(path, "kubeconfig")
    bad = _Problems(path)
    if not isinstance(doc, dict):
        raise bad("", "expected a mapping (apiVersion: v1, kind: Config, clusters, contexts, users)")
    for field in ("apiVersion", "kind", "current-context"):  # strings when given (kubectl decodes them so)
        if doc.get(field) is not None and not isinstance(doc[field], str):
            raise bad(field, f"expected a string, got {_kind(doc[field])}")
    clusters = _named_list(doc, "clusters", "cluster", _CLUSTER_FIELDS, bad)
    users = _named_list(doc, "users", "user", _USER_FIELDS, bad)
    contexts = _named_list(doc, "contexts", "context", _CONTEXT_FIELDS, bad)
    current = doc.get("current-context")
    chosen = context or current
    if not chosen:
        raise bad("current-context", "no current-context and no --context given")
    if chosen not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        field = "current-context" if context is None else "contexts"
        raise bad(field, f"context {chosen!r} not found (contexts: {known})")
    index, entry = contexts[chosen]
    for ref, names in (("cluster", clusters), ("user", users)):
        name = entry.get(ref)
        if ref == "cluster" and name is None:
            raise bad(f"contexts[{index}].context.cluster", "required: the name of an entry of clusters")
        if name is not None and name not in names:
            raise bad(f"contexts[{index}].context.{ref}", f"{ref} {name!r} not found in {ref}s")
    cluster_index, cluster = clusters[entry["cluster"]]
    if cluster.get("server") is None:
        raise bad(f"clusters[{cluster_index}].cluster.server", "required: the API server's URL, like https://host:6443")
    return {
        "current-context": chosen,
        **{key: [{"name": name, inner: body} for name, (_, body) in entries.items()]
           for key, inner, entries in (("clusters", "cluster", clusters), ("users", "user", users),
                                       ("contexts", "context", contexts))},
    }


def chosen_context(path: Path, context: str | None) -> tuple[str, str]:
    """The context `context` (or the file's current-context) picks, and its cluster's server URL, checked as above."""
    checked = check_kubeconfig(path, context)
    name = checked["current-context"]
    cluster = next(c["context"]["cluster"] for c in checked["contexts"] if c["name"] == name)
    return name, next(c["cluster"]["server"] for c in checked["clusters"] if c["name"] == cluster)


class _Problems:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, field: str, problem: str) -> DataError:
        return DataError(self.path, field, problem)


def _kind(value: Any) -> str:
    return "nothing" if value is None else f"a {type(value).__name__} ({shown(value)})"


def _string(value: Any) -> None:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {_kind(value)}")


def _flag(value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {_kind(value)}")


def _base64(value: Any) -> None:
    _string(value)
    try:
        base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        raise ValueError("expected base64 data") from None


def _url(value: Any) -> None:
    _string(value)
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError as err:
        raise ValueError(f"not a URL: {err}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or "\0" in value:
        raise ValueError(f"expected an http(s) URL like https://host:6443, got {value[:60]!r}")


def _strings(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError("expected a list of strings")


def _mapping_of_strings(value: Any) -> None:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("expected a mapping of strings")


class _InField(ValueError):
    """A problem in a field inside the checked value (exec.command), so the message names its full path."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _fields(value: dict[Any, Any], checks: dict[str, Check]) -> None:
    for field, check in checks.items():
        if value.get(field) is not None:
            try:
                check(value[field])
            except _InField as err:
                raise _InField(f"{field}.{err.field}", str(err)) from None
            except ValueError as err:
                raise _InField(field, str(err)) from None


def _env(value: Any) -> None:
    if not isinstance(value, list) or not all(
            isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)
            for item in value):
        raise ValueError("expected a list of {name, value} strings")


def _exec(value: Any) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping with command, args, env, got {_kind(value)}")
    if not isinstance(value.get("command"), str) or not value["command"]:
        raise _InField("command", f"required (a non-empty string), got {_kind(value.get('command'))}")
    _fields(value, _EXEC_FIELDS)


def _auth_provider(value: Any) -> None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ValueError("expected a mapping with a name and a config")
    _fields(value, {"config": _mapping_of_strings})


def _known(body: dict[Any, Any], fields: dict[str, Check]) -> dict[str, Any]:
    """The checked fields of `body`, the nested ones (exec, auth-provider) reduced to theirs too."""
    kept = {field: body[field] for field in fields if body.get(field) is not None}
    for field, inner in _NESTED.items():
        if field in kept:
            kept[field] = {key: kept[field][key] for key in inner if kept[field].get(key) is not None}
    return kept


# Every field of an exec credential plugin the client reads or hands on (client.authentication.k8s.io).
_EXEC_FIELDS: dict[str, Check] = {
    "apiVersion": _string, "command": _string, "args": _strings, "env": _env, "installHint": _string,
    "interactiveMode": _string, "provideClusterInfo": _flag,
}


_NESTED: dict[str, tuple[str, ...]] = {"exec": tuple(_EXEC_FIELDS), "auth-provider": ("name", "config")}
_CLUSTER_FIELDS: dict[str, Check] = {
    "server": _url, "certificate-authority": _string, "certificate-authority-data": _base64,
    "insecure-skip-tls-verify": _flag, "tls-server-name": _string, "proxy-url": _url,
}
_USER_FIELDS: dict[str, Check] = {
    "token": _string, "tokenFile": _string, "client-certificate": _string, "client-certificate-data": _base64,
    "client-key": _string, "client-key-data": _base64, "username": _string, "password": _string,
    "exec": _exec, "auth-provider": _auth_provider,
}
_CONTEXT_FIELDS: dict[str, Check] = {"cluster": _string, "user": _string, "namespace": _string}


def _named_list(doc: dict[Any, Any], key: str, inner: str, fields: dict[str, Check],
                bad: _Problems) -> dict[str, tuple[int, dict[str, Any]]]:
    """{name: (index, inner mapping)} of clusters, users or contexts, every field the client reads checked."""
    entries = doc.get(key)
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise bad(key, f"expected a list of {{name, {inner}}}, got {_kind(entries)}")
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    for index, entry in enumerate(entries):
        where = f"{key}[{index}]"
        if not isinstance(entry, dict):
            raise bad(where, f"expected a mapping with name and {inner}, got {_kind(entry)}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise bad(f"{where}.name", "required (a non-empty string)")
        if name in found:
            raise bad(f"{where}.name", f"{name!r} given twice")
        body = entry.get(inner)
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise bad(f"{where}.{inner}", f"expected a mapping, got {_kind(body)}")
        try:
            _fields(body, fields)
        except _InField as err:
            raise bad(f"{where}.{inner}.{err.field}", str(err)) from None
        found[name] = (index, _known(body, fields))
    return found
