"""The scan every run ends with: no credential of the cluster in what the run publishes.

Published are the build directory (JUnit, diagnostics, logs, node logs, the build log) and the dashboard. The
credentials looked for: every token, password and private key of the kubeconfig (all its users, files they name
included, and the environment its exec plugins are given: EKS, GKE, AKS kubelogin), what the run's API client
authenticates with (the token or key an exec plugin returned), the service-account token of a run inside the
cluster, and the value of every Secret in the cluster outside the run's own namespaces. Each is looked for as it
is, base64-encoded, and line by line for multi-line values (a PEM key printed in JSON keeps its lines); an
occurrence is replaced with <redacted> where it is found, and the scan says what it replaced and where. Values
shorter than MIN_BYTES are not looked for: "admin" or "true" would match everywhere and protect nothing. A file
the scan could not read (too large, or unreadable) is a gap: the scan is then `incomplete`, never `clean`."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from winsuite.errors import one_line
from winsuite.inputs import strict_yaml

MIN_BYTES = 8
MAX_FILE_BYTES = 256 << 20
REDACTED = b"<redacted>"
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
# Fields of a kubeconfig user (and of its auth-provider config) that hold credentials.
USER_SECRETS = ("token", "password", "client-key-data")
USER_SECRET_FILES = ("tokenFile", "client-key")
PROVIDER_SECRETS = ("id-token", "refresh-token", "access-token", "client-secret")


@dataclasses.dataclass(frozen=True)
class Credential:
    value: bytes
    source: str  # where it comes from, never the value: "kubeconfig users[0].user.token"


@dataclasses.dataclass(frozen=True)
class Finding:
    path: Path
    source: str
    occurrences: int


def kubeconfig_credentials(path: Path, gaps: list[str]) -> list[Credential]:
    """Every credential of every user of a kubeconfig; what could not be read is added to `gaps`."""
    try:
        doc = strict_yaml.read(path, "kubeconfig")
    except Exception as err:  # the run reported the kubeconfig's problem already; the scan says it could not look
        gaps.append(f"the kubeconfig {path} could not be read ({one_line(str(err), 120)})")
        return []
    found: list[Credential] = []
    users = doc.get("users") if isinstance(doc, dict) else None
    for index, entry in enumerate(users if isinstance(users, list) else []):
        user = entry.get("user") if isinstance(entry, dict) else None
        if not isinstance(user, dict):
            continue
        where = f"kubeconfig users[{index}].user"
        for field in USER_SECRETS:
            if isinstance(user.get(field), str):
                found.append(Credential(user[field].encode(), f"{where}.{field}"))
                if field.endswith("-data"):
                    found += _decoded(user[field], f"{where}.{field}")
        for field in USER_SECRET_FILES:
            if isinstance(user.get(field), str):
                found += _file(Path(path.parent, user[field]), f"{where}.{field}", gaps)
        found += _exec_env(user.get("exec"), f"{where}.exec")
        provider = user.get("auth-provider")
        config = provider.get("config") if isinstance(provider, dict) else None
        for field in PROVIDER_SECRETS:
            if isinstance(config, dict) and isinstance(config.get(field), str):
                found.append(Credential(config[field].encode(), f"{where}.auth-provider.config.{field}"))
    return found


def _exec_env(plugin: object, where: str) -> list[Credential]:
    """The values an exec plugin is given in its environment (client secrets, tenant keys); its token is the
    client's (client_credentials)."""
    env = plugin.get("env") if isinstance(plugin, dict) else None
    return [Credential(item["value"].encode(), f"{where}.env[{item.get('name', index)}]")
            for index, item in enumerate(env if isinstance(env, list) else [])
            if isinstance(item, dict) and isinstance(item.get("value"), str)]


def client_credentials(api: Any, gaps: list[str]) -> list[Credential]:
    """What the run's API client authenticates with, as its kubeconfig's exec plugin or token file gave it: the
    bearer token, the basic-auth password and the client key."""
    configuration = getattr(api, "configuration", None)
    if configuration is None:
        return []
    found = [Credential(str(value).removeprefix("Bearer ").encode(), f"the API client's {name} key")
             for name, value in (getattr(configuration, "api_key", None) or {}).items() if value]
    if getattr(configuration, "password", None):
        found.append(Credential(str(configuration.password).encode(), "the API client's password"))
    if getattr(configuration, "key_file", None):
        found += _file(Path(configuration.key_file), "the API client's key", gaps)
    return found


def service_account_credentials(gaps: list[str]) -> list[Credential]:
    """The token of the pod winsuite runs in (none outside a pod)."""
    if not SERVICE_ACCOUNT_TOKEN.exists():
        return []
    return _file(SERVICE_ACCOUNT_TOKEN, "the service-account token", gaps)


