"""A port that skips where its upstream twin runs, for `--engine both`: named as upstream names the spec, it needs
what no node of the embedded cluster has (a Windows node with a GPU), so on that cluster only upstream runs it."""

from __future__ import annotations

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance

pods_ = Describe(Area("sig-node"), "Pods")


@pods_.it("should get a host IP", NodeConformance, Conformance,
          twin="[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
          needs=[Capability.GPU])
def test_pod_host_ip_out_of_reach() -> None:
    raise AssertionError("runs only on a cluster with a GPU Windows node; the embedded cluster has none")
