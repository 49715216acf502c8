"""Discovery: asks the API server what the cluster is (versions, nodes, DNS, metrics, RuntimeClasses)."""

from __future__ import annotations

from collections.abc import Sequence

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite import messages
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.authoring.targeting import SIMULATED_NODE_TAINT_KEY
from winsuite.authoring.targeting import NodeOS
from winsuite.cluster import load_balancer
from winsuite.k8s import nodes as k8s_nodes
from winsuite.k8s import retry
from winsuite.k8s.not_found import ignore_not_found
from winsuite.versions import minor_of


def _node_facts(node: client.V1Node) -> NodeFacts:
    info = node.status.node_info
    return NodeFacts(
        name=node.metadata.name, os=k8s_nodes.os_of(node), windows_build=k8s_nodes.windows_build(node),
        kubelet_version=info.kubelet_version, container_runtime=info.container_runtime_version,
        os_image=info.os_image, kernel_version=info.kernel_version,
        simulated=k8s_nodes.is_simulated(node), ready=k8s_nodes.is_ready(node),
        unschedulable=bool(node.spec.unschedulable),
        taints=[f"{t.key}={t.value or ''}:{t.effect}" for t in node.spec.taints or []],
        labels=dict(node.metadata.labels or {}), allocatable=dict(node.status.allocatable or {}),
        capacity=dict(node.status.capacity or {}), internal_ip=k8s_nodes.internal_ip(node),
        provider_id=node.spec.provider_id,
    )


def _cluster_dns(api: client.ApiClient) -> bool:
    with ignore_not_found() as answer:
        retry.call(client.CoreV1Api(api).read_namespaced_service, "kube-dns", "kube-system")
    if answer.not_found:
        return False
    slices = retry.call(client.DiscoveryV1Api(api).list_namespaced_endpoint_slice, "kube-system",
                        label_selector="kubernetes.io/service-name=kube-dns").items
    return any(ep.addresses and (ep.conditions is None or ep.conditions.ready is not False)
               for s in slices for ep in s.endpoints or [])


def _metrics_api(api: client.ApiClient) -> bool:
    with ignore_not_found() as answer:
        service = retry.call(client.ApiregistrationV1Api(api).read_api_service, "v1beta1.metrics.k8s.io")
    if answer.not_found:
        return False
    return any(c.type == "Available" and c.status == "True" for c in service.status.conditions or [])


def _cluster_uid(api: client.ApiClient) -> str:
    """The kube-system namespace's UID: made with the cluster and kept for its life. "" when this user may not read
    it (the server's address alone then tells the cluster)."""
    try:
        namespace = retry.call(client.CoreV1Api(api).read_namespace, "kube-system")
    except ApiException as err:
        if err.status in (403, 404):
            return ""
        raise
    return str(namespace.metadata.uid or "")


def _warnings(server_version: str, nodes: list[NodeFacts], windows_builds: Sequence[str]) -> list[str]:
    warnings = []
    server_minor = minor_of(server_version)
    for node in nodes:
        kubelet_minor = minor_of(node.kubelet_version)
        if server_minor is not None and kubelet_minor is not None:
            if kubelet_minor > server_minor:
                warnings.append(messages.version_skew(node.name, node.kubelet_version, server_version,
                                                      "kubelet must not be newer than kube-apiserver"))
            elif kubelet_minor < (server_minor[0], server_minor[1] - 3):
                warnings.append(messages.version_skew(node.name, node.kubelet_version, server_version,
                                                      "kubelet may be at most 3 minor versions older"))
        if windows_builds and node.os == NodeOS.WINDOWS and node.windows_build:
            build = node.windows_build
            if not any(build == b or build.startswith(b + ".") for b in windows_builds):
                warnings.append(messages.windows_build_mismatch(node.name, build, list(windows_builds)))
    untainted = [n.name for n in nodes if n.simulated and not any(
        t.split("=", 1)[0].split(":", 1)[0] == SIMULATED_NODE_TAINT_KEY for t in n.taints)]
    if untainted:
        shown = ", ".join(untainted[:5]) + (f" and {len(untainted) - 5} more" if len(untainted) > 5 else "")
        warnings.append(f"{len(untainted)} simulated node(s) without kwok's taint {SIMULATED_NODE_TAINT_KEY} "
                        f"({shown}): winsuite keeps its pods off them by name, but other pods landing there report "
                        "Running without running anything")
    return warnings


def discover(api: client.ApiClient, server_version: str, *, windows_builds: Sequence[str] = (),
             egress_allowed: bool = True, load_balancer_probe: float = 0.0,
             run_id: str | None = None) -> ClusterFacts:
    """The cluster's facts; nodes of a Windows build outside `windows_builds` (the images' builds) are warned of.
    LoadBalancer support is observed: a Service that has an address, else a probe Service given
    `load_balancer_probe` seconds to get one (0: no probe), labelled with `run_id` (the run it is made for)."""
    nodes = [_node_facts(n) for n in k8s_nodes.list_nodes(api)]
    runtime_classes = [rc.metadata.name for rc in retry.call(client.NodeV1Api(api).list_runtime_class).items]
    balancer, no_balancer = load_balancer.observe(client.CoreV1Api(api), probe_timeout=load_balancer_probe,
                                                     run_id=run_id)
    return ClusterFacts(
        server=str(api.configuration.host), server_version=server_version, nodes=nodes,
        cluster_dns=_cluster_dns(api), metrics_api=_metrics_api(api), runtime_classes=runtime_classes,
        egress_allowed=egress_allowed, warnings=_warnings(server_version, nodes, windows_builds),
        load_balancer=balancer, no_load_balancer=no_balancer, cluster_uid=_cluster_uid(api),
    )
