"""DNS configuration passed through CNI (KEP-116 substitute tests): dnsPolicy Default, ClusterFirst and None,
dnsConfig, hostname and subdomain.

Each test checks what the kubelet told the runtime against what the pod's resolver was configured with, read
the OS way (suite/winsuite/k8s/resolvers.py): /etc/resolv.conf on Linux, as test/e2e/network/dns.go and
dns_configmap.go read it; on Windows the settings the CNI plugin gave the container (agnhost dns-server-list
and dns-suffix, and `ipconfig /all` as test/e2e/windows/dns.go reads it). The expected values come from the
kubelet of the pod's node (/configz: clusterDNS, clusterDomain, resolvConf), which is where the kubelet
takes them from (pkg/kubelet/network/dns). Search-list order is checked on Linux; on Windows the suffix list
is the union of the container's global and per-interface lists, so membership is checked there. Hostname
and subdomain follow dns.go's "should provide DNS for pods for Hostname/Subdomain": the pod's own name, its
hosts file, and A records served for it under a headless Service.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import netexec
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import resolvers
from winsuite.k8s import retry
from winsuite.k8s import services

dns = Describe(Area("sig-network"), Area("sig-windows"), "DNS configuration")

CONFIG_NEEDS = [Capability.RUNS_CONTAINERS, Capability.EXEC, Capability.KUBELET_CONFIGZ]
LOOKUP_NEEDS = [*CONFIG_NEEDS, Capability.CLUSTER_DNS]
# Documentation addresses (RFC 5737) and reserved names (RFC 2606): configured into pods, never queried.
TEST_NAMESERVERS = ["192.0.2.53", "198.51.100.53"]
TEST_SEARCHES = ["resolv.conf.local", "dns.example"]
TEST_NDOTS = "2"
MAX_NAMESERVERS = 3  # validation.MaxDNSNameservers: the kubelet keeps the first three
# Where a node's resolver file is mounted in the querier, to compare the pod's configuration with it.
HOST_RESOLV_CONF = {"linux": "/host-resolver/resolv.conf", "windows": "C:\\host-resolver\\resolv.conf"}
SERVICE, HOSTNAME = "dns-test-service-2", "dns-querier-2"
SELECTOR = {"dns-test-hostname-attribute": "true"}


@dataclasses.dataclass(frozen=True)
class KubeletDNS:
    cluster_dns: list[str]
    cluster_domain: str
    resolv_conf: str


def kubelet_dns(api: client.ApiClient, node: str) -> KubeletDNS:
    config = kubelet.configz(api, node)
    return KubeletDNS(list(config.get("clusterDNS") or []), str(config.get("clusterDomain") or ""),
                      str(config.get("resolvConf") or ""))


def querier_pod(target: Target, name: str = "dns-querier", **spec: Any) -> dict[str, Any]:
    return target.place(manifests.agnhost_pod(target.image("agnhost"), name, **spec))


def default_policy_spec(target: Target, resolv_conf: str) -> dict[str, Any]:
    """dnsPolicy Default; the querier mounts the node's resolver file (when the kubelet names one) to know what
    the kubelet read."""
    spec: dict[str, Any] = {"dnsPolicy": "Default"}
    if resolv_conf:
        spec["volumes"] = [{"name": "host-resolver", "hostPath": {"path": resolv_conf, "type": "File"}}]
        spec["mounts"] = [manifests.volume_mount("host-resolver", HOST_RESOLV_CONF[target.os], read_only=True)]
    return spec


NONE_CONFIG = {"nameservers": TEST_NAMESERVERS, "searches": TEST_SEARCHES,
               "options": [{"name": "ndots", "value": TEST_NDOTS}]}
MERGED_CONFIG = {"nameservers": TEST_NAMESERVERS[:1], "searches": TEST_SEARCHES[:1],
                 "options": [{"name": "ndots", "value": TEST_NDOTS}]}


def subdomain_pod(target: Target) -> dict[str, Any]:
    """A pod with hostname and subdomain, selected by the headless Service of that name."""
    manifest = manifests.agnhost_pod(target.image("agnhost"), "dns-test", hostname=HOSTNAME, subdomain=SERVICE)
    manifest["metadata"]["labels"] = SELECTOR
    return target.place(manifest)


UPSTREAM = "test/e2e/network/dns.go:"


def start_querier(api: client.ApiClient, namespace: str, target: Target, name: str = "dns-querier",
                  **spec: Any) -> client.V1Pod:
    """An agnhost pod (pause) with the given DNS settings, Running on the target OS."""
    started: client.V1Pod = pods.start(api, namespace, querier_pod(target, name, **spec))
    return started


def node_of(pod: client.V1Pod) -> str:
    return str((pod.spec or client.V1PodSpec(containers=[])).node_name)


def cluster_searches(namespace: str, domain: str) -> list[str]:
    """generateSearchesForDNSClusterFirst: the namespace's, the Services' and the cluster's domains."""
    return [f"{namespace}.svc.{domain}", f"svc.{domain}", domain]


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def assert_searches(got: resolvers.ResolverConfig, *, first: list[str], last: list[str],
                    target_os: str) -> None:
    """The search list starts with `first` and ends with `last` (Linux); holds both (Windows)."""
    if target_os == "windows":
        missing = [s for s in first + last if s not in got.searches]
        assert not missing, f"DNS suffixes {missing} not configured in the pod; it has {got.searches}"
        return
    assert got.searches[:len(first)] == first, f"search list {got.searches} does not start with {first}"
    ends = not last or got.searches[-len(last):] == last
    assert ends, f"search list {got.searches} does not end with {last}"


