"""The host's network and mounts as a cluster could change them: firewall rules, interfaces, mounts, forwarding."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

COUNTERS = re.compile(r"\[\d+:\d+\]")


def _rules(save: str) -> frozenset[str]:
    """Every table, chain and rule `save` prints (counters dropped: they change with any traffic)."""
    if shutil.which(save) is None:
        return frozenset()
    done = subprocess.run([save], capture_output=True, text=True, check=False)
    table = ""
    lines = set()
    for line in done.stdout.splitlines():
        if line.startswith("*"):
            table = line
        elif line and not line.startswith(("#", "COMMIT")):
            lines.add(f"{save} {table} {COUNTERS.sub('', line).strip()}")
    return frozenset(lines)


def _interface(path: Path) -> str:
    """An interface's name, with the bridge it is attached to: a pod's veth says whose cluster it belongs to."""
    master = path / "master"
    return f"{path.name} (on {master.resolve().name})" if master.exists() else path.name


@dataclasses.dataclass(frozen=True)
class HostState:
    rules: frozenset[str]
    interfaces: frozenset[str]
    mounts: frozenset[str]
    ip_forward: str

    @classmethod
    def now(cls) -> HostState:
        interfaces = frozenset(_interface(path) for path in Path("/sys/class/net").iterdir())
        mounts = frozenset(line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines())
        return cls(_rules("iptables-save") | _rules("iptables-legacy-save") | _rules("ip6tables-save"), interfaces,
                   mounts, Path("/proc/sys/net/ipv4/ip_forward").read_text().strip())

    def changes_since(self, before: HostState, ignore: Callable[[str], bool] = lambda _: False,
                      forwarding: bool = True) -> list[str]:
        """What differs from `before`, one line each, leaving out what `ignore` says belongs to someone else (and
        IP forwarding unless `forwarding`: the embedded cluster's real node turns it on while it runs)."""
        changes = []
        for what, old, new in (("rule", before.rules, self.rules), ("interface", before.interfaces, self.interfaces),
                               ("mount", before.mounts, self.mounts)):
            changes += [f"{what} added: {item}" for item in sorted(new - old) if not ignore(item)]
            changes += [f"{what} removed: {item}" for item in sorted(old - new) if not ignore(item)]
        if forwarding and self.ip_forward != before.ip_forward:
            changes.append(f"net.ipv4.ip_forward {before.ip_forward} -> {self.ip_forward}")
        return changes
