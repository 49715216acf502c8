"""Rendered configuration of the embedded cluster's components (the settings the recipe depends on)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from winsuite.cluster.embedded import controlplane
from winsuite.cluster.embedded.config import DEFAULT_PORTS
from winsuite.cluster.embedded.config import REAL_NODE_PORTS
from winsuite.cluster.embedded.realnode import containerd
from winsuite.cluster.embedded.realnode import coredns
from winsuite.cluster.embedded.realnode import kubelet
from winsuite.cluster.embedded.realnode import kubeproxy
from winsuite.cluster.embedded.realnode import metrics_server
from winsuite.cluster.embedded.realnode import network
from winsuite.cluster.embedded.realnode import servicelb
from winsuite.cluster.embedded.state import Layout
from winsuite.components import simnodes
from winsuite.components.simnodes import ClusterConfig

PORTS = DEFAULT_PORTS | REAL_NODE_PORTS


def test_containerd_is_private_and_restricts_oom_score_adj(tmp_path: Path) -> None:
    node = containerd.Containerd(tmp_path / "containerd")

    config = tomllib.loads(containerd.render_config(node, "winsuite.local/pause:3.10.2"))

    cri = config["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["restrict_oom_score_adj"] is True  # CAP_SYS_RESOURCE is dropped on these machines
    assert cri["sandbox_image"] == "winsuite.local/pause:3.10.2"
    assert cri["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] is False
    assert cri["cni"]["conf_dir"] == str(tmp_path / "cni" / "net.d")
    assert config["grpc"]["address"] == str(tmp_path / "containerd" / "containerd.sock")
    for key in ("root", "state"):
        assert config[key].startswith(str(tmp_path))


def test_kubelet_runs_on_cgroup_v1_with_the_cluster_dns(tmp_path: Path) -> None:
    paths = kubelet.KubeletPaths(tmp_path / "kubelet", tmp_path / "pki", tmp_path / "containerd.sock")

    config = kubelet.render_config(paths, healthz_port=10248)

    assert config["failCgroupV1"] is False
    assert config["cgroupDriver"] == "cgroupfs"
    assert config["clusterDNS"] == ["10.96.0.10"]
    assert config["address"] == "10.244.0.1"
    assert config["containerRuntimeEndpoint"] == f"unix://{tmp_path / 'containerd.sock'}"
    assert config["imageGCHighThresholdPercent"] == 100  # imported images cannot be pulled again
    assert config["authorization"] == {"mode": "Webhook"}


def test_kubelets_cadvisor_reads_container_stats_from_the_nodes_own_containerd(tmp_path: Path) -> None:
    paths = kubelet.KubeletPaths(tmp_path / "kubelet", tmp_path / "pki", tmp_path / "containerd.sock")

    argv = kubelet.argv(Path("/bin/kubelet"), paths, tmp_path / "kubeconfig", "linux-0")

    # Not cAdvisor's default /run/containerd/containerd.sock, which another containerd (or none) may answer.
    assert f"--containerd={tmp_path / 'containerd.sock'}" in argv
    assert "--containerd-namespace=k8s.io" in argv


def test_kube_proxy_uses_iptables_and_leaves_oom_score_and_conntrack_alone(tmp_path: Path) -> None:
    config = kubeproxy.render_config(tmp_path / "kubeconfig", "linux-0", PORTS)

    assert config["mode"] == "iptables"
    assert config["oomScoreAdj"] == 0
    assert config["conntrack"]["maxPerCore"] == 0
    assert config["nodePortAddresses"] == ["10.244.0.0/24"]


def test_coredns_binds_the_bridge_and_forwards_nothing_off_the_machine(tmp_path: Path) -> None:
    corefile = coredns.corefile(tmp_path / "admin.kubeconfig", PORTS)

    assert "bind 10.244.0.1" in corefile
    assert f"kubeconfig {tmp_path / 'admin.kubeconfig'}" in corefile
    assert "forward" not in corefile
    assert coredns.service()["spec"]["clusterIP"] == "10.96.0.10"
    assert "selector" not in coredns.service()["spec"]
    assert coredns.endpoints()["subsets"][0]["addresses"] == [{"ip": "10.244.0.1"}]


def test_pod_network_is_the_pre_created_bridge_without_masquerade(tmp_path: Path) -> None:
    bridge = network.conflist(tmp_path / "ipam")["plugins"][0]

    assert bridge["bridge"] == "cni0"
    assert bridge["ipMasq"] is False
    # Pods stop short of the addresses LoadBalancer Services get (10.244.0.240-254).
    assert bridge["ipam"]["ranges"] == [[{"subnet": "10.244.0.0/24", "gateway": "10.244.0.1",
                                          "rangeEnd": "10.244.0.239"}]]
    assert bridge["ipam"]["dataDir"] == str(tmp_path / "ipam")


def test_load_balancer_addresses_are_the_top_of_the_bridge_subnet_pods_never_get() -> None:
    lb = flags(servicelb.argv(Path("/bin/winsuite-servicelb"), Path("/k"), "winsuite"))

    assert lb["addresses"] == "10.244.0.240-10.244.0.254" and lb["bridge"] == "cni0"


def test_metrics_server_scrapes_the_real_node_only_and_is_an_aggregated_api(tmp_path: Path) -> None:
    server = flags(metrics_server.argv(Path("/bin/metrics-server"), tmp_path / "k", tmp_path))
    api = metrics_server.api_service("Q0E=")

    assert server["node-selector"] == "kubernetes.io/hostname=linux-0"  # simulated nodes have no kubelet
    assert server["kubelet-certificate-authority"] == str(tmp_path / "ca.crt")  # no --kubelet-insecure-tls
    assert server["bind-address"] == "10.244.0.1"
    assert api["spec"]["service"] == {"name": "metrics-server", "namespace": "kube-system", "port": 443}
    assert metrics_server.endpoints()["subsets"][0]["ports"][0]["port"] == 4443


def flags(argv: list[str]) -> dict[str, str]:
    return dict(arg[2:].split("=", 1) for arg in argv[1:] if "=" in arg)


def test_apiserver_is_on_loopback_without_endpoint_reconciler_when_simulated_only() -> None:
    bins = {"kube-apiserver": Path("/bin/kube-apiserver")}
    simulated = controlplane.ControlPlane(Layout("c"), bins, PORTS, "127.0.0.1", real_node=False)
    real = controlplane.ControlPlane(Layout("c"), bins, PORTS, "10.244.0.1", real_node=True)

    sim_flags, real_flags = (
        flags(controlplane.apiserver_argv(simulated)),
        flags(controlplane.apiserver_argv(real)),
    )

    assert sim_flags["endpoint-reconciler-type"] == "none"
    assert sim_flags["advertise-address"] == sim_flags["bind-address"] == "127.0.0.1"
    assert "endpoint-reconciler-type" not in real_flags
    assert real_flags["advertise-address"] == real_flags["bind-address"] == "10.244.0.1"
    assert real_flags["authorization-mode"] == "Node,RBAC"
    assert real_flags["enable-admission-plugins"] == "NodeRestriction"


def test_every_simulated_node_is_tainted_and_annotated_for_kwok() -> None:
    nodes = simnodes.manifests(
        ClusterConfig(windows_builds=("10.0.17763", "10.0.20348", "10.0.20348")), "v1.36.3"
    )

    assert [n["metadata"]["name"] for n in nodes] == ["win2019-0", "win2022-0", "win2022-1", "linux-sim-0"]
    for node in nodes:
        assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
        assert simnodes.FAKE_TAINT in node["spec"]["taints"]
    windows = [n for n in nodes if n["metadata"]["labels"]["kubernetes.io/os"] == "windows"]
    assert all(simnodes.WINDOWS_TAINT in n["spec"]["taints"] for n in windows)
    assert windows[1]["status"]["nodeInfo"]["osImage"] == "Windows Server 2022 Datacenter"
    assert windows[1]["metadata"]["labels"]["node.kubernetes.io/windows-build"] == "10.0.20348"


def test_kwok_gets_its_stages_from_the_module_files(tmp_path: Path) -> None:
    serving = (tmp_path / "kwok.crt", tmp_path / "kwok.key")
    argv = simnodes.kwok_argv(Path("/bin/kwok"), tmp_path, tmp_path / "kc", serving, 10247)

    configs = [arg.split("=", 1)[1] for arg in argv if arg.startswith("--config=")]
    assert configs == [
        str(tmp_path / stage) for stage in ("node/fast", "node/heartbeat-with-lease", "pod/fast")
    ]
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in argv
