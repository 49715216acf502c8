"""Pods: create, start, wait_for (running, ready, succeeded, …), logs, exec, delete; in kubectl's words."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.k8s import api_websocket
from winsuite.k8s import events
from winsuite.k8s import retry
from winsuite.k8s.api_answer import api_answer
from winsuite.k8s.manifests import Manifest
from winsuite.k8s.waits import PermanentFailure
from winsuite.k8s.waits import call_timeout
from winsuite.k8s.waits import wait_for
from winsuite.k8s.waits import wait_for_set

# Waiting reasons after which a container will not start without someone changing the pod. Pull errors
# are left out: on real clusters they can be transient, and a timeout still reports them.
HOPELESS_WAITING = frozenset({"ErrImageNeverPull", "InvalidImageName", "ImageInspectError"})
# Upstream framework timeouts (test/e2e/framework/timeouts.go), trimmed to fit the suite's per-test timeout.
POD_START_TIMEOUT = 180.0
FINISH_TIMEOUT = 180.0  # the 3 minutes upstream gives HostProcess pods to finish
EXEC_TIMEOUT = 60.0  # an exec's own bound, unless its caller gives one (a poll it is made in may cut it shorter)


def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


def create(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1Pod:
    return retry.call(core(api).create_namespaced_pod, namespace, manifest)


def get(api: client.ApiClient, namespace: str, name: str) -> client.V1Pod:
    return retry.call(core(api).read_namespaced_pod, name, namespace)


def delete(api: client.ApiClient, namespace: str, name: str, grace_seconds: int | None = None) -> None:
    body = client.V1DeleteOptions(grace_period_seconds=grace_seconds)
    retry.call(core(api).delete_namespaced_pod, name, namespace, body=body)


def describe(pod: client.V1Pod) -> str:
    """One line: phase, node, conditions and container states, the way a failure message needs it."""
    status = pod.status
    parts = [f"pod {pod.metadata.namespace}/{pod.metadata.name} phase={status.phase}",
             f"node={pod.spec.node_name or '<unscheduled>'}"]
    for cond in status.conditions or []:
        parts.append(f"{cond.type}={cond.status}" + (f"({cond.reason}: {cond.message})" if cond.reason else ""))
    for cs in (status.init_container_statuses or []) + (status.container_statuses or []):
        state = cs.state
        if state.waiting:
            parts.append(f"{cs.name}: waiting {state.waiting.reason} {state.waiting.message or ''}".rstrip())
        elif state.terminated:
            parts.append(f"{cs.name}: terminated {state.terminated.reason} exit={state.terminated.exit_code}")
        else:
            parts.append(f"{cs.name}: running ready={cs.ready} restarts={cs.restart_count}")
    return "; ".join(parts)


def describe_all(items: list[client.V1Pod]) -> str:
    return "; ".join(describe(p) for p in items) or "no pod"


def _fail_if_hopeless(pod: client.V1Pod, wanted: str) -> None:
    if pod.status.phase == "Failed" and wanted != "Failed":
        raise PermanentFailure(f"{describe(pod)}: the pod failed while waiting for it to be {wanted}")
    for cs in pod.status.container_statuses or []:
        waiting = cs.state.waiting
        if waiting is not None and waiting.reason in HOPELESS_WAITING:
            raise PermanentFailure(f"{describe(pod)}: container {cs.name} cannot start ({waiting.reason})")


def _condition(pod: client.V1Pod, kind: str) -> bool:
    return any(c.type == kind and c.status == "True" for c in pod.status.conditions or [])


CONDITIONS: dict[str, Callable[[client.V1Pod], bool]] = {
    "Scheduled": lambda p: _condition(p, "PodScheduled"),
    "Running": lambda p: p.status.phase == "Running",
    "Ready": lambda p: _condition(p, "Ready"),
    "Succeeded": lambda p: p.status.phase == "Succeeded",
    "Completed": lambda p: p.status.phase in ("Succeeded", "Failed"),
    "Failed": lambda p: p.status.phase == "Failed",
}


def is_ready(pod: client.V1Pod) -> bool:
    return CONDITIONS["Ready"](pod)


def wait_for_pod(api: client.ApiClient, namespace: str, name: str, *, state: str = "Running",
                 timeout: float = 300.0) -> client.V1Pod:
    """Wait until the pod is Scheduled, Running, Ready, Succeeded, Completed or Failed."""
    check = CONDITIONS[state]

    def done(pod: client.V1Pod) -> bool:
        if check(pod):
            return True
        if state not in ("Completed", "Failed", "Scheduled"):
            _fail_if_hopeless(pod, state)
        return False

    return wait_for(core(api).list_namespaced_pod, name=name, namespace=namespace,
                    what=f"pod {namespace}/{name} to be {state}", condition=done, timeout=timeout,
                    describe=describe)


def wait_until(api: client.ApiClient, namespace: str, name: str, what: str,
               condition: Callable[[client.V1Pod], bool], timeout: float = 300.0) -> client.V1Pod:
    """Wait for any pod condition (e.g. a restart count), reporting the last state on timeout."""
    return wait_for(core(api).list_namespaced_pod, name=name, namespace=namespace,
                    what=f"pod {namespace}/{name} {what}", condition=condition, timeout=timeout, describe=describe)


def logs(api: client.ApiClient, namespace: str, name: str, container: str | None = None,
         previous: bool = False) -> str:
    """The container's log, read within waits.call_timeout()."""
    kwargs: dict[str, Any] = {"previous": previous}
    if container:
        kwargs["container"] = container
    bound = call_timeout()
    return str(retry.call(core(api).read_namespaced_pod_log, name, namespace, deadline=bound,
                          _request_timeout=bound, **kwargs))


