"""iptables chains the real node adds (kube-proxy, kubelet, CNI portmap, winsuite's egress guard)."""

from __future__ import annotations

import shlex
import subprocess

FAMILIES = ("iptables", "ip6tables")
TABLES = ("filter", "nat", "mangle", "raw")
OWNED_PREFIXES = ("KUBE-", "CNI-", "WINSUITE-")
EGRESS_CHAIN = "WINSUITE-EGRESS"


def _rules(family: str, table: str) -> list[str]:
    proc = subprocess.run([family, "-w", "-t", table, "-S"], capture_output=True, text=True, check=False)
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def _run(family: str, table: str, *args: str) -> None:
    subprocess.run([family, "-w", "-t", table, *args], capture_output=True, check=False)


def owned_chains() -> dict[str, list[str]]:
    """'family:table' -> chains with an owned prefix that exist now."""
    found = {}
    for family in FAMILIES:
        for table in TABLES:
            chains = [line.split()[1] for line in _rules(family, table) if line.startswith("-N ")]
            found[f"{family}:{table}"] = sorted(chain for chain in chains if chain.startswith(OWNED_PREFIXES))
    return found


def new_chains(before: dict[str, list[str]]) -> dict[str, list[str]]:
    """Owned chains that did not exist before `up` (so another cluster's or tool's chains are kept)."""
    now = owned_chains()
    return {
        key: [chain for chain in chains if chain not in before.get(key, [])] for key, chains in now.items()
    }


def remove_chains(chains: dict[str, list[str]]) -> None:
    """Delete every rule jumping to the chains, then flush and delete the chains themselves."""
    for key, names in chains.items():
        if not names:
            continue
        family, table = key.split(":")
        doomed = set(names)
        for line in _rules(family, table):
            words = shlex.split(line)
            if words[0] == "-A" and any(word in doomed for word in words[2:]):
                _run(family, table, "-D", *words[1:])
        for chain in names:
            _run(family, table, "-F", chain)
        for chain in names:
            _run(family, table, "-X", chain)


def add_egress_guard(bridge: str) -> None:
    """Reject anything pods send past the bridge: pod traffic never leaves the machine."""
    _run("iptables", "filter", "-N", EGRESS_CHAIN)
    _run("iptables", "filter", "-A", EGRESS_CHAIN, "-i", bridge, "!", "-o", bridge, "-j", "REJECT")
    _run("iptables", "filter", "-I", "FORWARD", "1", "-j", EGRESS_CHAIN)
