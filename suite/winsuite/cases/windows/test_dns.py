"""Windows pod DNS (dns.go): dnsPolicy None with custom nameservers and searches, as the CNI configures it."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import pods
from winsuite.k8s import retry

dns = Describe(Area("sig-windows"), Feature("Windows"), "DNS")

# Upstream injects 1.1.1.1 as the second server. Any address shows that a second server reaches the pod's
# configuration; a documentation address (RFC 5737) keeps the test from ever querying the Internet.
SECOND_SERVER = "192.0.2.53"
SEARCH_PATH = "default.svc.cluster.local"
DNS_UTILS_POD = "e2e-dns-utils"


def dns_utils_pod(target: Target, injected: str) -> dict[str, Any]:
    """agnhost with dnsPolicy None: the cluster's DNS service and a second server, one search path."""
    return target.place(manifests.agnhost_pod(target.image("agnhost"), DNS_UTILS_POD, dnsPolicy="None",
                                              dnsConfig={"nameservers": [injected, SECOND_SERVER],
                                                         "searches": [SEARCH_PATH]}))


@windows_pods(lambda target: [dns_utils_pod(target, "10.96.0.10")], upstream="test/e2e/windows/dns.go:43-118")
@dns.it("should support configurable pod DNS servers",
        twin="[sig-windows] [Feature:Windows] DNS should support configurable pod DNS servers",
        category="Core.Network", needs=[Capability.WINDOWS_KERNEL, Capability.CLUSTER_DNS],
        images=["agnhost"])
def test_configurable_pod_dns_servers(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    kube_dns = retry.call(client.CoreV1Api(api).read_namespaced_service, "kube-dns", "kube-system")
    injected = str(kube_dns.spec.cluster_ip if kube_dns.spec else "")

    name = DNS_UTILS_POD
    created = pods.create(api, namespace, dns_utils_pod(target, injected))
    selector = (created.spec.node_selector if created.spec else None) or {}
    assert selector.get(OS_LABEL) == "windows", f"pod.spec.nodeSelector: {selector}"
    pods.wait_for_pod(api, namespace, name, state="Running", timeout=pods.POD_START_TIMEOUT)

    def run(*command: str) -> pods.ExecResult:
        return pods.exec_(api, namespace, name, list(command), container="agnhost-container")

    ipconfig = run("ipconfig", "/all")
    assert ipconfig.exit_code == 0, f"ipconfig /all: {ipconfig}"
    assert SECOND_SERVER in ipconfig.stdout, (
        f"the custom DNS server {SECOND_SERVER} is not in ipconfig /all:\n{ipconfig.stdout}")
    # The negative control first: a name nothing resolves must fail, or the harness proves nothing.
    bogus = run("curl.exe", "-k", "https://kubernetezzzzzzzz:443")
    assert bogus.exit_code != 0, f"expected a bogus URL query to fail, it succeeded: {bogus.stdout!r}"
    # curl rather than nslookup: nslookup ignores ndots, and only curl fails when the name does not resolve.
    resolved = run("curl.exe", "-k", "https://kubernetes:443")
    assert resolved.exit_code == 0, f"'kubernetes' did not resolve through the injected server: {resolved}"
