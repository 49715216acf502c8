"""Horizontal pod autoscaling (test/e2e/autoscaling/horizontal_pod_autoscaling.go): CPU load scales a ReplicaSet."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.k8s import connectivity
from winsuite.k8s import manifests
from winsuite.k8s import retry
from winsuite.k8s import services
from winsuite.k8s import workloads

cpu_autoscaling = Describe(Area("sig-autoscaling"), Feature("HPA"), "Horizontal pod autoscaling (scale resource: CPU)")

CONSUMPTION_SECONDS = 30  # dynamicConsumptionTimeInSeconds: each request burns CPU this long, then is renewed
REQUEST_SIZE_MILLICORES = 100  # dynamicRequestSizeInMillicores
SCALE_TIMEOUT = 240.0  # upstream waits up to 15m; the suite's per-test budget is shorter


def consumer_service(api: client.ApiClient, namespace: str, name: str) -> None:
    """createService: port 80 ("http") to the consumer's 8080."""
    services.create(api, namespace, {"metadata": {"name": name, "labels": {"name": name}}, "spec": {
        "ports": [{"name": "http", "port": 80, "targetPort": 8080}], "selector": {"name": name}}})


def replica_set(target: Target, name: str, image_id: str, replicas: int, **container: Any) -> dict[str, Any]:
    """testutils.ReplicaSetConfig.create: labelled name=<name>, one container exposing port 80."""
    main = manifests.container(name, target.image(image_id), ports=[{"containerPort": 80}], **container)
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
          "spec": {"replicas": replicas, "selector": {"matchLabels": {"name": name}},
                   "template": {"metadata": {"labels": {"name": name}},
                                "spec": {"terminationGracePeriodSeconds": 1, "containers": [main]}}}}
    return target.place(rs)


class ResourceConsumer:
    """e2eautoscaling.ResourceConsumer: resource-consumer replicas, and agnhost's resource-consumer-controller
    that spreads ConsumeCPU requests over them; a background loop renews the requested load."""

    def __init__(self, api: client.ApiClient, namespace: str, name: str) -> None:
        self.api, self.namespace, self.name = api, namespace, name
        self.millicores = 0
        self._stop = threading.Event()
        self._changed = threading.Event()
        self._thread = threading.Thread(target=self._consume, daemon=True)

    def start(self, target: Target, replicas: int, cpu_millis: int) -> None:
        """runServiceAndWorkloadForResourceConsumer: the consumer and its controller, each behind a Service."""
        consumer_service(self.api, self.namespace, self.name)
        cpu = f"{cpu_millis}m"
        retry.call(workloads.apps(self.api).create_namespaced_replica_set, self.namespace, replica_set(
            target, self.name, "resource-consumer", replicas, resources={"requests": {"cpu": cpu},
                                                                          "limits": {"cpu": cpu}}))
        workloads.wait_for_pods(self.api, self.namespace, {"name": self.name}, count=replicas, state="Ready")
        controller = f"{self.name}-ctrl"
        consumer_service(self.api, self.namespace, controller)
        command = ["/agnhost", "resource-consumer-controller", f"--consumer-service-name={self.name}",
                   f"--consumer-service-namespace={self.namespace}", "--consumer-port=80"]
        rs = replica_set(target, controller, "agnhost", 1, command=command)
        rs["spec"]["template"]["spec"]["dnsPolicy"] = "ClusterFirst"
        retry.call(workloads.apps(self.api).create_namespaced_replica_set, self.namespace, rs)
        connectivity.wait_for_endpoint_count(self.api, self.namespace, controller, 1)
        self._thread.start()

    def consume_cpu(self, millicores: int) -> None:
        self.millicores = millicores
        self._changed.set()

    def _consume(self) -> None:
        """makeConsumeCPURequests: send the total load now and again each time the last request runs out."""
        while not self._stop.is_set():
            if self.millicores:
                self._send()
            self._changed.wait(CONSUMPTION_SECONDS)  # a load generator's period, not a wait for a state
            self._changed.clear()

    def _send(self) -> None:
        """sendConsumeCPURequest: POST ConsumeCPU to the controller through the API server's service proxy."""
        params = [("millicores", str(self.millicores)), ("durationSec", str(CONSUMPTION_SECONDS)),
                  ("requestSizeMillicores", str(REQUEST_SIZE_MILLICORES))]
        request = self.api.param_serialize(
            "POST", "/api/v1/namespaces/{namespace}/services/{name}/proxy/ConsumeCPU",
            path_params={"namespace": self.namespace, "name": f"{self.name}-ctrl:http"}, query_params=params,
            header_params={"Accept": "*/*"}, auth_settings=["BearerToken"])
        try:
            retry.call(self.api.call_api, *request[:4]).read()
        except (OSError, client.exceptions.ApiException):
            return  # the next period retries, as upstream's Eventually around each request does

    def stop(self) -> None:
        self._stop.set()
        self._changed.set()


@contextmanager
def resource_consumer(api: client.ApiClient, namespace: str, target: Target, name: str, *, replicas: int,
                      cpu_millis: int, initial_cpu: int) -> Iterator[ResourceConsumer]:
    """NewDynamicResourceConsumer; its load stops with the block (the namespace takes the rest)."""
    consumer = ResourceConsumer(api, namespace, name)
    try:
        consumer.start(target, replicas, cpu_millis)
        consumer.consume_cpu(initial_cpu)
        yield consumer
    finally:
        consumer.stop()


@cpu_autoscaling.describe("ReplicaSet light").it(
    "Should scale from 1 pod to 2 pods",
    twin="[sig-autoscaling] [Feature:HPA] Horizontal pod autoscaling (scale resource: CPU) ReplicaSet light Should "
         "scale from 1 pod to 2 pods",
    needs=[Capability.METRICS_API, Capability.RUNS_CONTAINERS, Capability.CLUSTER_DNS],
    images=["resource-consumer", "agnhost"], category="Core.Scheduling")
def test_scale_from_one_pod_to_two(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "rs-light"
    with resource_consumer(api, namespace, target, name, replicas=1, cpu_millis=200, initial_cpu=150):
        hpa = {"metadata": {"name": name}, "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name},
            "minReplicas": 1, "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": 50}}}]}}
        client.AutoscalingV2Api(api).create_namespaced_horizontal_pod_autoscaler(namespace, hpa)
        workloads.wait_for_object(workloads.apps(api).list_namespaced_replica_set, name=name, namespace=namespace,
                                  what=f"replica set {name} to have 2 ready replicas",
                                  condition=lambda rs: rs.status.ready_replicas == 2, timeout=SCALE_TIMEOUT)
