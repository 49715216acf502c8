"""The embedded cluster's LoadBalancer implementation: winsuite-servicelb (servicelb/main.go), Kubernetes' own service
controller over addresses from the top of the bridge's subnet, which it puts on the bridge; kube-proxy forwards them.

Why not MetalLB or cloud-provider-kind: upstream's LoadBalancer e2e test checks the
`service.kubernetes.io/load-balancer-cleanup` finalizer, which only the cloud-provider service controller adds
(MetalLB never does), and cloud-provider-kind serves kind's Docker nodes only. This is that controller, as every
cloud controller manager runs it, with a provider that stays on the machine.
"""

from __future__ import annotations

from pathlib import Path

from winsuite.cluster.embedded.config import BRIDGE
from winsuite.cluster.embedded.config import LOAD_BALANCER_RANGE

NAME = "winsuite-servicelb"


def argv(binary: Path, kubeconfig: Path, cluster: str) -> list[str]:
    first, last = LOAD_BALANCER_RANGE
    return [str(binary), f"--kubeconfig={kubeconfig}", f"--bridge={BRIDGE}", f"--addresses={first}-{last}",
            f"--cluster-name={cluster}", "--v=2"]
