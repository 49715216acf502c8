"""Targets for clusters winsuite does not manage: a kubeconfig (+ context), or the in-cluster service account."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import urllib3
import yaml
from kubernetes import client
from kubernetes import config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.kube_config import KubeConfigLoader

from winsuite.cluster.api_guard import GuardedApiClient
from winsuite.cluster.kubeconfig_file import check_kubeconfig
from winsuite.errors import ClusterUnreachable
from winsuite.errors import UsageError

log = logging.getLogger("winsuite.cluster")


def api_client(kubeconfig: Path | None, context: str | None = None) -> client.ApiClient:
    """An ApiClient for a kubeconfig/context, or for the in-cluster config when kubeconfig is None."""
    configuration = client.Configuration()
    checked = None if kubeconfig is None else check_kubeconfig(kubeconfig, context)
    try:
        if kubeconfig is None:
            config.load_incluster_config(client_configuration=configuration)
        else:  # relative file names (certificate-authority, tokenFile) are read from the kubeconfig's directory
            KubeConfigLoader(config_dict=checked, active_context=context,
                             config_base_path=str(kubeconfig.resolve().parent)).load_and_set(configuration)
    # The file's shape was checked above; what the client still refuses (a certificate file that is not one, an
    # exec plugin that fails) comes as any exception type, and is the user's input, not a bug of winsuite.
    except Exception as err:
        where = "in-cluster config" if kubeconfig is None else f"kubeconfig {kubeconfig}"
        detail = str(err).splitlines()[0][:300] if str(err) else type(err).__name__
        raise UsageError(f"cannot load {where}{f' (context {context})' if context else ''}: {detail}") from None
    # tenacity retries transient errors where it matters; urllib3 only follows redirects (node and pod proxies
    # answer some paths with one).
    configuration.retries = urllib3.util.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=5)
    return GuardedApiClient(configuration)


def server_version(api: client.ApiClient) -> str:
    """GET /version, or one line saying which server could not be reached and why."""
    server = api.configuration.host
    try:
        info = client.VersionApi(api).get_code(_request_timeout=15)
    except urllib3.exceptions.HTTPError as err:
        reason = getattr(err, "reason", None) or err
        raise ClusterUnreachable(f"cannot reach the Kubernetes API server at {server}: {reason}") from None
    except ApiException as err:
        raise ClusterUnreachable(f"the Kubernetes API server at {server} answered {err.status} {err.reason}") from None
    return str(info.git_version)


class KubeconfigTarget:
    """A cluster someone else runs; connecting only checks that it answers."""

    allows_egress = True  # a real cluster's pods usually reach the Internet; tests that need it say if not

    def __init__(self, kubeconfig: Path | None, context: str | None = None, name: str = "kubeconfig") -> None:
        self.name = name
        self._kubeconfig = kubeconfig
        self._context = context
        self._materialized: Path | None = None

    def connect(self) -> None:
        version = server_version(api_client(self._kubeconfig, self._context))
        log.info("connected to %s (%s)", self.describe(), version)

    def wait_ready(self, timeout: float) -> None:
        """Nothing to start: the cluster answered in connect()."""

    def kubeconfig_path(self) -> Path:
        if self._kubeconfig is not None:
            return self._kubeconfig
        return self._in_cluster_kubeconfig()

    def collect_logs(self, dest: Path) -> None:
        """Component logs of an external cluster are not winsuite's to collect."""

    def close(self) -> None:
        if self._materialized is not None:
            self._materialized.unlink(missing_ok=True)

    def describe(self) -> str:
        if self._kubeconfig is None:
            return "the in-cluster service account"
        return f"kubeconfig {self._kubeconfig}" + (f" (context {self._context})" if self._context else "")

    def _in_cluster_kubeconfig(self) -> Path:
        """Tools that need a file (e.g. upstream e2e.test) get one built from the service account."""
        if self._materialized is None:
            sa = Path("/var/run/secrets/kubernetes.io/serviceaccount")
            configuration = api_client(None).configuration
            doc = {
                "apiVersion": "v1", "kind": "Config", "current-context": "in-cluster",
                "clusters": [{"name": "in-cluster", "cluster": {"server": configuration.host,
                                                                "certificate-authority": str(sa / "ca.crt")}}],
                "users": [{"name": "sa", "user": {"tokenFile": str(sa / "token")}}],
                "contexts": [{"name": "in-cluster", "context": {"cluster": "in-cluster", "user": "sa"}}],
            }
            handle = tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False)  # noqa: SIM115
            with handle:
                yaml.safe_dump(doc, handle)
            self._materialized = Path(handle.name)
        return self._materialized