def cluster_secret_credentials(api: Any, own_namespaces: set[str]) -> tuple[list[Credential], str | None]:
    """The values of the cluster's Secrets outside `own_namespaces`; (values, why none could be read)."""
    from kubernetes import client

    try:
        listing: Any = client.CoreV1Api(api).list_secret_for_all_namespaces(_request_timeout=30)
    except Exception as err:  # forbidden, or the server is gone: the scan covers the kubeconfig's
        from winsuite.k8s.api_answer import error_line

        return [], f"the cluster's Secrets could not be listed ({error_line(err, 160)})"
    found: list[Credential] = []
    for secret in listing.items:
        namespace, name = secret.metadata.namespace, secret.metadata.name
        if namespace in own_namespaces:
            continue
        for key, encoded in (secret.data or {}).items():
            found.append(Credential(encoded.encode(), f"Secret {namespace}/{name} key {key} (base64)"))
            found += _decoded(encoded, f"Secret {namespace}/{name} key {key}")
    return found, None


def _decoded(encoded: str, source: str) -> list[Credential]:
    try:
        return [Credential(base64.b64decode(encoded, validate=True), source)]
    except (binascii.Error, ValueError):
        return []


def _file(path: Path, source: str, gaps: list[str]) -> list[Credential]:
    try:
        return [Credential(path.read_bytes()[:1 << 16], source)]
    except OSError as err:
        gaps.append(f"{source} ({path}) could not be read ({err.strerror or err})")
        return []


def needles(credentials: Iterable[Credential]) -> dict[bytes, str]:
    """What to look for: each value, its base64 form, and each line of a multi-line value; no short ones."""
    found: dict[bytes, str] = {}
    for credential in credentials:
        value = credential.value.strip()
        forms = [value, base64.b64encode(value)]
        forms += [line.strip() for line in value.splitlines() if not line.startswith(b"-----")]
        for form in forms:
            if len(form) >= MIN_BYTES:
                found.setdefault(form, credential.source)
    return found


def scan(roots: Iterable[Path], credentials: Iterable[Credential], gaps: list[str]) -> tuple[int, list[Finding]]:
    """Look through every file under `roots` and redact what is found; (files scanned, findings). A file that could
    not be read whole is not counted as scanned: it is added to `gaps`."""
    wanted = sorted(needles(credentials).items(), key=lambda item: -len(item[0]))  # longest first
    files = 0
    findings: list[Finding] = []
    for root in roots:
        for path in _files(root):
            found = _scan_file(path, wanted) if wanted else []
            if isinstance(found, str):
                gaps.append(f"{path} was not scanned ({found})")
                continue
            files += 1
            findings += found
    return files, findings


def _files(root: Path) -> Iterable[Path]:
    if root.is_file():
        yield root
        return
    for directory, _, names in os.walk(root):  # symlinks are not followed: they point at what is not ours
        for name in sorted(names):
            path = Path(directory, name)
            if path.is_file() and not path.is_symlink():
                yield path


def _scan_file(path: Path, wanted: list[tuple[bytes, str]]) -> list[Finding] | str:
    """The findings in one file (redacted there), or why it could not be read."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return f"{size} bytes, over the scan's {MAX_FILE_BYTES} bytes"
        data = path.read_bytes()
    except OSError as err:
        return f"unreadable: {err.strerror or err}"
    findings = []
    for needle, source in wanted:
        count = data.count(needle)
        if count:
            data = data.replace(needle, REDACTED)
            findings.append(Finding(path, source, count))
    if findings:
        temporary = path.with_name(f".{path.name}.redacting")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    return findings


def run_credentials(kubeconfig: Path | None, client: Any, api: Any, own_namespaces: Callable[[], set[str]],
                    no_api: str) -> tuple[list[Credential], list[str]]:
    """What a run's files must not hold: the pod's service-account token, the kubeconfig's credentials, what the
    run's API `client` authenticates with (None: no client was made) and the values of the cluster's Secrets outside
    the run's own namespaces; and what could not be looked for (empty when nothing). `api` None: the Secrets are not
    asked for, `no_api` says why."""
    gaps: list[str] = []
    credentials = service_account_credentials(gaps) + client_credentials(client, gaps)
    if kubeconfig is not None:
        credentials += kubeconfig_credentials(kubeconfig, gaps)
    if api is None:
        return credentials, [*gaps, f"the cluster's Secrets were not looked for ({no_api})"]
    try:
        own = own_namespaces()
    except Exception as err:  # the scan still covers the kubeconfig's credentials
        from winsuite.k8s.api_answer import error_line

        return credentials, [*gaps, f"the cluster's Secrets were not looked for ({error_line(err, 160)})"]
    secrets, gap = cluster_secret_credentials(api, own)
    return credentials + secrets, [*gaps, *([gap] if gap else [])]


def summary(where: str, files: int, findings: list[Finding], gaps: list[str]) -> tuple[str, str]:
    """(the line to print, what the build's metadata says): `clean`, `redacted N`, and `incomplete: …` naming what
    could not be looked for (a scan that could not look everywhere is never called clean)."""
    incomplete = f"incomplete: {'; '.join(gaps)}" if gaps else ""
    if not findings:
        line = f"credential scan of {where}: {files} files, nothing found"
        return (f"winsuite: warning: {line}; {incomplete}", incomplete) if gaps else (line, "clean")
    total = sum(finding.occurrences for finding in findings)
    status = f"redacted {total}" + (f"; {incomplete}" if gaps else "")
    return (f"winsuite: warning: credential scan of {where}: redacted {total} occurrence(s): "
            + "; ".join(f"{finding.path} ({finding.source})" for finding in findings)
            + (f"; {incomplete}" if gaps else "")), status