@dataclasses.dataclass(frozen=True)
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int

    def check(self) -> ExecResult:
        if self.exit_code != 0:
            raise AssertionError(f"command exited {self.exit_code}: stdout={self.stdout!r} stderr={self.stderr!r}")
        return self


def exec_(api: client.ApiClient, namespace: str, name: str, command: list[str], container: str | None = None,
          timeout: float = EXEC_TIMEOUT) -> ExecResult:
    """`kubectl exec`: run a command in a container and collect stdout, stderr and the exit code.

    Connecting, the command and its output take at most `timeout` seconds, and no longer than the poll the exec is
    made in has left (waits.call_timeout); past that it raises api_websocket.CallTimeout (an AssertionError, which
    the poll tries again), whatever the command still does.
    """
    channels = api_websocket.exec_in(api, namespace, name, command, container=container,
                                     timeout=call_timeout(timeout))
    return ExecResult(channels.text(api_websocket.STDOUT), channels.text(api_websocket.STDERR),
                      _exit_code(channels.text(api_websocket.ERROR)))


def _exit_code(status_json: str) -> int:
    if not status_json:
        return -1  # the stream closed without a status: the exec did not complete
    status = json.loads(status_json)
    if status.get("status") == "Success":
        return 0
    for cause in status.get("details", {}).get("causes", []):
        if cause.get("reason") == "ExitCode":
            return int(cause["message"])
    return -1


def pod_ip(pod: client.V1Pod) -> str:
    return str(pod.status.pod_ip if pod.status else "")


def phase_of(pod: client.V1Pod) -> str:
    return str((pod.status or client.V1PodStatus()).phase)


def terminated_reasons(pod: client.V1Pod) -> dict[str, str]:
    """testutils.TerminatedContainers: container name -> reason of the terminated ones."""
    statuses = (pod.status or client.V1PodStatus()).container_statuses or []
    return {s.name: str(s.state.terminated.reason) for s in statuses if s.state and s.state.terminated}


# -- upstream's PodClient: create and wait ------------------------------------------------------------
def start(api: client.ApiClient, namespace: str, manifest: Manifest, *, state: str = "Running",
          timeout: float = POD_START_TIMEOUT) -> client.V1Pod:
    """podClient.CreateSync: create the pod and wait until it is `state` (Running, Ready, …)."""
    create(api, namespace, manifest)
    return wait_for_pod(api, namespace, manifest["metadata"]["name"], state=state, timeout=timeout)


def create_all(api: client.ApiClient, namespace: str, manifests: list[Manifest], *,
               timeout: float = POD_START_TIMEOUT) -> list[client.V1Pod]:
    """PodClient.CreateBatch: create every pod, then wait for each to be Running and Ready."""
    for manifest in manifests:
        create(api, namespace, manifest)
    return [wait_for_pod(api, namespace, m["metadata"]["name"], state="Ready", timeout=timeout)
            for m in manifests]


def wait_for_finish(api: client.ApiClient, namespace: str, name: str,
                    timeout: float = FINISH_TIMEOUT) -> client.V1Pod:
    """PodClient.WaitForFinish: Succeeded or Failed."""
    return wait_for_pod(api, namespace, name, state="Completed", timeout=timeout)


def assert_succeeded(api: client.ApiClient, namespace: str, name: str,
                     timeout: float = FINISH_TIMEOUT) -> client.V1Pod:
    """Wait for the pod to finish; it must have Succeeded (else: its containers' output and its events)."""
    finished = wait_for_finish(api, namespace, name, timeout)
    if phase_of(finished) != "Succeeded":
        spec = finished.spec or client.V1PodSpec(containers=[])
        output = output_of(api, namespace, name, [c.name for c in (spec.init_containers or []) + spec.containers])
        happened = "\n".join(events.describe(e) for e in events.list_events(api, namespace)
                             if e.involved_object.name == name)
        raise AssertionError(f"{describe(finished)}: expected phase Succeeded\n"
                             f"container output:\n{output}\nevents:\n{happened}")
    return finished


def wait_for_no_pods(api: client.ApiClient, namespace: str, *, label_selector: str = "", what: str,
                     timeout: float = POD_START_TIMEOUT) -> None:
    """Wait until no pod of the namespace (matching the selector) is left."""
    wait_for_set(core(api).list_namespaced_pod, namespace=namespace, label_selector=label_selector,
                 what=what, condition=lambda items: not items, timeout=timeout,
                 describe=describe_all)


def read_logs(api: client.ApiClient, namespace: str, name: str, container: str,
              **options: Any) -> tuple[bool, str]:
    """(True, logs), or (False, the API's answer) while the container has none to give yet; read within
    waits.call_timeout()."""
    try:
        read, bound = core(api).read_namespaced_pod_log, call_timeout()
        return True, str(retry.call(read, name, namespace, container=container, deadline=bound,
                                    _request_timeout=bound, **options))
    except ApiException as err:
        if err.status in (400, 404):  # container creating / pod not yet bound: logs come later
            return False, api_answer(err)
        raise


def output_of(api: client.ApiClient, namespace: str, name: str, containers: Iterable[str]) -> str:
    """Each container's logs under its name (the API's answer where it has none yet): a failed pod's output."""
    return "\n".join(f"--- {c}:\n{read_logs(api, namespace, name, c)[1]}" for c in containers)
