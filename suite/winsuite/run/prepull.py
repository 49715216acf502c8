"""Prepull: before the tests, every image of the selection is pulled on every node that will run them, so that a
slow or failing pull (the main source of Windows flakes) shows as what it is, not as a hundred test failures.

One DaemonSet per target OS and Windows build, placed like the test pods (never on simulated nodes), with one
container per image; an image counts as pulled once its container leaves ContainerCreating for anything but a
pull error. The step is one JUnit row per DaemonSet, naming every node and image that failed and why. The
namespace goes away afterwards, also when the step is interrupted.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod
from winsuite.k8s import namespaces
from winsuite.k8s import retry
from winsuite.k8s import waits
from winsuite.k8s.api_answer import error_line
from winsuite.policy.prepull_list import ResolvedImage
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import RowProperties

ROW_PREFIX = "[winsuite] prepull "
PREPULL_ROW = RowProperties(category="prepull")
PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                           "RegistryUnavailable"})
STILL_PULLING = frozenset({"", "ContainerCreating", "PodInitializing"})
# Each container only has to start (or fail to run: the image is there either way) and then stay put.
KEEP_ALIVE = {"linux": ["/bin/sh", "-c", "exec sleep 86400"],
              "windows": ["cmd.exe", "/c", "ping -t localhost > NUL"]}
APPEAR_TIMEOUT = 30.0  # for the DaemonSet controller to say how many nodes it places pods on
TIMEOUT = 1200.0  # the longest a prepull may take (the run's own deadline may cut it shorter)
Report = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class PullSet:
    """The images one DaemonSet pulls: one target OS and Windows build."""

    target_os: str
    build: str | None
    images: list[ResolvedImage]

    @property
    def name(self) -> str:
        suffix = f"-{self.build.replace('.', '-')}" if self.build else ""
        return f"prepull-{self.target_os}{suffix}"

    @property
    def row(self) -> str:
        return f"{ROW_PREFIX}{self.target_os}{' ' + self.build if self.build else ''} images"


def pull_sets(target_os: str, images: list[ResolvedImage]) -> list[PullSet]:
    builds = sorted({i.build for i in images}, key=lambda b: b or "")
    return [PullSet(target_os, build, [i for i in images if i.build == build]) for build in builds]


def container_name(index: int, image_id: str) -> str:
    return re.sub(r"[^a-z0-9-]", "-", f"pull-{index}-{image_id}".lower())[:63].rstrip("-")


def daemon_set(pull: PullSet, placement: Placement) -> dict[str, Any]:
    """The DaemonSet that pulls the set's images on every node its placement allows."""
    labels = {"app.kubernetes.io/name": "winsuite-prepull", "winsuite.io/prepull": pull.name}
    pulls = [{"name": container_name(i, image.image_id), "image": image.reference, "imagePullPolicy": "IfNotPresent",
              "command": KEEP_ALIVE[pull.target_os], "resources": {"requests": {"cpu": "1m", "memory": "4Mi"}}}
             for i, image in enumerate(pull.images)]
    template = {"metadata": {"labels": labels}, "spec": {"containers": pulls, "terminationGracePeriodSeconds": 0,
                                                         "automountServiceAccountToken": False}}
    manifest = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": pull.name, "labels": labels},
                "spec": {"selector": {"matchLabels": labels}, "template": template}}
    return place_pod(manifest, placement.with_build(pull.build))


@dataclasses.dataclass
class PullState:
    """What the pods of one DaemonSet say: per (node, image) pulled, failed (why) or still pulling."""

    nodes: int = 0
    done: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)  # -> "" pulled, else why not
    pending: set[tuple[str, str]] = dataclasses.field(default_factory=set)

    def observe(self, pods: list[client.V1Pod], images: dict[str, str]) -> None:
        """`images`: container name -> image reference."""
        self.pending = set()
        for pod in pods:
            node = str(pod.spec.node_name or "") if pod.spec else ""
            if not node:
                continue
            statuses = {s.name: s for s in (pod.status.container_statuses or [])} if pod.status else {}
            for name, reference in images.items():
                key = (node, reference)
                state = getattr(statuses.get(name), "state", None)
                waiting = getattr(state, "waiting", None)
                reason = str(getattr(waiting, "reason", "") or "")
                if state is None or (waiting is not None and reason in STILL_PULLING):
                    self.pending.add(key)
                elif reason in PULL_FAILURES:
                    self.done[key] = f"{reason}: {getattr(waiting, 'message', '') or ''}".strip().rstrip(":")
                else:  # running, terminated, or unable to run: the image is on the node either way
                    self.done[key] = ""

    def failures(self) -> list[str]:
        return [f"node {node}: image {ref}: {why}" for (node, ref), why in sorted(self.done.items()) if why]


