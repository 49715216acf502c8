"""Service traffic: EndpointSlice waits, exec pods, and reachability probes run from inside pods.

Probes use agnhost's own `connect` subcommand (as upstream's network-policy and service tests do on both
OSes) and `wget`, which every agnhost image carries: curl and a full netcat are not in every build.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import Protocol

from kubernetes import client

from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import services
from winsuite.k8s import waits
from winsuite.k8s import workloads
from winsuite.k8s.services import SERVICE_NAME_LABEL
from winsuite.k8s.waits import wait_for_set

log = logging.getLogger("winsuite.k8s")

REACHABILITY_TIMEOUT = 120.0  # e2eservice.ServiceReachabilityShortPollTimeout
ENDPOINTS_TIMEOUT = 120.0  # e2eendpointslice.ControllerUpdateTimeout
POD_START_TIMEOUT = 180.0
RESPONDING_TIMEOUT = 120.0  # the 2 minutes WaitForPodsResponding is given by the ReplicaSet/RC tests
CLUSTER_DOMAIN = "cluster.local"  # framework.TestContext.ClusterDNSDomain's default
HOST_NAME_REQUEST = "hostName"  # what testEndpointReachability sends


class Placer(Protocol):
    """The part of the `target` fixture an exec pod needs."""

    def image(self, image_id: str, os: str | None = None) -> str: ...

    def place(self, obj: dict[str, Any]) -> dict[str, Any]: ...


# -- EndpointSlices (e2eendpointslice) --------------------------------------------------------------
def _slices(api: client.ApiClient, namespace: str, service: str, what: str,
            condition: Callable[[list[client.V1EndpointSlice]], bool]) -> list[client.V1EndpointSlice]:
    return wait_for_set(client.DiscoveryV1Api(api).list_namespaced_endpoint_slice, namespace=namespace,
                        label_selector=f"{SERVICE_NAME_LABEL}={service}", what=what, condition=condition,
                        timeout=ENDPOINTS_TIMEOUT, describe=lambda items: repr([s.endpoints for s in items]))


def addresses(slices: Iterable[client.V1EndpointSlice]) -> set[str]:
    return {ep.addresses[0] for s in slices for ep in s.endpoints or [] if ep.addresses}


def target_pods(slices: Iterable[client.V1EndpointSlice], namespace: str) -> set[str]:
    return {ep.target_ref.name for s in slices for ep in s.endpoints or []
            if ep.target_ref and ep.target_ref.kind == "Pod" and ep.target_ref.namespace == namespace}


def port_mappings(slices: Iterable[client.V1EndpointSlice]) -> set[tuple[str, str, str, int]]:
    """(port name, protocol, pod, target port) for every endpoint and port of the slices."""
    return {(port.name, port.protocol, ep.target_ref.name, port.port)
            for s in slices for ep in s.endpoints or [] for port in s.ports or []}


def wait_for_endpoint_count(api: client.ApiClient, namespace: str, service: str, count: int) -> None:
    _slices(api, namespace, service, f"service {namespace}/{service} to have {count} endpoint(s)",
            lambda items: bool(items) and len(addresses(items)) == count)


def wait_for_endpoint_pods(api: client.ApiClient, namespace: str, service: str, *names: str) -> None:
    _slices(api, namespace, service, f"service {namespace}/{service} to have endpoints {sorted(names)}",
            lambda items: bool(items) and target_pods(items, namespace) == set(names))


def wait_for_endpoint_ports(api: client.ApiClient, namespace: str, service: str,
                            mappings: set[tuple[str, str, str, int]]) -> None:
    what = f"service {namespace}/{service} to have endpoint ports {sorted(mappings)}"
    _slices(api, namespace, service, what, lambda items: bool(items) and port_mappings(items) == mappings)


# -- Service fixtures (e2eservice.TestJig and friends) ---------------------------------------------------
def jig_labels(name: str) -> dict[str, str]:
    """NewTestJig: a selector unique to one Service."""
    return {"testid": f"{name}-{uuid.uuid4()}"}


def create_tcp_service(api: client.ApiClient, namespace: str, name: str, labels: dict[str, str],
                       ports: list[dict[str, Any]], **spec: Any) -> client.V1Service:
    """TestJig.CreateTCPService: the jig labels select the pods; what the API server allocated is checked
    (sanityCheckService)."""
    manifest = {"metadata": {"name": name, "labels": labels}, "spec": {"selector": labels, "ports": ports, **spec}}
    svc = services.create(api, namespace, manifest)
    assert svc.spec.cluster_ip, f"no ClusterIP allocated for service {svc.metadata.name}"
    # needsNodePorts: a NodePort Service, and a LoadBalancer one unless allocateLoadBalancerNodePorts is false.
    wants_node_ports = svc.spec.type == "NodePort" or (
        svc.spec.type == "LoadBalancer" and svc.spec.allocate_load_balancer_node_ports is not False)
    for port in svc.spec.ports:
        assert bool(port.node_port) == wants_node_ports, f"unexpected nodePort {port.node_port} on {port}"
    return svc


def create_pod_or_fail(api: client.ApiClient, namespace: str, target: Placer, name: str,
                       labels: dict[str, str], ports: list[dict[str, Any]], *args: str) -> client.V1Pod:
    """createPodOrFail: an agnhost pod with the given labels, ports and args, Ready."""
    return pods.start(api, namespace, labelled_agnhost_pod(target, name, labels, ports, *args), state="Ready",
                      timeout=POD_START_TIMEOUT)


def labelled_agnhost_pod(target: Placer, name: str, labels: dict[str, str], ports: list[dict[str, Any]],
                         *args: str) -> dict[str, Any]:
    """createPodOrFail's pod, placed."""
    manifest = manifests.agnhost_pod(target.image("agnhost"), name, *args)
    manifest["metadata"]["labels"] = labels
    manifest["spec"]["containers"][0].update(ports=ports, env=[{"name": "FOO", "value": " "}])
    return target.place(manifest)


