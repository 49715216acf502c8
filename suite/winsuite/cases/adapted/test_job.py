"""Job (test/e2e/apps/job.go): completions, restarts, indexes, deadlines, backoff, deletion, adoption, status."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import workloads
from winsuite.k8s.waits import PermanentFailure
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

jobs = Describe(Area("sig-apps"), "Job")

JOB_LABEL = "job"  # e2ejob.JobSelectorKey
JOB_TIMEOUT = 240.0  # e2ejob.JobTimeout is 15m; the suite's per-test budget is shorter
PARALLELISM, COMPLETIONS, BACKOFF_LIMIT = 2, 4, 6  # the values (and default backoff) most tests use
FAIL_ONCE = """
if [[ -r /data/foo ]]
then
    exit 0
else
    touch /data/foo
    exit 1
fi
"""
COMMANDS = {"fail": ["/bin/sh", "-c", "exit 1"], "succeed": ["/bin/sh", "-c", "exit 0"],
            "failOnce": ["/bin/sh", "-c", FAIL_ONCE]}


def new_test_job(target: Target, behavior: str, name: str, restart_policy: str, *, parallelism: int = PARALLELISM,
                 completions: int = COMPLETIONS, backoff_limit: int = BACKOFF_LIMIT,
                 active_deadline_seconds: int | None = None) -> dict[str, Any]:
    """e2ejob.NewTestJob: busybox (or pause, for notTerminate) with an emptyDir at /data, placed on the target OS."""
    image = target.image("pause" if behavior == "notTerminate" else "busybox")
    container = manifests.container("c", image, command=COMMANDS.get(behavior, []), securityContext={},
                                    volumeMounts=[{"mountPath": "/data", "name": "data"}])
    spec: dict[str, Any] = {"parallelism": parallelism, "completions": completions, "backoffLimit": backoff_limit,
                            "manualSelector": False,
                            "template": {"metadata": {"labels": {JOB_LABEL: name}},
                                         "spec": {"restartPolicy": restart_policy, "containers": [container],
                                                  "volumes": [{"name": "data", "emptyDir": {}}]}}}
    if active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    return target.place({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec})


def create(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1Job:
    return retry.call(workloads.batch(api).create_namespaced_job, namespace, manifest)


def has_condition(job: Any, kind: str, reason: str | None = None) -> bool:
    return any(c.type == kind and c.status == "True" and (reason is None or c.reason == reason)
               for c in job.status.conditions or [])


def wait_for_job_condition(api: client.ApiClient, namespace: str, name: str, kind: str,
                           reason: str | None = None) -> client.V1Job:
    return workloads.wait_for_object(workloads.batch(api).list_namespaced_job, name=name, namespace=namespace,
                                     what=f"job {name} to have condition {kind} ({reason})",
                                     condition=lambda job: has_condition(job, kind, reason), timeout=JOB_TIMEOUT)


def wait_for_job_complete(api: client.ApiClient, namespace: str, name: str, completions: int) -> None:
    """e2ejob.WaitForJobComplete: `completions` pods succeeded, then Complete with CompletionsReached."""

    def succeeded(job: Any) -> bool:
        if has_condition(job, "Failed"):
            raise PermanentFailure(f"job {name} failed while waiting for its completion: {job.status}")
        return bool(job.status.succeeded == completions)

    workloads.wait_for_object(workloads.batch(api).list_namespaced_job, name=name, namespace=namespace,
                              what=f"job {name} to have {completions} successful pods", condition=succeeded,
                              timeout=JOB_TIMEOUT)
    wait_for_job_condition(api, namespace, name, "Complete", "CompletionsReached")


def job_pods(api: client.ApiClient, namespace: str, name: str) -> list[client.V1Pod]:
    return workloads.list_pods(api, namespace, {JOB_LABEL: name})


def wait_for_job_pods_running(api: client.ApiClient, namespace: str, name: str, count: int) -> None:
    workloads.wait_for_pods(api, namespace, {JOB_LABEL: name}, count=count, timeout=JOB_TIMEOUT, exact=False)


def delete_and_wait_for_gc(api: client.ApiClient, namespace: str, name: str) -> None:
    """e2eresource.DeleteResourceAndWaitForGC: the job goes, and the garbage collector takes its pods."""
    batch = workloads.batch(api)
    batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
    workloads.wait_for_gone(batch.list_namespaced_job, name=name, namespace=namespace, what=f"job {name}",
                            timeout=JOB_TIMEOUT)
    pods.wait_for_no_pods(api, namespace, label_selector=f"{JOB_LABEL}={name}",
                          what=f"the pods of job {name} to be gone", timeout=JOB_TIMEOUT)


def assert_final_state(api: client.ApiClient, namespace: str, name: str) -> None:
    """No pod of the finished job is active, ready or terminating any more."""
    status = workloads.batch(api).read_namespaced_job(name, namespace).status
    assert (status.active or 0, status.ready, status.terminating) == (0, 0, 0), f"final job status: {status}"


@jobs.it("should run a job to completion when tasks succeed",
         twin="[sig-apps] Job should run a job to completion when tasks succeed",
         needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_tasks_succeed(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_job(target, "succeed", "all-succeed", "Never"))
    wait_for_job_complete(api, namespace, "all-succeed", COMPLETIONS)
    succeeded = [p for p in job_pods(api, namespace, "all-succeed") if p.status.phase == "Succeeded"]
    assert len(succeeded) == COMPLETIONS, f"expected {COMPLETIONS} successful job pods, got {len(succeeded)}"


@jobs.it("should create pods for an Indexed job with completion indexes and specified hostname", Conformance,
         twin="[sig-apps] Job should create pods for an Indexed job with completion indexes and specified hostname "
              "[Conformance]",
         needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_indexed_job(api: client.ApiClient, namespace: str, target: Target) -> None:
    manifest = new_test_job(target, "succeed", "indexed-job", "Never")
    manifest["spec"]["completionMode"] = "Indexed"
    create(api, namespace, manifest)
    wait_for_job_complete(api, namespace, "indexed-job", COMPLETIONS)
    indexes = set()
    for pod in job_pods(api, namespace, "indexed-job"):
        if pod.status.phase == "Succeeded" and pod.metadata.annotations:
            index = int(pod.metadata.annotations["batch.kubernetes.io/job-completion-index"])
            indexes.add(index)
            assert pod.spec.hostname == f"indexed-job-{index}", f"completed pod has hostname {pod.spec.hostname}"
    assert sorted(indexes) == [0, 1, 2, 3], f"expected completed indexes [0, 1, 2, 3], got {sorted(indexes)}"


@jobs.it("should remove pods when job is deleted",
         twin="[sig-apps] Job should remove pods when job is deleted",
         needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Concurrent")
def test_remove_pods_when_deleted(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_job(target, "notTerminate", "all-pods-removed", "Never"))
    wait_for_job_pods_running(api, namespace, "all-pods-removed", PARALLELISM)
    delete_and_wait_for_gc(api, namespace, "all-pods-removed")


@jobs.it("should run a job to completion when tasks sometimes fail and are locally restarted", Conformance,
         twin="[sig-apps] Job should run a job to completion when tasks sometimes fail and are locally restarted "
              "[Conformance]",
         needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_locally_restarted(api: client.ApiClient, namespace: str, target: Target) -> None:
    # One failure then a success in the same pod: the emptyDir keeps the marker across the restart.
    create(api, namespace, new_test_job(target, "failOnce", "fail-once-local", "OnFailure"))
    wait_for_job_complete(api, namespace, "fail-once-local", COMPLETIONS)


@jobs.it("should fail when exceeds active deadline",
         twin="[sig-apps] Job should fail when exceeds active deadline",
         needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Concurrent")
def test_active_deadline(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "exceed-active-deadline"
    create(api, namespace, new_test_job(target, "notTerminate", name, "Never", active_deadline_seconds=1))
    wait_for_job_condition(api, namespace, name, "FailureTarget", "DeadlineExceeded")
    wait_for_job_condition(api, namespace, name, "Failed", "DeadlineExceeded")
    assert_final_state(api, namespace, name)


@jobs.it("should delete a job", Conformance,
         twin="[sig-apps] Job should delete a job [Conformance]",
         needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Concurrent")
def test_delete_job(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_job(target, "notTerminate", "foo", "Never"))
    wait_for_job_pods_running(api, namespace, "foo", PARALLELISM)
    delete_and_wait_for_gc(api, namespace, "foo")
    try:
        workloads.batch(api).read_namespaced_job("foo", namespace)
    except client.exceptions.ApiException as err:
        assert err.status == 404, f"reading the deleted job failed otherwise: {err}"
    else:
        raise AssertionError(f"job foo was not deleted in namespace {namespace}")


@jobs.it("should adopt matching orphans and release non-matching pods", Conformance,
         twin="[sig-apps] Job should adopt matching orphans and release non-matching pods [Conformance]",
         needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Concurrent")
def test_adopt_and_release(api: client.ApiClient, namespace: str, target: Target) -> None:
    job = create(api, namespace, new_test_job(target, "notTerminate", "adopt-release", "Never"))
    wait_for_job_pods_running(api, namespace, "adopt-release", PARALLELISM)
    running = job_pods(api, namespace, "adopt-release")
    assert len(running) == PARALLELISM, f"expected {PARALLELISM} job pods, got {len(running)}"
    core, name = pods.core(api), running[0].metadata.name

    def orphan(pod: Any) -> None:
        pod.metadata.owner_references = None

    workloads.update_with_retries(lambda: core.read_namespaced_pod(name, namespace),
                                  lambda pod: core.replace_namespaced_pod(name, namespace, pod), orphan)

    def adopted(pod: Any) -> bool:
        ref = next((r for r in pod.metadata.owner_references or [] if r.controller), None)
        if ref is not None and (ref.kind, ref.name, ref.uid) != ("Job", "adopt-release", job.metadata.uid):
            raise PermanentFailure(f"pod {name} has the wrong controller: {ref}")
        return ref is not None

    pods.wait_until(api, namespace, name, "to be adopted by its job again", adopted, timeout=JOB_TIMEOUT)
    workloads.relabel_and_wait_released(api, namespace, name, owner_uid=job.metadata.uid, labels={},
                                        timeout=JOB_TIMEOUT)


@jobs.it("should fail to exceed backoffLimit",
         twin="[sig-apps] Job should fail to exceed backoffLimit",
         needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_backoff_limit(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_job(target, "fail", "backofflimit", "Never", parallelism=1, completions=1,
                                        backoff_limit=1))
    wait_for_job_condition(api, namespace, "backofflimit", "FailureTarget", "BackoffLimitExceeded")
    wait_for_job_condition(api, namespace, "backofflimit", "Failed", "BackoffLimitExceeded")
    failed = job_pods(api, namespace, "backofflimit")
    assert len(failed) == 2, f"expected 2 pods (backoffLimit + 1), got {[pods.describe(p) for p in failed]}"
    assert all(p.status.phase == "Failed" for p in failed), f"{[pods.describe(p) for p in failed]}"
    assert_final_state(api, namespace, "backofflimit")


def now_rfc3339() -> datetime.datetime:
    """The current time at the precision the API keeps (whole seconds)."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def custom_condition(job: Any) -> Any:
    found = next((c for c in job.status.conditions or [] if c.type == "CustomConditionType"), None)
    assert found is not None, f"job {job.metadata.name} does not have the condition CustomConditionType"
    return found


