"""What will never work on Windows (KEP-116), where a Windows node decides the outcome, not the API server.

Most items of the KEP's list are refused by the API server for a pod with spec.os.name windows
(test_api_compatibility.py: privileged, hostPID, hostIPC, readOnlyRootFilesystem, shareProcessNamespace,
runAsUser, runAsGroup, supplementalGroups, …), or are upstream tests kept out of Windows runs with their
reason (jobs/exclusions/will-never-work.yaml). Two are admitted, and what happens to them is up to the node;
these tests document that outcome on a real Windows node, as the kubelet and containerd of the pinned
versions give it:

- emptyDir with medium Memory: Windows has no RAM disk. The kubelet's tmpfs "mount" on Windows only creates
  the directory (k8s.io/mount-utils, mount_windows.go: a "tmpfs" source is MkdirAll), so the pod starts and
  its volume is an ordinary directory on the node's disk: the volume works, and the kubelet reports it with
  the capacity of the node's filesystem, where a memory-backed one would report its 64Mi sizeLimit.
- hostNetwork without HostProcess: containerd gives a Windows pod the node's network only when it is a
  HostProcess pod (hostNetwork() of its CRI plugin), so a pod with hostNetwork: true and ordinary containers
  runs in a network compartment of its own: the node's address is not among the container's.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import resolvers
from winsuite.k8s import retry
from winsuite.k8s import waits

never = Describe(Area("sig-windows"), "What will never work")

SIZE_LIMIT = "64Mi"
SIZE_LIMIT_BYTES = 64 * 1024 * 1024
MEMORY_VOLUME, MEMORY_PATH = "memory", "C:\\memory-medium"
STATS_TIMEOUT = 150.0  # the kubelet measures volumes once a minute (volumeStatsAggPeriod)


def memory_medium_pod(target: Target) -> dict[str, Any]:
    volume = {"name": MEMORY_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": SIZE_LIMIT}}
    return target.place(manifests.agnhost_pod(target.image("agnhost"), "memory-medium", volumes=[volume],
                                              mounts=[manifests.volume_mount(MEMORY_VOLUME, MEMORY_PATH)]))


def host_network_pod(target: Target) -> dict[str, Any]:
    """hostNetwork without HostProcess: Windows gives such a pod a network of its own."""
    return target.place(manifests.agnhost_pod(target.image("agnhost"), "host-network", hostNetwork=True))


@windows_pods(lambda target: [memory_medium_pod(target)],
              upstream="no twin: KEP-116's will-never-work list (emptyDir medium Memory)")
@never.it("an emptyDir volume with medium Memory should be an ordinary directory on the node's disk",
          category="Core.Storage", needs=[Capability.WINDOWS_KERNEL, Capability.EXEC, Capability.STATS_SUMMARY],
          images=["agnhost"])
def test_memory_medium_is_not_memory_backed(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    pod = pods.start(api, namespace, memory_medium_pod(target))
    probe = f"{MEMORY_PATH}\\probe.txt"
    written = pods.exec_(api, namespace, "memory-medium", ["cmd", "/c", f"echo written> {probe} && type {probe}"])
    assert "written" in written.check().stdout, f"the volume is not writable: {written}"

    node = str((pod.spec or client.V1PodSpec(containers=[])).node_name)
    sizes: dict[str, int | None] = {}

    def measured() -> str:
        summary = kubelet.stats_summary(api, node)
        stats = [v for p in kubelet.pod_stats(summary, namespace) for v in p.get("volume") or []
                 if v.get("name") == MEMORY_VOLUME]
        sizes["volume"] = stats[0].get("capacityBytes") if stats else None
        sizes["disk"] = ((summary.get("node") or {}).get("fs") or {}).get("capacityBytes")
        detail = f"volume stats {stats}, node {summary.get('node')}"
        assert None not in sizes.values(), detail
        return detail

    detail = waits.poll(f"the kubelet on {node} to report the size of volume {MEMORY_VOLUME}", measured,
                        timeout=STATS_TIMEOUT)
    assert sizes["volume"] != SIZE_LIMIT_BYTES, f"the volume has its sizeLimit's size, as in memory: {detail}"
    assert sizes["volume"] == sizes["disk"], f"the volume is not on the node's filesystem: {detail}"


@windows_pods(lambda target: [host_network_pod(target)],
              upstream="no twin: KEP-116's will-never-work list (hostNetwork without HostProcess)")
@never.it("a pod with hostNetwork but without HostProcess should not share the node's network",
          category="Core.Network", needs=[Capability.WINDOWS_KERNEL, Capability.EXEC], images=["agnhost"])
def test_host_network_without_host_process(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    namespaces.allow_privileged_pods(api, namespace)  # hostNetwork is outside the baseline Pod Security level
    pod = pods.start(api, namespace, host_network_pod(target))
    node = retry.call(client.CoreV1Api(api).read_node, (pod.spec or client.V1PodSpec(containers=[])).node_name)
    node_ip = nodes.internal_ip(node)
    assert node_ip, f"node {objects.name_of(node)} reports no InternalIP"
    report = resolvers.run(api, namespace, "host-network", ["ipconfig"])
    own = [ip for line in report.splitlines() if "IPv4 Address" in line for ip in resolvers.IPV4.findall(line)]
    assert own, f"ipconfig shows the container no IPv4 address:\n{report}"
    reported = (pod.status or client.V1PodStatus()).pod_ip  # the kubelet reports the node's IPs for hostNetwork
    assert node_ip not in own, (f"the container has the node's address {node_ip} (its addresses: {own}; the "
                                f"kubelet reports pod IP {reported}): it shares the node's network")