def assert_windows_reports(api: client.ApiClient, namespace: str, pod: str, servers: list[str]) -> None:
    """dns.go's check: Windows itself (ipconfig /all) lists each DNS server the pod was given."""
    report = resolvers.ipconfig_all(api, namespace, pod)
    missing = [s for s in servers if s not in resolvers.IPV4.findall(report)]
    assert not missing, f"DNS servers {missing} not found in ipconfig /all:\n{report}"


def assert_configured(api: client.ApiClient, namespace: str, pod: str, target_os: str, *, servers: list[str],
                      first: list[str], last: list[str], option: str | None) -> resolvers.ResolverConfig:
    """The pod's resolver has exactly `servers`, the searches around, and (Linux) the option."""
    got = resolvers.resolver_config(api, namespace, pod, target_os)
    assert got.nameservers == servers, f"nameservers {got.nameservers}, expected {servers}"
    assert_searches(got, first=first, last=last, target_os=target_os)
    if target_os == "windows":
        assert_windows_reports(api, namespace, pod, servers)
    elif option is not None:
        assert option in got.options, f"option {option} not in resolv.conf options {got.options}"
    return got


@windows_pods(lambda target: [querier_pod(target, **default_policy_spec(target, "/etc/resolv.conf"))],
              upstream=UPSTREAM + "436-481")
@dns.it("should give a pod with dnsPolicy Default the DNS configuration of its node", category="Core.Network",
        needs=CONFIG_NEEDS, images=["agnhost"])
def test_dns_policy_default(api: client.ApiClient, namespace: str, target: Target,
                            cluster: ClusterSession) -> None:
    nodes = netexec.eligible_nodes(cluster.facts, target.placement)
    settings = {node: kubelet_dns(api, node).resolv_conf for node in nodes}
    if len(set(settings.values())) != 1:
        pytest.skip(f"requires one kubelet resolvConf on the nodes of the target OS (found: {settings})")
    resolv_conf = next(iter(settings.values()))
    if resolv_conf == "Host":
        pytest.skip("requires the kubelet's resolvConf to be a file or empty, so that the node's settings "
                    "can be read from a pod (found: 'Host', the Windows host's own settings)")
    if resolv_conf:  # the querier mounts the node's file: hostPath is outside the baseline level
        namespaces.allow_privileged_pods(api, namespace)
    pod = start_querier(api, namespace, target, **default_policy_spec(target, resolv_conf))
    name, node = objects.name_of(pod), kubelet_dns(api, node_of(pod))
    if resolv_conf:
        text = resolvers.read_file(api, namespace, name, HOST_RESOLV_CONF[target.os], target.os)
        host = resolvers.parse_resolv_conf(text)
        servers, searches = host.nameservers[:MAX_NAMESERVERS], host.searches
    else:  # GetPodDNS with an empty --resolv-conf: the local resolver, no search path
        host_ips = [ip.ip for ip in (pod.status or client.V1PodStatus()).host_ips or []]
        servers, searches = unique(["::1" if ":" in ip else "127.0.0.1" for ip in host_ips]), []
    got = assert_configured(api, namespace, name, target.os, servers=servers, first=[], last=[], option=None)
    leaked = set(got.searches) & set(cluster_searches(namespace, node.cluster_domain))
    assert not leaked, f"the cluster's search domains {sorted(leaked)} reached a dnsPolicy Default pod"
    if target.os == "linux":
        assert got.searches == searches, f"search list {got.searches}, the node's is {searches}"


@windows_pods(lambda target: [querier_pod(target, dnsPolicy="ClusterFirst")], upstream=UPSTREAM + "54-77")
@dns.it("should give a pod with dnsPolicy ClusterFirst the cluster DNS server and search path",
        category="Core.Network", needs=LOOKUP_NEEDS, images=["agnhost"])
