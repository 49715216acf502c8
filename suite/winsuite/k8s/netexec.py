"""netexec pods and dials through them: the Networking Granular Checks' setup, as framework/network/utils.go.

Upstream curls the test container's /dial endpoint from a shell in it, and curls or `nc -u`s the endpoints
from a host-network pod. Here every dial goes through a netexec /dial endpoint, fetched with the OS's own
HTTP client (busybox wget on Linux, which both upstream's agnhost and the embedded cluster's carry; curl.exe
on Windows, which the Windows agnhost image and every Windows host carry). The host-network dialer is a
netexec of its own, so the node-to-pod traffic and its answers are the ones upstream checks, with no `nc`
needed in the image. On Windows a pod shares the node's network only as a HostProcess pod (seed 002), so
that is what the dialer is there, as upstream's createNetProxyPods does for host-network endpoints.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
import time
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from kubernetes import client

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.targeting import NodeOS
from winsuite.authoring.targeting import Placement
from winsuite.k8s import manifests
from winsuite.k8s import objects
from winsuite.k8s import pods

Manifest = dict[str, Any]
log = logging.getLogger("winsuite.k8s")

ENDPOINT_HTTP_PORT = 8083
ENDPOINT_UDP_PORT = 8081
TEST_CONTAINER_HTTP_PORT = 9080
# The host-network dialer listens on the node itself: declared as a hostPort (TCP and UDP), so that the
# scheduler never puts two dialers on one node, and far from the ports nodes commonly use.
HOST_DIAL_PORT = 29080
TEST_TRIES = 30
MAX_NETPROXY_PODS = 10
RETRY_DELAY = 1.0  # upstream waits 2 s between tries; a try itself takes about a second
ECHO_HOSTNAME = "hostname"  # what DialFromContainer asks the endpoints (they answer with their hostname)
HOST_NAME = "hostName"  # what DialFromNode asks them
HOSTNAME_LABEL = "kubernetes.io/hostname"
TEST_POD = "test-container-pod"
HOST_TEST_POD = "host-test-container-pod"


# -- commands -----------------------------------------------------------------------------------------
def http_get(target_os: str, url: str) -> list[str]:
    """A command that prints the body of an HTTP GET (nothing on failure, with a non-zero exit)."""
    if target_os == NodeOS.WINDOWS:
        return ["curl.exe", "-g", "-q", "-s", "--max-time", "15", url]
    return ["wget", "-q", "-T", "15", "-O", "-", url]


def dial_url(via_ip: str, via_port: int, *, request: str, protocol: str, host: str, port: int) -> str:
    """makeCURLDialCommand's URL: netexec at via_ip:via_port dials host:port once and reports the answer."""
    query = urlencode({"request": request, "protocol": protocol, "host": host, "port": port, "tries": 1})
    return f"http://{via_ip}:{via_port}/dial?{query}"