@jobs.it("should apply changes to a job status", Conformance,
         twin="[sig-apps] Job should apply changes to a job status [Conformance]",
         needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Concurrent")
def test_status_changes(api: client.ApiClient, namespace: str, target: Target) -> None:
    batch, name = workloads.batch(api), "suspend-false-to-true"
    job = create(api, namespace, new_test_job(target, "notTerminate", name, "Never"))
    wait_for_job_pods_running(api, namespace, name, PARALLELISM)

    first = now_rfc3339()
    condition = {"type": "CustomConditionType", "status": "True", "lastTransitionTime": first.isoformat()}
    patched = batch.patch_namespaced_job_status(
        name, namespace, {"metadata": {"annotations": {"patchedstatus": "true"}},
                          "status": {"conditions": [condition]}}, _content_type=MERGE_PATCH)
    assert custom_condition(patched).last_transition_time == first, "the patched condition has another time"
    assert (patched.metadata.annotations or {}).get("patchedstatus") == "true", "the patch lost its annotation"

    second = now_rfc3339() + datetime.timedelta(seconds=1)

    def move_condition(obj: Any) -> None:
        custom_condition(obj).last_transition_time = second

    updated = workloads.update_with_retries(lambda: batch.read_namespaced_job(name, namespace),
                                            lambda obj: batch.replace_namespaced_job_status(name, namespace, obj),
                                            move_condition)
    assert custom_condition(updated).last_transition_time == second, "the updated condition has another time"
    status_uid = batch.read_namespaced_job_status(name, namespace).metadata.uid
    assert status_uid == job.metadata.uid, f"job uid {job.metadata.uid} does not match /status uid {status_uid}"


@jobs.it("should manage the lifecycle of a job", Conformance,
         twin="[sig-apps] Job should manage the lifecycle of a job [Conformance]",
         needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_lifecycle(api: client.ApiClient, namespace: str, target: Target) -> None:
    batch, name = workloads.batch(api), f"e2e-{uuid.uuid4().hex[:5]}"
    label = {"e2e-job-label": name}
    selector = workloads.selector(label)
    version = workloads.listed_version(batch.list_namespaced_job, namespace=namespace, label_selector=selector)

    manifest = new_test_job(target, "succeed", name, "Never")
    manifest["metadata"]["labels"] = label
    manifest["spec"]["suspend"] = True
    job = create(api, namespace, manifest)
    patched = batch.patch_namespaced_job(name, namespace, {"metadata": {"labels": {name: "patched"}}},
                                         _content_type=STRATEGIC_MERGE_PATCH)
    assert int(patched.metadata.resource_version) > int(job.metadata.resource_version), \
        "the patched object should have a larger resource version"
    watch_job_event(api, namespace, name, version, "MODIFIED", lambda j: (j.metadata.labels or {}).get(name),
                    "patched")
    assert (patched.metadata.labels or {}).get(name) == "patched", f"job labels: {patched.metadata.labels}"

    def resume(obj: Any) -> None:
        obj.spec.suspend = False
        obj.metadata.annotations = {**(obj.metadata.annotations or {}), "updated": "true"}

    updated = workloads.update_with_retries(lambda: batch.read_namespaced_job(name, namespace),
                                            lambda obj: batch.replace_namespaced_job(name, namespace, obj), resume)
    watch_job_event(api, namespace, name, patched.metadata.resource_version, "MODIFIED",
                    lambda j: (j.metadata.annotations or {}).get("updated"), "true")
    assert (updated.metadata.annotations or {}).get("updated") == "true", "the update lost its annotation"

    listed = retry.call(batch.list_job_for_all_namespaces, label_selector=selector).items
    assert len(listed) == 1, f"failed to find job {name}: {[j.metadata.name for j in listed]}"
    wait_for_job_complete(api, namespace, name, COMPLETIONS)

    batch.delete_collection_namespaced_job(namespace, label_selector=selector, propagation_policy="Background")
    watch_job_event(api, namespace, name, updated.metadata.resource_version, "DELETED",
                    lambda j: (j.metadata.labels or {}).get("e2e-job-label"), name)
    listed = retry.call(batch.list_job_for_all_namespaces, label_selector=selector).items
    assert not listed, f"found job {[j.metadata.name for j in listed]} after deleting the collection"


def watch_job_event(api: client.ApiClient, namespace: str, name: str, version: str, kind: str,
                    key: Any, value: str) -> None:
    """waitForJobEvent: a `kind` event for the job whose label or annotation `key` has `value`."""
    batch = workloads.batch(api)
    with EventStream(batch.list_namespaced_job, namespace=namespace, label_selector=f"e2e-job-label={name}",
                     resource_version=version) as events:
        events.until(f"a {kind} event of job {name} with {value!r}",
                     lambda event_kind, job: event_kind == kind and job.metadata.name == name
                     and key(job) == value)