def test_dns_policy_cluster_first(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = start_querier(api, namespace, target, dnsPolicy="ClusterFirst")
    name, node = objects.name_of(pod), kubelet_dns(api, node_of(pod))
    assert node.cluster_dns, f"the kubelet of {node_of(pod)} has no clusterDNS: ClusterFirst cannot be tested"
    assert_configured(api, namespace, name, target.os, servers=node.cluster_dns[:MAX_NAMESERVERS],
                      first=cluster_searches(namespace, node.cluster_domain), last=[], option="ndots:5")
    kubernetes = retry.call(client.CoreV1Api(api).read_namespaced_service, "kubernetes", "default")
    address = str((kubernetes.spec or client.V1ServiceSpec()).cluster_ip)
    resolvers.wait_for_lookup(api, namespace, name, f"kubernetes.default.svc.{node.cluster_domain}", address)


@windows_pods(lambda target: [querier_pod(target, dnsPolicy="None", dnsConfig=NONE_CONFIG)],
              upstream=UPSTREAM + "436-481")
@dns.it("should give a pod with dnsPolicy None exactly the nameservers and searches of its dnsConfig",
        category="Core.Network", needs=CONFIG_NEEDS, images=["agnhost"])
def test_dns_policy_none(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = start_querier(api, namespace, target, dnsPolicy="None", dnsConfig=NONE_CONFIG)
    got = assert_configured(api, namespace, objects.name_of(pod), target.os, servers=TEST_NAMESERVERS,
                            first=TEST_SEARCHES, last=[], option=f"ndots:{TEST_NDOTS}")
    if target.os == "linux":
        assert got.searches == TEST_SEARCHES, f"search list {got.searches}, expected only {TEST_SEARCHES}"


@windows_pods(lambda target: [querier_pod(target, dnsPolicy="ClusterFirst", dnsConfig=MERGED_CONFIG)],
              upstream=UPSTREAM + "483-588")
@dns.it("should add the nameservers and searches of dnsConfig to those of dnsPolicy ClusterFirst",
        category="Core.Network", needs=CONFIG_NEEDS, images=["agnhost"])
def test_dns_config_nameservers_and_searches(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = start_querier(api, namespace, target, dnsPolicy="ClusterFirst", dnsConfig=MERGED_CONFIG)
    name, node = objects.name_of(pod), kubelet_dns(api, node_of(pod))
    servers = unique(node.cluster_dns + TEST_NAMESERVERS[:1])[:MAX_NAMESERVERS]
    got = assert_configured(api, namespace, name, target.os, servers=servers,
                            first=cluster_searches(namespace, node.cluster_domain), last=TEST_SEARCHES[:1],
                            option=f"ndots:{TEST_NDOTS}")
    if target.os == "linux":  # mergeDNSOptions: the pod's ndots replaces the kubelet's
        assert "ndots:5" not in got.options, f"dnsConfig's ndots did not replace the kubelet's: {got.options}"


def start_pod_in_subdomain(api: client.ApiClient, namespace: str, target: Target) -> tuple[client.V1Pod, str]:
    """dns.go's Hostname/Subdomain setup: a headless Service and a pod with hostname and subdomain, Ready;
    returns the pod and the cluster domain of its node."""
    services.create(api, namespace, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": SERVICE},
                                     "spec": {"selector": SELECTOR, "clusterIP": "None",
                                              "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}})
    pod = pods.start(api, namespace, subdomain_pod(target), state="Ready")
    services.wait_for_endpoints(api, namespace, SERVICE)
    return pod, kubelet_dns(api, node_of(pod)).cluster_domain


@windows_pods(lambda target: [subdomain_pod(target)], upstream=UPSTREAM + "263-305")
@dns.it("should give a pod its hostname, and its hostname.subdomain name in its hosts file and in DNS",
        category="Core.Network", needs=LOOKUP_NEEDS, images=["agnhost"])
def test_dns_hostname(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod, domain = start_pod_in_subdomain(api, namespace, target)
    name, ip = objects.name_of(pod), str((pod.status or client.V1PodStatus()).pod_ip)
    fqdn = f"{HOSTNAME}.{SERVICE}.{namespace}.svc.{domain}"
    own = resolvers.hostname(api, namespace, name)
    assert own.lower() == HOSTNAME, f"the pod's hostname is {own!r}, its spec's is {HOSTNAME!r}"
    hosts = resolvers.hosts_file(api, namespace, name)
    entry = [line.split() for line in hosts.splitlines() if ip in line.split()]
    assert any(fqdn in fields and HOSTNAME in fields for fields in entry), (
        f"no hosts entry maps {ip} to {fqdn} and {HOSTNAME}:\n{hosts}")
    resolvers.wait_for_lookup(api, namespace, name, fqdn, ip)


@windows_pods(lambda target: [subdomain_pod(target)], upstream=UPSTREAM + "307-350")
@dns.it("should serve A records for a pod's subdomain and its hostname under it", category="Core.Network",
        needs=LOOKUP_NEEDS, images=["agnhost"])
def test_dns_subdomain(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod, domain = start_pod_in_subdomain(api, namespace, target)
    name, ip = objects.name_of(pod), str((pod.status or client.V1PodStatus()).pod_ip)
    subdomain = f"{SERVICE}.{namespace}.svc.{domain}"
    resolvers.wait_for_lookup(api, namespace, name, subdomain, ip)
    resolvers.wait_for_lookup(api, namespace, name, f"{HOSTNAME}.{subdomain}", ip)
