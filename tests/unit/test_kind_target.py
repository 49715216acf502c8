"""The kind target's pure parts: its cluster configuration, its network, its engine's limits, its record."""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

import pytest
import yaml

from winsuite.cluster.embedded.config import CLUSTER_CIDR
from winsuite.cluster.embedded.config import SERVICE_CIDR
from winsuite.cluster.kind import engine
from winsuite.cluster.kind import network
from winsuite.cluster.kind.config import cluster_config
from winsuite.cluster.kind.config import render
from winsuite.cluster.kind.paths import KindLayout
from winsuite.cluster.kind.state import KindState
from winsuite.cluster.kind.state import load
from winsuite.cluster.kind.state import save
from winsuite.errors import UsageError


def patches(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in map(yaml.safe_load, config["kubeadmConfigPatches"])}


def test_the_cluster_has_its_own_cni_and_addresses_apart_from_the_embedded_clusters() -> None:
    config = yaml.safe_load(render(cluster_config(dns_image_tag=None, cgroup_v1=False)))
    networking = config["networking"]
    assert networking["disableDefaultCNI"] is True  # kindnetd's image is not served
    assert (networking["podSubnet"], networking["serviceSubnet"]) != (CLUSTER_CIDR, SERVICE_CIDR)
    assert networking["kubeProxyMode"] == "iptables"
    assert [node["role"] for node in config["nodes"]] == ["control-plane"]


def test_kubelet_and_kube_proxy_ask_for_no_negative_oom_score_and_cgroup_v1_is_allowed_where_the_host_has_it() -> None:
    v1 = patches(cluster_config(dns_image_tag=None, cgroup_v1=True))
    assert v1["KubeletConfiguration"] == {"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                          "kind": "KubeletConfiguration", "oomScoreAdj": 0, "failCgroupV1": False}
    assert v1["KubeProxyConfiguration"]["oomScoreAdj"] == 0
    assert "failCgroupV1" not in patches(cluster_config(dns_image_tag=None, cgroup_v1=False))["KubeletConfiguration"]


def test_kubeadm_is_told_the_coredns_tag_only_of_a_winsuite_image() -> None:
    assert "ClusterConfiguration" not in patches(cluster_config(dns_image_tag=None, cgroup_v1=True))
    ours = patches(cluster_config(dns_image_tag="v1.14.7", cgroup_v1=True))["ClusterConfiguration"]
    assert ours["dns"] == {"imageTag": "v1.14.7"} and ours["apiVersion"] == "kubeadm.k8s.io/v1beta4"


def test_the_network_masquerades_nothing_and_leaves_the_hosts_forwarding_alone() -> None:
    (bridge,) = network.conflist()["plugins"]
    assert bridge["type"] == "bridge" and bridge["bridge"] == network.BRIDGE
    assert (bridge["ipMasq"], bridge["isGateway"]) == (False, False)  # no NAT rule, no ip_forward
    assert len(network.BRIDGE) <= 15  # an interface name's limit


def test_container_limits_are_no_higher_than_the_machines(monkeypatch: pytest.MonkeyPatch) -> None:
    hard = {resource.RLIMIT_NOFILE: 20000, resource.RLIMIT_NPROC: resource.RLIM_INFINITY}
    monkeypatch.setattr(resource, "getrlimit", lambda which: (1024, hard[which]))
    monkeypatch.setattr(engine, "_pid_max", lambda: 4194304)
    assert engine._limits() == ['"nofile=20000:20000"']
    monkeypatch.setattr(engine, "_pid_max", lambda: 32768)
    assert engine._limits() == ['"nofile=20000:20000"', '"nproc=32768:32768"']


def test_an_unknown_engine_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(engine.ENGINE_ENV, "containerd")
    with pytest.raises(UsageError, match="WINSUITE_KIND_ENGINE: got 'containerd'; allowed: podman, docker"):
        engine.choose()


def test_the_record_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINSUITE_CACHE_DIR", str(tmp_path))
    layout = KindLayout("k")
    assert load(layout) is None
    state = KindState("k", "podman", "localhost/winsuite/kind-node:v1.36.3", "https://10.89.250.2:6443",
                      ["k-control-plane", "win2019-0"], "abc", "/run/netns/cni-1", True)
    save(layout, state)
    assert load(layout) == state
    assert layout.node == "k-control-plane"
