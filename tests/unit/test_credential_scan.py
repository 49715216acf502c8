"""The credential scan: planted credentials of a kubeconfig and of the cluster's Secrets are found in every form
a run could write them, redacted in place, and named by where they come from, never by value."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from winsuite.run import credential_scan
from winsuite.run.credential_scan import Credential

TOKEN = "planted-token-0123456789abcdef"
PASSWORD = "planted-password-XYZ"
KEY = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7planted\n"
       "c2VjcmV0LWtleS1saW5lLXR3by1wbGFudGVkLWZvci10ZXN0aW5n\n-----END PRIVATE KEY-----\n")
SECRET_VALUE = b"cluster-secret-value-42"


def _kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    (tmp_path / "token-file").write_text("file-token-abcdefgh")
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [
            {"name": "u", "user": {"token": TOKEN, "client-key-data": base64.b64encode(KEY.encode()).decode()}},
            {"name": "basic", "user": {"username": "admin", "password": PASSWORD, "tokenFile": "token-file"}},
        ],
    }))
    return path


def test_planted_credentials_are_redacted_in_every_form(tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "artifacts" / "a-test").mkdir(parents=True)
    leaks = {
        "build-log.txt": f"connecting with Authorization: Bearer {TOKEN}\n",
        "artifacts/junit_01.xml": f'<testsuites><testcase name="x"><failure message="{PASSWORD}"/></testcase>'
                                  "</testsuites>",
        "artifacts/a-test/pods.yaml": json.dumps({"key": KEY}),  # a PEM key with its newlines escaped
        "artifacts/a-test/env.log": "TOKEN_B64=" + base64.b64encode(TOKEN.encode()).decode() + "\n",
        "artifacts/a-test/secret.log": f"value: {SECRET_VALUE.decode()} and file-token-abcdefgh\n",
    }
    for name, text in leaks.items():
        (build / name).write_text(text)
    clean = build / "artifacts" / "metadata.json"
    clean.write_text('{"job": "admin", "user": "true"}')  # short values are not credentials to look for

    credentials = credential_scan.kubeconfig_credentials(_kubeconfig(tmp_path), [])
    credentials.append(Credential(SECRET_VALUE, "Secret default/app key password"))
    files, findings = credential_scan.scan([build], credentials, [])

    assert files == len(leaks) + 1
    assert {finding.path.relative_to(build).as_posix() for finding in findings} == set(leaks)
    for name in leaks:
        text = (build / name).read_text()
        assert "<redacted>" in text
        for planted in (TOKEN, PASSWORD, "c2VjcmV0LWtleS1saW5lLXR3by1wbGFudGVkLWZvci10ZXN0aW5n", "file-token-abcdefgh",
                        SECRET_VALUE.decode(), base64.b64encode(TOKEN.encode()).decode()):
            assert planted not in text, f"{planted} left in {name}"
    assert clean.read_text() == '{"job": "admin", "user": "true"}'
    sources = " ".join(finding.source for finding in findings)
    assert "users[0].user.token" in sources and "users[1].user.password" in sources
    assert "users[1].user.tokenFile" in sources and "Secret default/app key password" in sources
    assert TOKEN not in sources and PASSWORD not in sources  # a finding names where, never what


def test_nothing_to_find_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    (build / "a.txt").write_text("an ordinary log line\n")
    files, findings = credential_scan.scan([build], credential_scan.kubeconfig_credentials(_kubeconfig(tmp_path), []),
                                           [])
    assert (files, findings) == (1, [])
    assert (build / "a.txt").read_text() == "an ordinary log line\n"


def test_a_scan_that_could_not_look_everywhere_says_so_and_is_never_clean(tmp_path: Path) -> None:
    gaps: list[str] = []
    assert credential_scan.kubeconfig_credentials(tmp_path / "missing.yaml", gaps) == []
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    client-key: gone.key\n")
    credential_scan.kubeconfig_credentials(kubeconfig, gaps)
    assert len(gaps) == 2 and "missing.yaml could not be read" in gaps[0]
    assert "kubeconfig users[0].user.client-key" in gaps[1] and "gone.key" in gaps[1]
    line, status = credential_scan.summary("the build", 12, [], gaps)
    assert status.startswith("incomplete: the kubeconfig") and "client-key" in status
    assert line.startswith("winsuite: warning: credential scan of the build: 12 files, nothing found; incomplete:")
    assert credential_scan.summary("the build", 12, [], []) == (
        "credential scan of the build: 12 files, nothing found", "clean")


EXEC_SECRET = "exec-plugin-client-secret-7f3a"
EXEC_TOKEN = "token-the-exec-plugin-returned-91b2"


def test_an_exec_plugins_environment_and_the_token_it_returned_are_looked_for(tmp_path: Path) -> None:
    """EKS, GKE and AKS kubeconfigs hold no token: an exec plugin gets secrets in its environment and returns the
    token the client sends."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "users": [{"name": "aks", "user": {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "kubelogin",
                 "args": ["get-token", "--login", "spn"],
                 "env": [{"name": "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET", "value": EXEC_SECRET}]}}}]}))
    configuration = client.Configuration()
    configuration.api_key = {"authorization": f"Bearer {EXEC_TOKEN}"}
    gaps: list[str] = []
    credentials = (credential_scan.kubeconfig_credentials(kubeconfig, gaps)
                   + credential_scan.client_credentials(client.ApiClient(configuration), gaps))
    build = tmp_path / "build"
    build.mkdir()
    (build / "build-log.txt").write_text(f"env {EXEC_SECRET}\nAuthorization: Bearer {EXEC_TOKEN}\n")
    files, findings = credential_scan.scan([build], credentials, gaps)
    assert (files, gaps) == (1, [])
    assert EXEC_SECRET not in (build / "build-log.txt").read_text()
    assert EXEC_TOKEN not in (build / "build-log.txt").read_text()
    assert {f.source for f in findings} == {"kubeconfig users[0].user.exec.env[AAD_SERVICE_PRINCIPAL_CLIENT_SECRET]",
                                            "the API client's authorization key"}


def test_a_file_over_the_size_limit_is_a_gap_and_the_scan_incomplete(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(credential_scan, "MAX_FILE_BYTES", 16)
    build = tmp_path / "build"
    build.mkdir()
    (build / "small.txt").write_text("short\n")
    (build / "large.log").write_text(f"{TOKEN} and more than sixteen bytes\n")
    gaps: list[str] = []
    files, findings = credential_scan.scan([build], [Credential(TOKEN.encode(), "token")], gaps)
    assert (files, findings) == (1, [])
    assert len(gaps) == 1 and "large.log was not scanned" in gaps[0] and "over the scan's 16 bytes" in gaps[0]
    assert credential_scan.summary("the build", files, findings, gaps)[1].startswith("incomplete: ")