# -- manifests ----------------------------------------------------------------------------------------
def endpoint_pod(image: str, name: str, selector: dict[str, str]) -> Manifest:
    """createNetShellPodSpec: netexec on the endpoint ports, live and ready once /healthz answers."""
    probe = {"httpGet": {"path": "/healthz", "port": ENDPOINT_HTTP_PORT}, "initialDelaySeconds": 10,
             "timeoutSeconds": 30, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    webserver = manifests.agnhost_container(
        image, "webserver", "netexec", f"--http-port={ENDPOINT_HTTP_PORT}", f"--udp-port={ENDPOINT_UDP_PORT}",
        imagePullPolicy="IfNotPresent", livenessProbe=probe, readinessProbe=probe,
        ports=[{"name": "http", "containerPort": ENDPOINT_HTTP_PORT},
               {"name": "udp", "containerPort": ENDPOINT_UDP_PORT, "protocol": "UDP"}])
    return spread(manifests.pod(name, [webserver], labels=selector), selector)


def spread(manifest: Manifest, selector: dict[str, str]) -> Manifest:
    """One endpoint per node, as upstream's per-node hostname selector gives, by anti-affinity instead."""
    term = {"labelSelector": {"matchLabels": selector}, "topologyKey": HOSTNAME_LABEL}
    anti_affinity = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    manifest["spec"]["affinity"] = {"podAntiAffinity": anti_affinity}
    return manifest


def intra_pod_dialer(image: str) -> Manifest:
    """createTestPodSpec: the netexec that dials the endpoints for the intra-pod checks."""
    webserver = manifests.agnhost_container(
        image, "webserver", "netexec", f"--http-port={TEST_CONTAINER_HTTP_PORT}",
        imagePullPolicy="IfNotPresent", ports=[{"name": "http", "containerPort": TEST_CONTAINER_HTTP_PORT}])
    return manifests.pod(TEST_POD, [webserver])


def host_dialer_pod(image: str, target_os: str) -> Manifest:
    """The hostexec pod of NewCoreNetworkingTestConfig(hostNetwork=true): a netexec on the node's network."""
    ports = [{"containerPort": HOST_DIAL_PORT, "hostPort": HOST_DIAL_PORT, "protocol": protocol}
             for protocol in ("TCP", "UDP")]
    args = ("netexec", f"--http-port={HOST_DIAL_PORT}", f"--udp-port={HOST_DIAL_PORT}")
    if target_os == NodeOS.WINDOWS:
        # On the host, the image's /agnhost entrypoint does not resolve: run it as agnhost.exe.
        on_host = manifests.container("agnhost-container", image, command=manifests.agnhost_on_host(*args),
                                      ports=ports)
        return manifests.host_process_pod(HOST_TEST_POD, [on_host])
    dialer = manifests.agnhost_container(image, "agnhost-container", *args, ports=ports)
    return manifests.pod(HOST_TEST_POD, [dialer], hostNetwork=True, terminationGracePeriodSeconds=0)


# -- nodes --------------------------------------------------------------------------------------------
def _tolerated(taint: str, tolerations: list[dict[str, str]]) -> bool:
    key_value, _, effect = taint.rpartition(":")
    key, _, value = key_value.partition("=")
    return effect not in ("NoSchedule", "NoExecute") or any(
        t.get("key") == key and t.get("effect", effect) == effect
        and (t.get("operator") == "Exists" or t.get("value", "") == value) for t in tolerations)


def eligible_nodes(facts: ClusterFacts, placement: Placement) -> list[str]:
    """GetBoundedReadySchedulableNodes, for the run's target: nodes that run containers, match the
    placement's selector and whose taints it tolerates (at most MAX_NETPROXY_PODS)."""
    selector, tolerations = placement.node_selector(), placement.tolerations()
    found = [n.name for n in facts.nodes
             if n.runs_containers and all(n.labels.get(k) == v for k, v in selector.items())
             and all(_tolerated(t, tolerations) for t in n.taints)]
    return sorted(found)[:MAX_NETPROXY_PODS]


# -- the test configuration ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Started:
    """A started pod, as the dials need it."""

    name: str
    pod_ip: str
    host_ip: str


def started(pod: client.V1Pod) -> Started:
    status = pod.status or client.V1PodStatus()
    return Started(objects.name_of(pod), str(status.pod_ip), str(status.host_ip))


@dataclasses.dataclass(frozen=True)
class NetworkingTestConfig:
    """What NewCoreNetworkingTestConfig sets up: endpoints (one per node), the test pod, the host dialer."""

    api: client.ApiClient
    namespace: str
    target_os: str
    endpoint_pods: list[Started]
    test_pod: Started
    host_pod: Started | None
    max_tries: int


def core_pods(image: str, target_os: str, nodes: int, place: Callable[[Manifest], Manifest],
              host_network: bool) -> list[Manifest]:
    """The pods of setupCore, placed: `nodes` endpoints, the test pod, and the host dialer when asked."""
    selector = {f"selector-{secrets.token_hex(4)}": "true"}
    endpoints = [endpoint_pod(image, f"netserver-{i}", selector) for i in range(nodes)]
    dialers = [intra_pod_dialer(image)] + ([host_dialer_pod(image, target_os)] if host_network else [])
    return [place(m) for m in endpoints + dialers]


def setup_core(api: client.ApiClient, namespace: str, *, image: str, target_os: str, nodes: int,
               place: Callable[[Manifest], Manifest], host_network: bool) -> NetworkingTestConfig:
    """setupCore: endpoints on `nodes` nodes, Ready; the test pod (and the host dialer), Running."""
    assert nodes > 0, "no node of the target OS runs containers"
    endpoints_and_dialers = core_pods(image, target_os, nodes, place, host_network)
    names = [m["metadata"]["name"] for m in endpoints_and_dialers[:nodes]]
    dialer_manifests = endpoints_and_dialers[nodes:]
    for manifest in endpoints_and_dialers:
        pods.create(api, namespace, manifest)
    timeout = pods.POD_START_TIMEOUT
    endpoints = [started(pods.wait_for_pod(api, namespace, n, state="Ready", timeout=timeout)) for n in names]
    dialers = [started(pods.wait_for_pod(api, namespace, m["metadata"]["name"], timeout=timeout))
               for m in dialer_manifests]
    max_tries = nodes * nodes + TEST_TRIES
    log.info("setting MaxTries for pod polling to %d for networking test based on endpoint count %d",
             max_tries, nodes)
    return NetworkingTestConfig(api, namespace, target_os, endpoints, dialers[0],
                                dialers[1] if host_network else None, max_tries)


# -- dials --------------------------------------------------------------------------------------------
def _responses(config: NetworkingTestConfig, pod: Started, url: str) -> tuple[list[str] | None, str]:
    """GetResponseFromContainer: the netexec dial's answers, or None and why there are none."""
    command = http_get(config.target_os, url)
    result = pods.exec_(config.api, config.namespace, pod.name, command, timeout=30)
    if result.exit_code != 0:
        return None, f"failed to execute {command}: exit {result.exit_code}, stdout {result.stdout!r}, " \
                     f"stderr {result.stderr!r}"
    try:
        answer = json.loads(result.stdout)
    except ValueError:
        return None, f"failed to unmarshal the dial response of {command}: {result.stdout!r}"
    answers = [str(r).strip() for r in answer.get("responses") or [] if str(r).strip()]
    return answers, f"dial errors {answer.get('errors')}"


def dial(config: NetworkingTestConfig, pod: Started, url: str, *, max_tries: int, min_tries: int,
         expected: Iterable[str]) -> str | None:
    """DialFromContainer: dial through `pod` until every expected answer came back (None), or say why not.

    An exec or dial failure counts as a try; an answer from anyone unexpected fails at once.
    """
    wanted, seen, last = set(expected), set[str](), ""
    for attempt in range(max_tries):
        answers, last = _responses(config, pod, url)
        if answers is not None:
            seen.update(answers)
            if seen - wanted:
                return f"received unexpected responses on attempt {attempt} of {url}: got {sorted(seen)}, " \
                       f"expected {sorted(wanted)}"
            if seen == wanted and attempt + 1 >= min_tries:
                log.info("reached %s after %d/%d tries", url, attempt, max_tries)
                return None
        log.info("waiting for responses %s (last: %s)", sorted(wanted - seen), last)
        time.sleep(RETRY_DELAY)
    return f"did not find expected responses after {max_tries} tries of {url}: got {sorted(seen)}, " \
           f"expected {sorted(wanted)}; last: {last}"


def dial_from_test_container(config: NetworkingTestConfig, protocol: str, target_ip: str, port: int, *,
                             max_tries: int, expected: Iterable[str]) -> str | None:
    """DialFromTestContainer: the test pod's netexec asks target_ip:port for its hostname."""
    url = dial_url(config.test_pod.pod_ip, TEST_CONTAINER_HTTP_PORT, request=ECHO_HOSTNAME,
                   protocol=protocol, host=target_ip, port=port)
    return dial(config, config.test_pod, url, max_tries=max_tries, min_tries=0, expected=expected)


def dial_from_node(config: NetworkingTestConfig, protocol: str, target_ip: str, port: int, *,
                   max_tries: int, expected: Iterable[str]) -> str | None:
    """DialFromNode: from the node's network, GET /hostName (http) or send `hostName` (udp) to target_ip."""
    assert config.host_pod is not None, "the configuration has no host-network dialer"
    url = dial_url("127.0.0.1", HOST_DIAL_PORT, request=HOST_NAME, protocol=protocol, host=target_ip,
                   port=port)
    return dial(config, config.host_pod, url, max_tries=max_tries, min_tries=0, expected=expected)
