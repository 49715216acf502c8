"""A pod's DNS resolver as the pod sees it, read the OS way, and name lookups made from inside the pod.

Linux keeps a container's resolver configuration in /etc/resolv.conf. Windows keeps it in the container's
registry and network stack, where the CNI plugin put it through HNS (KEP-116, "Custom DNS updates for CNI
plugins"): agnhost's dns-server-list (GetNetworkParams) and dns-suffix (the TCPIP SearchList values) read it
there, and `ipconfig /all` shows it as Windows reports it.
"""

from __future__ import annotations

import dataclasses
import re

from kubernetes import client

from winsuite.authoring.targeting import NodeOS
from winsuite.k8s import pods
from winsuite.k8s import waits

IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
CONTAINER = "agnhost-container"


@dataclasses.dataclass(frozen=True)
class ResolverConfig:
    nameservers: list[str]
    searches: list[str]
    options: list[str]


def parse_resolv_conf(text: str) -> ResolverConfig:
    """The kubelet's parseResolvConf: nameservers accumulate, the last search line wins (without "." and
    trailing dots), options accumulate."""
    nameservers: list[str] = []
    searches: list[str] = []
    options: list[str] = []
    for line in text.splitlines():
        fields = line.strip().split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] == "nameserver" and len(fields) > 1:
            nameservers.append(fields[1])
        elif fields[0] == "search":
            searches = [s.removesuffix(".") for s in fields[1:] if s != "."]
        elif fields[0] == "options":
            options += fields[1:]
    return ResolverConfig(nameservers, searches, options)


def run(api: client.ApiClient, namespace: str, pod: str, command: list[str]) -> str:
    """A command's stdout; the test fails with its output if it exits non-zero."""
    return pods.exec_(api, namespace, pod, command, container=CONTAINER).check().stdout


def _listed(text: str) -> list[str]:
    return [item.strip() for item in text.replace("\r", "").strip().split(",") if item.strip()]


def resolver_config(api: client.ApiClient, namespace: str, pod: str, target_os: str) -> ResolverConfig:
    """What the pod's resolver was configured with: /etc/resolv.conf on Linux, the CNI's settings on Windows
    (there is no options line on Windows: options such as ndots do not exist there)."""
    if target_os == NodeOS.WINDOWS:
        servers = _listed(run(api, namespace, pod, ["/agnhost", "dns-server-list"]))
        suffixes = _listed(run(api, namespace, pod, ["/agnhost", "dns-suffix"]))
        return ResolverConfig(servers, suffixes, options=[])
    return parse_resolv_conf(run(api, namespace, pod, ["cat", "/etc/resolv.conf"]))


def ipconfig_all(api: client.ApiClient, namespace: str, pod: str) -> str:
    """Windows' own report of the container's network configuration, DNS servers and suffixes included."""
    return run(api, namespace, pod, ["ipconfig", "/all"])


def read_file(api: client.ApiClient, namespace: str, pod: str, path: str, target_os: str) -> str:
    command = ["cmd", "/c", "type", path] if target_os == NodeOS.WINDOWS else ["cat", path]
    return run(api, namespace, pod, command)


def hostname(api: client.ApiClient, namespace: str, pod: str) -> str:
    return run(api, namespace, pod, ["hostname"]).strip()


def hosts_file(api: client.ApiClient, namespace: str, pod: str) -> str:
    """The pod's hosts file (/etc/hosts, or C:/Windows/System32/drivers/etc/hosts), by agnhost on both."""
    return run(api, namespace, pod, ["/agnhost", "etc-hosts"])


def lookup(api: client.ApiClient, namespace: str, pod: str, name: str) -> tuple[list[str], str]:
    """nslookup of an absolute name through the pod's configured server: the IPv4 addresses answered (after
    the "Name:" line, so not the server's own) and the whole output. busybox nslookup on Linux, BIND's
    nslookup.exe on Windows (both images carry one); both print the answer the same way."""
    result = pods.exec_(api, namespace, pod, ["nslookup", f"{name.rstrip('.')}."], container=CONTAINER)
    output = f"{result.stdout}{result.stderr}".replace("\r", "")
    _, found, answer = output.partition("\nName:")
    return (IPV4.findall(answer) if found else []), output


def wait_for_lookup(api: client.ApiClient, namespace: str, pod: str, name: str, address: str, *,
                    timeout: float = 120.0) -> None:
    """Poll the lookup until `name` resolves to `address` (DNS records follow endpoints by seconds)."""

    def check() -> str:
        addresses, output = lookup(api, namespace, pod, name)
        detail = output
        assert address in addresses, detail
        return detail

    waits.poll(f"{name} to resolve to {address} in pod {namespace}/{pod}", check, timeout=timeout)