def create_service_pods(api: client.ApiClient, namespace: str, target: Placer, name: str,
                        labels: dict[str, str], replicas: int, *args: str) -> list[str]:
    """TestJig.CreateServicePods / StartServeHostnameService: a Deployment of agnhost serve-hostname
    replicas (Recreate), complete; their pod names."""
    deployment = serve_hostname_deployment(target, name, labels, replicas, *args)
    retry.call(workloads.apps(api).create_namespaced_deployment, namespace, deployment)
    workloads.wait_for_deployment_complete(api, namespace, name, timeout=POD_START_TIMEOUT)
    return [p.metadata.name for p in workloads.wait_for_pods(api, namespace, labels, count=replicas)]


def _untainted(taint: str) -> bool:
    """isNodeUntainted: a pod without tolerations may run there (no NoSchedule or NoExecute taint)."""
    return taint.rpartition(":")[2] not in ("NoSchedule", "NoExecute")


def serve_hostname_deployment(target: Placer, name: str, labels: dict[str, str], replicas: int,
                              *args: str) -> dict[str, Any]:
    """CreateServicePods' Deployment of agnhost serve-hostname replicas (Recreate), placed."""
    agnhost = manifests.container(name, target.image("agnhost"), command=["/agnhost", "serve-hostname", *args],
                                  securityContext={})
    return target.place(workloads.deployment(name, replicas, labels, [agnhost], strategy="Recreate"))


def node_ips(nodes: Iterable[Any]) -> list[str]:
    """The internal IPs NodePorts are tested on, as GetBoundedReadySchedulableNodes(2) picks them: at most two
    Ready, schedulable, untainted nodes of any OS (that really run containers: a simulated node forwards
    nothing)."""
    ips = [n.internal_ip for n in nodes
           if n.runs_containers and all(_untainted(t) for t in n.taints) and n.internal_ip]
    return [ip for ip in ips if not ipaddress.ip_address(ip).is_loopback][:2]


# -- probes from inside a pod -----------------------------------------------------------------------
def exec_pod(api: client.ApiClient, namespace: str, target: Placer, name: str = "execpod") -> Prober:
    """e2epod.CreateExecPodOrFail: an agnhost pod to run probes from, Running."""
    pods.start(api, namespace, exec_pod_manifest(target, name))
    return Prober(api, namespace, name)


def exec_pod_manifest(target: Placer, name: str = "execpod") -> dict[str, Any]:
    return target.place(manifests.agnhost_pod(target.image("agnhost"), name))


def host_port(host: str, port: int) -> str:
    try:
        return f"[{host}]:{port}" if ipaddress.ip_address(host).version == 6 else f"{host}:{port}"
    except ValueError:
        return f"{host}:{port}"  # a DNS name


