"""Following one shard pod's log from its first line to its last, whatever happens to the pod on the way.

One thread per shard puts (shard index, line) on a queue, then (shard index, Ended) once the log is over: the
container ended, the pod was deleted, or it can never start. A read that stays silent for a while is opened again and
the lines already read are skipped, so a dropped connection loses nothing and repeats nothing.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ProtocolError
from urllib3.exceptions import ReadTimeoutError

from winsuite.k8s.not_found import not_found
from winsuite.run.incluster.objects import RunObjects
from winsuite.run.incluster.objects import shard_pods

READ_TIMEOUT = 120.0  # seconds of silence before the stream is opened again
POLL_SECONDS = 1.0
# Waiting reasons a container never leaves by itself.
FATAL_WAITING = {"ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError"}
PULL_WAITING = {"ErrImagePull", "ImagePullBackOff"}
PULL_PATIENCE = 300.0  # seconds an image pull may keep failing before the shard is given up


@dataclasses.dataclass(frozen=True)
class Ended:
    """The shard's log is over; `why` says how the pod ended when that is not a plain exit."""

    why: str


class ShardLog(threading.Thread):
    def __init__(self, api: client.ApiClient, objects: RunObjects, index: int,
                 out: queue.Queue[tuple[int, str | Ended]]) -> None:
        super().__init__(name=f"shard-log-{index + 1}", daemon=True)
        self.api, self.objects, self.index, self.out = api, objects, index, out
        self.stopping = threading.Event()
        self._read = 0  # lines already passed on

    def run(self) -> None:
        try:
            self.out.put((self.index, Ended(self._follow())))
        except Exception as err:  # the run goes on with what arrived; the shard is reported with this
            self.out.put((self.index, Ended(f"its log could not be read: {err}")))

    def _follow(self) -> str:
        pulling_since: float | None = None
        seen = None
        while not self.stopping.is_set():
            pod = shard_pods(self.api, self.objects).get(self.index)
            if pod is None:
                if seen is not None:
                    return f"its pod {seen} was deleted before it started"
                time.sleep(POLL_SECONDS)
                continue
            seen = pod.metadata.name
            state = _container_state(pod)
            if state is not None and (state.running or state.terminated):
                return self._stream(pod.metadata.name)
            waiting = state.waiting if state is not None else None
            reason = (waiting.reason or "") if waiting is not None else ""
            detail = (waiting.message or "") if waiting is not None else ""
            if reason in FATAL_WAITING:
                return f"its pod {seen} cannot start: {reason}: {detail}".rstrip(": ")
            if reason in PULL_WAITING:
                pulling_since = pulling_since or time.monotonic()
                if time.monotonic() - pulling_since > PULL_PATIENCE:
                    return f"its pod {seen} cannot pull its image: {detail or reason}"
            if pod.status.phase in ("Failed", "Succeeded") and state is None:
                return f"its pod {seen} ended without starting: {pod.status.reason or pod.status.phase}"
            time.sleep(POLL_SECONDS)
        return "the run stopped following it"

    def _stream(self, pod: str) -> str:
        core = client.CoreV1Api(self.api)
        while not self.stopping.is_set():
            skip, pending = self._read, b""
            try:
                response = core.read_namespaced_pod_log(pod, self.objects.namespace, container="shard", follow=True,
                                                        _preload_content=False, _request_timeout=(10, READ_TIMEOUT))
                for chunk in response.stream(65536):
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if skip:
                            skip -= 1
                            continue
                        self._read += 1
                        self.out.put((self.index, line.decode("utf-8", "replace")))
                response.release_conn()
            except ApiException as err:
                if not_found(err):
                    return f"its pod {pod} was deleted"
                raise
            except (ReadTimeoutError, ProtocolError):  # silent for a while, or a dropped connection: open it again
                continue
            if pending and not skip:  # the last line had no newline: the container ended mid-line
                self._read += 1
                self.out.put((self.index, pending.decode("utf-8", "replace")))
            return _how_it_ended(core, pod, self.objects.namespace)
        return "the run stopped following it"


def _container_state(pod: client.V1Pod) -> client.V1ContainerState | None:
    statuses = pod.status.container_statuses or []
    return statuses[0].state if statuses else None


# Reasons the kubelet gives a container the runtime could not start.
_NEVER_STARTED = frozenset({"StartError", "ContainerCannotRun", "CreateContainerError", "RunContainerError"})


def _how_it_ended(core: client.CoreV1Api, name: str, namespace: str) -> str:
    """'' for a container that exited by itself; else what ended it (deleted, OOM-killed, evicted, a signal)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pod = core.read_namespaced_pod(name, namespace)
        except ApiException as err:
            if not_found(err):
                return f"its pod {name} was deleted"
            raise
        state = _container_state(pod)
        if state is not None and state.terminated:
            terminated = state.terminated
            if pod.metadata.deletion_timestamp is not None:
                return f"its pod {name} was deleted (exit code {terminated.exit_code})"
            if terminated.reason in _NEVER_STARTED:  # the runtime's message says why (a missing file, a mount)
                message = " ".join((terminated.message or "").split())[:400]
                return f"its pod {name} could not start its container ({terminated.reason}: {message})"
            if terminated.reason == "OOMKilled" or terminated.exit_code >= 128:
                return f"its pod {name} was killed ({terminated.reason}, exit code {terminated.exit_code})"
            return ""
        if pod.status.reason:  # Evicted, DeadlineExceeded
            return f"its pod {name} ended: {pod.status.reason}: {pod.status.message or ''}".rstrip(": ")
        time.sleep(POLL_SECONDS)
    return f"its pod {name} did not report how its container ended"