def prepull(api: client.ApiClient, pulls: list[PullSet], placement: Placement, run_id: str, *, timeout: float,
            report: Report) -> list[Attempt]:
    """Pull every set on its nodes; one row per set. The namespace is deleted whatever happens."""
    namespace = f"winsuite-prepull-{run_id}".lower()[:63]
    namespaces.create(api, namespace, run_id, "winsuite prepull")
    apps = client.AppsV1Api(api)
    try:
        rows = []
        for pull in pulls:
            retry.call(apps.create_namespaced_daemon_set, namespace, daemon_set(pull, placement))
        for pull in pulls:
            rows.append(_wait(api, namespace, pull, timeout, report))
        return rows
    finally:
        namespaces.delete(api, namespace)
        try:
            waits.wait_for_set(apps.list_namespaced_daemon_set, namespace=namespace, label_selector="",
                               what=f"the prepull DaemonSets of {namespace} to be gone",
                               condition=lambda items: not items, timeout=60)
        except (waits.WaitTimeout, ApiException) as err:
            report(f"winsuite: warning: {error_line(err)}")


def _wait(api: client.ApiClient, namespace: str, pull: PullSet, timeout: float, report: Report) -> Attempt:
    started = time.monotonic()
    images = {container_name(i, image.image_id): image.reference for i, image in enumerate(pull.images)}
    state = PullState()
    try:
        shown = [""]
        ds = waits.wait_for(client.AppsV1Api(api).list_namespaced_daemon_set, name=pull.name, namespace=namespace,
                            what=f"DaemonSet {pull.name} to place its pods",
                            condition=lambda d: d.status is not None and d.status.observed_generation is not None,
                            timeout=APPEAR_TIMEOUT)
        state.nodes = int(ds.status.desired_number_scheduled or 0)
        if state.nodes == 0:
            return Attempt(pull.row, "", Outcome.SKIPPED,
                           message=f"no node of {pull.target_os}{' ' + pull.build if pull.build else ''} the tests "
                                   "may use runs containers", properties=PREPULL_ROW)

        def all_resolved(items: list[client.V1Pod]) -> bool:
            state.observe(items, images)
            line = f"prepull {pull.name}: {len(state.done)}/{state.nodes * len(images)} (nodes x images) done"
            if line != shown[0]:
                shown[0] = line
                report(line)
            return len(state.done) >= state.nodes * len(images)

        waits.wait_for_set(client.CoreV1Api(api).list_namespaced_pod, namespace=namespace,
                           label_selector=f"winsuite.io/prepull={pull.name}",
                           what=f"{len(images)} image(s) on {state.nodes} node(s) to be pulled",
                           condition=all_resolved, timeout=max(1.0, timeout - (time.monotonic() - started)))
    except waits.WaitTimeout:
        pending = ", ".join(f"node {n}: image {r}" for n, r in sorted(state.pending)) or "pods not yet created"
        message = f"timed out after {timeout:.0f}s; still pulling: {pending}"
        failures = state.failures()
        return _row(pull, Outcome.FAILED, "; ".join([*failures, message]), time.monotonic() - started)
    failures = state.failures()
    outcome = Outcome.FAILED if failures else Outcome.PASSED
    return _row(pull, outcome, "; ".join(failures), time.monotonic() - started)


def _row(pull: PullSet, outcome: Outcome, message: str, duration: float) -> Attempt:
    first = message.split("; ", 1)[0]
    return Attempt(pull.row, "", outcome, duration=duration, message=first, details=message.replace("; ", "\n"),
                   properties=PREPULL_ROW)