@dataclasses.dataclass(frozen=True)
class Prober:
    """Probes run inside one pod (kubectl exec), each retried until it passes or its deadline."""

    api: client.ApiClient
    namespace: str
    pod: str

    def connect(self, host: str, port: int, protocol: str = "TCP") -> pods.ExecResult:
        """`agnhost connect`: a TCP connection, or a UDP datagram that must be answered."""
        command = ["/agnhost", "connect", "--timeout=2s", f"--protocol={protocol.lower()}",
                   f"--udp-data={HOST_NAME_REQUEST}", host_port(host, port)]
        return pods.exec_(self.api, self.namespace, self.pod, command)

    def ask_host_name(self, host: str, port: int, protocol: str) -> str:
        """testEndpointReachability's probe: send `hostName` to host:port and return the reply, which must not
        be empty. TCP: `echo hostName | nc` as upstream (without -v -t, which busybox's nc lacks); UDP:
        `agnhost connect`, which sends it and fails without an answer."""
        if protocol == "UDP":
            return self.connect(host, port, protocol).check().stdout
        script = f"echo {HOST_NAME_REQUEST} | nc -w 2 {host} {port}"
        result = pods.exec_(self.api, self.namespace, self.pod, ["/bin/sh", "-c", script], timeout=30)
        assert result.stdout.strip(), f"{host_port(host, port)} over TCP gave no answer to {script!r}: {result}"
        return result.stdout

    def wait_reachable(self, host: str, port: int, protocol: str = "TCP",
                       timeout: float = REACHABILITY_TIMEOUT) -> None:
        """testEndpointReachability: poll until `host:port` answers `hostName` with something."""
        assert protocol in ("TCP", "UDP"), f"service reachability check is not supported for {protocol}"
        waits.poll(f"{host_port(host, port)} over {protocol} to answer pod {self.namespace}/{self.pod}",
                   lambda: self.ask_host_name(host, port, protocol), timeout=timeout)

    def wait_unreachable(self, host: str, port: int, protocol: str = "TCP", timeout: float = 30.0) -> None:
        """Poll until a connection attempt to `host:port` fails (a Service stopped forwarding it)."""

        def refused() -> None:
            if self.connect(host, port, protocol).exit_code == 0:
                raise AssertionError(f"{host_port(host, port)} over {protocol} still answers")

        waits.poll(f"{host_port(host, port)} over {protocol} to stop answering pod {self.namespace}/{self.pod}",
                   refused, timeout=timeout)

    def wait_http_down(self, host: str, port: int, timeout: float = REACHABILITY_TIMEOUT) -> None:
        """verifyServeHostnameServiceDown: poll until GET http://host:port no longer succeeds.

        An HTTP success, not a TCP handshake: from a node's network a packet to an address nothing serves may
        leave the node, and whatever network is out there may accept the connection.
        """

        def down() -> None:
            result = pods.exec_(self.api, self.namespace, self.pod, ["wget", "-q", "-O", "-",
                                                                    f"http://{host_port(host, port)}"])
            assert result.exit_code != 0, f"http://{host_port(host, port)} still answers: {result.stdout!r}"

        waits.poll(f"http://{host_port(host, port)} to stop answering pod {self.namespace}/{self.pod}", down,
                   timeout=timeout)

    def http_get(self, url: str) -> str:
        """The body of GET `url`."""
        return pods.exec_(self.api, self.namespace, self.pod, ["wget", "-q", "-O", "-", url]).check().stdout

    def wait_for_hostname(self, address: str, expected: str, timeout: float = REACHABILITY_TIMEOUT) -> None:
        """execHostnameTest: GET http://address/hostname answers with `expected` (short names compared)."""
        want = expected.split(".", maxsplit=1)[0]

        def answers() -> None:
            got = self.http_get(f"http://{address}/hostname").strip().split(".", maxsplit=1)[0]
            assert got == want, f"http://{address}/hostname answered {got!r}, want {want!r}"

        waits.poll(f"http://{address}/hostname to answer {want}", answers, timeout=timeout)

    def wait_resolves(self, fqdn: str) -> None:
        """The name resolves (checkExternalServiceReachability's nslookup)."""

        def resolves() -> None:
            result = pods.exec_(self.api, self.namespace, self.pod, ["nslookup", fqdn])
            # nslookup may exit 0 on Windows although the name was not found; its output says so.
            assert result.exit_code == 0 and f"can't find {fqdn}" not in result.stdout + result.stderr, \
                f"nslookup {fqdn} failed: {result}"

        waits.poll(f"{fqdn} to resolve from pod {self.namespace}/{self.pod}", resolves,
                   timeout=REACHABILITY_TIMEOUT)

    def wait_for_backends(self, host: str, port: int, expected: Iterable[str],
                          timeout: float = REACHABILITY_TIMEOUT) -> None:
        """verifyServeHostnameServiceUp's check: GETs of http://host:port reach every backend (by name).

        Upstream bounds each GET with wget -T on Linux only; no option is common to every wget build, and the
        exec itself is bounded.
        """
        wanted, seen = set(expected), set[str]()
        command = (f"for i in $(seq 1 {50 * len(wanted)}); do wget -q -O - http://{host_port(host, port)} "
                   "2>&1 || true; echo; done")

        def all_backends() -> None:
            out = pods.exec_(self.api, self.namespace, self.pod, ["/bin/sh", "-x", "-c", command], timeout=120)
            seen.update(line.strip() for line in out.stdout.splitlines() if line.strip())
            missing = wanted - seen
            assert not missing, f"unable to reach backends {sorted(missing)} through {host}; got {sorted(seen)}"

        waits.poll(f"{host_port(host, port)} to reach backends {sorted(wanted)} from pod {self.pod}", all_backends,
                   timeout=timeout)

    def check_service_reachability(self, svc: client.V1Service, node_ips: Iterable[str] = ()) -> None:
        """TestJig.CheckServiceReachability: ClusterIP and NodePort by name and ClusterIP, then node ports;
        ExternalName by resolving the Service's FQDN (Windows does not search short names)."""
        namespace, name = svc.metadata.namespace, svc.metadata.name
        if svc.spec.type == "ExternalName":
            self.wait_resolves(f"{name}.{namespace}.svc.{CLUSTER_DOMAIN}")
            return
        _slices(self.api, namespace, name, f"service {namespace}/{name} to have an endpoint",
                lambda items: bool(addresses(items)))
        for port in svc.spec.ports:
            self.wait_reachable(name, port.port, port.protocol)
            self.wait_reachable(svc.spec.cluster_ip, port.port, port.protocol)
            if svc.spec.type == "NodePort":
                for ip in node_ips:
                    self.wait_reachable(ip, port.node_port, port.protocol)


