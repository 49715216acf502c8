"""LoadBalancers (test/e2e/network/loadbalancer.go): the load-balancer cleanup finalizer follows the type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Slow
from winsuite.k8s import connectivity
from winsuite.k8s import pods
from winsuite.k8s import workloads

load_balancers = Describe(Area("sig-network"), "LoadBalancers", Feature("LoadBalancer"))

CLEANUP_FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
CREATION_TIMEOUT = 600.0  # loadBalancerCreateTimeoutDefault is 10m; clouds take minutes
NAME = "lb-finalizer"


def wait_for_service(api: client.ApiClient, namespace: str, what: str,
                     condition: Callable[[Any], bool]) -> client.V1Service:
    return workloads.wait_for_object(pods.core(api).list_namespaced_service, name=NAME, namespace=namespace,
                                     what=f"service {NAME} {what}", condition=condition, timeout=CREATION_TIMEOUT)


def has_finalizer(svc: client.V1Service) -> bool:
    return CLEANUP_FINALIZER in (svc.metadata.finalizers or [])


def change_type(api: client.ApiClient, namespace: str, kind: str) -> None:
    """TestJig.ChangeServiceType: a new type, the node port dropped; then the old ingress goes away."""
    core = pods.core(api)
    before = core.read_namespaced_service(NAME, namespace)
    had_ingress = bool(before.status.load_balancer and before.status.load_balancer.ingress)

    def retype(svc: client.V1Service) -> None:
        svc.spec.type = kind
        svc.spec.ports[0].node_port = None

    workloads.update_with_retries(lambda: core.read_namespaced_service(NAME, namespace),
                                  lambda svc: core.replace_namespaced_service(NAME, namespace, svc), retype)
    if had_ingress:
        wait_for_service(api, namespace, "to have no load balancer",
                         lambda svc: not (svc.status.load_balancer and svc.status.load_balancer.ingress))


@load_balancers.it("should handle load balancer cleanup finalizer for service", Slow,
                   twin="[sig-network] LoadBalancers [Feature:LoadBalancer] should handle load balancer cleanup "
                        "finalizer for service [Slow]",
                   needs=[Capability.LOAD_BALANCER], category="Core.Network")
def test_cleanup_finalizer(api: client.ApiClient, namespace: str) -> None:
    core = pods.core(api)
    connectivity.create_tcp_service(api, namespace, NAME, connectivity.jig_labels(NAME),
                                    [{"protocol": "TCP", "port": 80}], type="LoadBalancer")
    try:
        svc = wait_for_service(api, namespace, "to have a load balancer",
                               lambda s: bool(s.status.load_balancer and s.status.load_balancer.ingress))
        assert all(i.ip or i.hostname for i in svc.status.load_balancer.ingress), \
            f"unexpected load-balancer ingress {svc.status.load_balancer.ingress}"
        wait_for_service(api, namespace, "to have the cleanup finalizer", has_finalizer)
        change_type(api, namespace, "ClusterIP")
        wait_for_service(api, namespace, "to lose the cleanup finalizer", lambda s: not has_finalizer(s))
        change_type(api, namespace, "LoadBalancer")
        wait_for_service(api, namespace, "to have the cleanup finalizer again", has_finalizer)
    finally:
        # WaitForServiceDeletedWithFinalizer: the deletion completes once the finalizer is handled.
        core.delete_namespaced_service(NAME, namespace)
        workloads.wait_for_gone(core.list_namespaced_service, name=NAME, namespace=namespace,
                                what=f"service {NAME}", timeout=CREATION_TIMEOUT)
