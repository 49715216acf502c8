"""What the integration tests' `cluster` fixture yields: the cluster, an API client and its images."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes import config as kube_config

from winsuite.cluster.embedded import leftovers
from winsuite.cluster.embedded.target import LocalCluster
from winsuite.components import images
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.images import load_repo_list

_config: Any = kube_config  # no type hints in this module of the client


@dataclasses.dataclass
class EmbeddedCluster:
    """A running embedded cluster: name, kubeconfig, API client, and whether it has its real node."""

    target: LocalCluster
    started_by_session: bool

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def kubeconfig(self) -> Path:
        return self.target.kubeconfig_path()

    @property
    def has_real_node(self) -> bool:
        return self.target.has_real_node

    @property
    def real_node_name(self) -> str:
        real = self.target.state().real_node
        if real is None:
            raise LookupError(f"cluster {self.name} has no real node ({self.real_node_reason})")
        return real.node_name

    @property
    def real_node_reason(self) -> str:
        return self.target.state().real_node_reason

    @functools.cached_property
    def api(self) -> client.ApiClient:
        api: client.ApiClient = _config.new_client_from_config(config_file=str(self.kubeconfig))
        return api

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    def image(self, image_id: str) -> str:
        """The catalog image as the embedded repo list names it (what the real node has imported)."""
        catalog = load_image_catalog()
        return catalog.resolve(image_id, load_repo_list(images.repo_list_file(), catalog))

    def stop(self) -> list[str]:
        """Take the cluster down; returns whatever it left on the host (empty when nothing)."""
        state = self.target.state()
        self.target.down()
        return leftovers.after_down(self.target.layout, state)