def wait_for_replicas_serving(api: client.ApiClient, namespace: str, labels: dict[str, str], *, count: int,
                              state: str) -> None:
    """testReplicaSetServeImageOrFail's checks: the controller's pods reach `state` without being replaced, and
    each answers through the API server's proxy with its own name."""
    created = workloads.wait_for_pods(api, namespace, labels, count=count, state="", timeout=RESPONDING_TIMEOUT)
    started = workloads.wait_for_pods(api, namespace, labels, count=count, state=state, timeout=POD_START_TIMEOUT)
    assert [p.metadata.uid for p in started] == [p.metadata.uid for p in created], \
        f"replicas were replaced while starting: {[pods.describe(p) for p in started]}"
    wait_for_pods_responding(api, namespace, created, labels=labels)


def wait_for_pods_responding(api: client.ApiClient, namespace: str, expected: list[client.V1Pod], *,
                             labels: dict[str, str], want_name: bool = True,
                             timeout: float = RESPONDING_TIMEOUT) -> None:
    """e2epod.WaitForPodsResponding: each pod answers through the API server's pod proxy (with its name)."""
    core = pods.core(api)

    def all_respond() -> None:
        current = {p.metadata.uid for p in workloads.list_pods(api, namespace, labels)}
        for pod in expected:
            assert pod.metadata.uid in current, f"pod {pod.metadata.name} is no longer a replica"
            # The trailing slash ("proxy/") spares a redirect, which the suite's client does not follow.
            bound = waits.call_timeout()
            body = str(retry.call(core.connect_get_namespaced_pod_proxy_with_path, pod.metadata.name, namespace, "",
                                  deadline=bound, _request_timeout=bound))
            assert body == pod.metadata.name if want_name else body, \
                f"pod {pod.metadata.name} answered {body!r}"

    waits.poll(f"pods {sorted(p.metadata.name for p in expected)} to respond", all_respond, timeout=timeout)


# -- connectivity between pods (hybrid_network.go) ----------------------------------------------------
WARM_UP = 30.0  # Eventually …
STEADY = 10.0  # … then Consistently
PROBE_TIMEOUT = 10
INTERNAL_MAX_TRIES = 3
EXTERNAL_MAX_TRIES = 10


def linux_check(address: str, port: int) -> list[str]:
    return ["/bin/sh", "-c", f"nc -vz {address} {port} -w {PROBE_TIMEOUT}"]


def windows_check(address: str) -> list[str]:
    return ["cmd", "/c", f"curl.exe -4 {address} --connect-timeout {PROBE_TIMEOUT} --fail"]


def assert_consistent_connectivity(api: client.ApiClient, namespace: str, pod: str, *, container: str,
                                   command: list[str], max_tries: int) -> None:
    """assertConsistentConnectivity: within 30 s the probe succeeds (up to `max_tries` execs per check), and
    then keeps succeeding for 10 s."""

    def check() -> str:
        detail = ""
        for _ in range(max_tries):
            result = pods.exec_(api, namespace, pod, command, container=container, timeout=PROBE_TIMEOUT + 20)
            detail = f"{command} in {pod}/{container}: exit {result.exit_code}, stdout={result.stdout!r}, " \
                     f"stderr={result.stderr!r}"
            if result.exit_code == 0:
                return detail
        raise AssertionError(detail)

    what = f"{command} to succeed in {pod}/{container}"
    waits.poll(what, check, timeout=WARM_UP)
    waits.poll(what, check, timeout=STEADY, consistently=True)
