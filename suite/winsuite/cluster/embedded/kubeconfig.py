"""Kubeconfig files with the CA and a client certificate embedded (a copy works anywhere on the machine)."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def render(cluster: str, server: str, pki: Path, client: str) -> str:
    """A kubeconfig whose current context is `cluster`, authenticating with `pki/<client>.crt`."""
    user = f"{cluster}-{client}"
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {"server": server, "certificate-authority-data": _b64(pki / "ca.crt")},
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": _b64(pki / f"{client}.crt"),
                    "client-key-data": _b64(pki / f"{client}.key"),
                },
            }
        ],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "current-context": cluster,
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write(path: Path, cluster: str, server: str, pki: Path, client: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(cluster, server, pki, client))
    path.chmod(0o600)
    return path
