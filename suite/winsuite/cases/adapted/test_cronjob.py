"""CronJob (test/e2e/apps/cronjob.go): concurrency policies, suspension, history limits, active list, API."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.k8s import events
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits
from winsuite.k8s import workloads
from winsuite.k8s.waits import PermanentFailure
from winsuite.k8s.waits import wait_for_set
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import EventStream

cron_jobs = Describe(Area("sig-apps"), "CronJob")

CRONJOB_TIMEOUT = 300.0  # cronJobTimeout: a job is due at most a minute away; jobs may take longer to finish
EVERY_MINUTE = "*/1 * * * ?"
SLEEP = ["sleep", "300"]
SUCCEED = ["/bin/true"]
FAIL = ["/bin/false"]
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def new_test_cronjob(target: Target, name: str, policy: str, command: list[str] | None, *,
                     schedule: str = EVERY_MINUTE, success_limit: int | None = None,
                     failed_limit: int | None = None) -> dict[str, Any]:
    """newTestCronJob: a busybox job every minute, placed on the target OS."""
    container: dict[str, Any] = {"name": "c", "image": target.image("busybox"),
                                 "volumeMounts": [{"mountPath": "/data", "name": "data"}]}
    if command is not None:
        container["command"] = command
    spec: dict[str, Any] = {
        "schedule": schedule, "concurrencyPolicy": policy,
        "jobTemplate": {"spec": {"parallelism": 1, "completions": 1, "backoffLimit": 1, "template": {"spec": {
            "restartPolicy": "OnFailure", "volumes": [{"name": "data", "emptyDir": {}}],
            "containers": [container]}}}}}
    if success_limit is not None:
        spec["successfulJobsHistoryLimit"] = success_limit
    if failed_limit is not None:
        spec["failedJobsHistoryLimit"] = failed_limit
    return target.place({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": spec})


def create(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1CronJob:
    return retry.call(workloads.batch(api).create_namespaced_cron_job, namespace, manifest)


def delete(api: client.ApiClient, namespace: str, name: str) -> None:
    """deleteCronJob: background propagation also deletes its jobs and their pods."""
    workloads.batch(api).delete_namespaced_cron_job(name, namespace, propagation_policy="Background")


def finished(job: Any) -> bool:
    return any(c.type in ("Complete", "Failed") and c.status == "True" for c in job.status.conditions or [])


def split_jobs(api: client.ApiClient, namespace: str) -> tuple[list[Any], list[Any]]:
    """filterActiveJobs: (active, finished) jobs of the namespace."""
    listed = retry.call(workloads.batch(api).list_namespaced_job, namespace).items
    return [j for j in listed if not finished(j)], [j for j in listed if finished(j)]


def wait_for_cronjob(api: client.ApiClient, namespace: str, name: str, what: str,
                     condition: Callable[[Any], bool]) -> Any:
    return workloads.wait_for_object(workloads.batch(api).list_namespaced_cron_job, name=name, namespace=namespace,
                                     what=f"cronjob {name} {what}", condition=condition, timeout=CRONJOB_TIMEOUT)


def wait_for_active_jobs(api: client.ApiClient, namespace: str, name: str, count: int) -> None:
    wait_for_cronjob(api, namespace, name, f"to have at least {count} active job(s)",
                     lambda cj: len(cj.status.active or []) >= count)


def wait_for_jobs(api: client.ApiClient, namespace: str, what: str, condition: Callable[[list[Any]], bool]) -> None:
    """Watch the namespace's jobs until `condition(jobs)` holds."""
    wait_for_set(workloads.batch(api).list_namespaced_job, namespace=namespace, label_selector="", what=what,
                 condition=condition, timeout=CRONJOB_TIMEOUT,
                 describe=lambda items: repr([(j.metadata.name, j.status.conditions) for j in items]))


@cron_jobs.it("should schedule multiple jobs concurrently", Conformance,
              twin="[sig-apps] CronJob should schedule multiple jobs concurrently [Conformance]",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_allow_concurrent(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_cronjob(target, "concurrent", "Allow", SLEEP))
    wait_for_active_jobs(api, namespace, "concurrent", 2)
    active, _ = split_jobs(api, namespace)
    assert len(active) >= 2, f"expected at least two running jobs, got {[j.metadata.name for j in active]}"
    delete(api, namespace, "concurrent")


@cron_jobs.it("should not schedule jobs when suspended", Slow, Conformance,
              twin="[sig-apps] CronJob should not schedule jobs when suspended [Slow] [Conformance]",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_suspended(api: client.ApiClient, namespace: str, target: Target) -> None:
    manifest = new_test_cronjob(target, "suspended", "Allow", SLEEP)
    manifest["spec"]["suspend"] = True
    create(api, namespace, manifest)

    def nothing_active(items: list[Any]) -> None:
        assert not items[0].status.active, f"a suspended cronjob started jobs: {items[0].status.active}"

    waits.hold(workloads.batch(api).list_namespaced_cron_job, name="suspended", namespace=namespace,
               what="cronjob suspended to start no job", check=nothing_active, duration=CRONJOB_TIMEOUT)
    jobs = retry.call(workloads.batch(api).list_namespaced_job, namespace).items
    assert not jobs, f"a suspended cronjob created jobs: {[j.metadata.name for j in jobs]}"
    delete(api, namespace, "suspended")


@cron_jobs.it("should not schedule new jobs when ForbidConcurrent", Slow, Conformance,
              twin="[sig-apps] CronJob should not schedule new jobs when ForbidConcurrent [Slow] [Conformance]",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_forbid_concurrent(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_cronjob(target, "forbid", "Forbid", SLEEP))
    wait_for_active_jobs(api, namespace, "forbid", 1)
    cronjob = workloads.batch(api).read_namespaced_cron_job("forbid", namespace)
    assert len(cronjob.status.active or []) == 1, f"expected exactly one active job: {cronjob.status.active}"
    active, _ = split_jobs(api, namespace)
    assert len(active) == 1, f"expected exactly one running job, got {[j.metadata.name for j in active]}"
    wait_for_cronjob(api, namespace, "forbid", "to have fewer than two active jobs",
                     lambda cj: len(cj.status.active or []) < 2)
    delete(api, namespace, "forbid")


@cron_jobs.it("should replace jobs when ReplaceConcurrent", Conformance,
              twin="[sig-apps] CronJob should replace jobs when ReplaceConcurrent [Conformance]",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_replace_concurrent(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_cronjob(target, "replace", "Replace", SLEEP))
    wait_for_active_jobs(api, namespace, "replace", 1)
    cronjob = workloads.batch(api).read_namespaced_cron_job("replace", namespace)
    assert len(cronjob.status.active or []) == 1, f"expected exactly one active job: {cronjob.status.active}"
    active, _ = split_jobs(api, namespace)
    assert len(active) == 1, f"expected exactly one running job, got {[j.metadata.name for j in active]}"
    first = active[0].metadata.name

    def replaced(items: list[Any]) -> bool:
        alive = [j for j in items if j.metadata.deletion_timestamp is None]
        if len(alive) > 1:
            raise PermanentFailure(f"more than one job is running: {[j.metadata.name for j in alive]}")
        return len(alive) == 1 and alive[0].metadata.name != first

    wait_for_jobs(api, namespace, f"job {first} to be replaced by a new one", replaced)
    delete(api, namespace, "replace")


@cron_jobs.it("should be able to schedule after more than 100 missed schedule",
              twin="[sig-apps] CronJob should be able to schedule after more than 100 missed schedule",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_after_missed_schedules(api: client.ApiClient, namespace: str, target: Target) -> None:
    created_at = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=99)
    manifest = new_test_cronjob(target, "concurrent", "Forbid", SLEEP)
    manifest["metadata"]["creationTimestamp"] = created_at.isoformat()
    manifest["status"] = {"lastScheduleTime": (created_at + datetime.timedelta(days=1)).isoformat()}
    create(api, namespace, manifest)
    wait_for_active_jobs(api, namespace, "concurrent", 1)
    active, _ = split_jobs(api, namespace)
    assert active, "expected at least one running job"
    delete(api, namespace, "concurrent")


@cron_jobs.it("should not emit unexpected warnings",
              twin="[sig-apps] CronJob should not emit unexpected warnings",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_no_unexpected_warnings(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_cronjob(target, "concurrent", "Allow", None))
    wait_for_jobs(api, namespace, "at least two jobs", lambda items: len(items) >= 2)
    wait_for_jobs(api, namespace, "a finished job", lambda items: any(finished(j) for j in items))
    unexpected = [events.describe(e) for e in events.list_events(api, namespace)
                  if e.involved_object.kind == "CronJob" and e.involved_object.name == "concurrent"
                  and e.reason in ("MissingJob", "UnexpectedJob")]
    assert not unexpected, f"unexpected events: {unexpected}"
    delete(api, namespace, "concurrent")


@cron_jobs.it("should set the cronjob-scheduled-timestamp annotation on a job",
              twin="[sig-apps] CronJob should set the cronjob-scheduled-timestamp annotation on a job",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_scheduled_timestamp_annotation(api: client.ApiClient, namespace: str, target: Target) -> None:
    create(api, namespace, new_test_cronjob(target, "concurrent", "Allow", None))
    wait_for_jobs(api, namespace, "a job", bool)
    job = retry.call(workloads.batch(api).list_namespaced_job, namespace).items[0]
    stamp = (job.metadata.annotations or {}).get(SCHEDULED_AT)
    assert stamp is not None, f"job {job.metadata.name} lacks the {SCHEDULED_AT} annotation"
    datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))  # raises unless RFC 3339
    delete(api, namespace, "concurrent")


@cron_jobs.it("should remove from active list jobs that have been deleted",
              twin="[sig-apps] CronJob should remove from active list jobs that have been deleted",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_deleted_job_leaves_active_list(api: client.ApiClient, namespace: str, target: Target) -> None:
    batch = workloads.batch(api)
    create(api, namespace, new_test_cronjob(target, "forbid", "Forbid", SLEEP))
    wait_for_active_jobs(api, namespace, "forbid", 1)
    cronjob = batch.read_namespaced_cron_job("forbid", namespace)
    assert len(cronjob.status.active or []) == 1, f"expected exactly one active job: {cronjob.status.active}"
    job = cronjob.status.active[0].name
    batch.delete_namespaced_job(job, namespace, propagation_policy="Background")
    workloads.wait_for_gone(batch.list_namespaced_job, name=job, namespace=namespace, what=f"job {job}",
                            timeout=CRONJOB_TIMEOUT)
    wait_for_cronjob(api, namespace, "forbid", f"to drop job {job} from its active list",
                     lambda cj: all(ref.name != job for ref in cj.status.active or []))
    events.wait_for_event(api, namespace, involved="forbid", reason="MissingJob", timeout=30)
    delete(api, namespace, "forbid")


def ensure_history_limits(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> None:
    """ensureHistoryLimits: one finished job is kept; the next one to finish replaces it."""
    create(api, namespace, manifest)
    wait_for_jobs(api, namespace, "a finished job", lambda items: any(finished(j) for j in items))
    _, done = split_jobs(api, namespace)
    assert len(done) == 1, f"expected one finished job, got {[j.metadata.name for j in done]}"
    first = done[0]
    wait_for_jobs(api, namespace, f"finished job {first.metadata.name} to be deleted",
                  lambda items: all(j.metadata.name != first.metadata.name for j in items if finished(j)))
    wait_for_set(pods.core(api).list_namespaced_pod, namespace=namespace,
                 label_selector=f"controller-uid={first.metadata.uid}",
                 what=f"the pods of job {first.metadata.name} to be gone", condition=lambda items: not items,
                 timeout=CRONJOB_TIMEOUT)
    _, done = split_jobs(api, namespace)
    assert len(done) == 1, f"expected one finished job, got {[j.metadata.name for j in done]}"
    delete(api, namespace, manifest["metadata"]["name"])


@cron_jobs.it("should delete successful finished jobs with limit of one successful job",
              twin="[sig-apps] CronJob should delete successful finished jobs with limit of one successful job",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_successful_jobs_history_limit(api: client.ApiClient, namespace: str, target: Target) -> None:
    ensure_history_limits(api, namespace, new_test_cronjob(target, "successful-jobs-history-limit", "Allow",
                                                           SUCCEED, success_limit=1, failed_limit=0))


@cron_jobs.it("should delete failed finished jobs with limit of one job",
              twin="[sig-apps] CronJob should delete failed finished jobs with limit of one job",
              needs=[Capability.RUNS_CONTAINERS], images=["busybox"], category="Core.Concurrent")
def test_failed_jobs_history_limit(api: client.ApiClient, namespace: str, target: Target) -> None:
    ensure_history_limits(api, namespace, new_test_cronjob(target, "failed-jobs-history-limit", "Allow",
                                                           FAIL, success_limit=0, failed_limit=1))


@cron_jobs.it("should support timezone",
              twin="[sig-apps] CronJob should support timezone",
              images=["busybox"], category="Core.Concurrent")
def test_invalid_timezone_rejected(api: client.ApiClient, namespace: str, target: Target) -> None:
    manifest = new_test_cronjob(target, "cronjob-with-timezone", "Allow", FAIL)
    manifest["spec"]["timeZone"] = "bad-time-zone"
    try:
        create(api, namespace, manifest)
    except client.exceptions.ApiException as err:
        assert err.status == 422, f"expected the API server to reject the time zone as invalid: {err}"
    else:
        raise AssertionError("a CronJob with an invalid time zone was created")


@cron_jobs.it("should support CronJob API operations", Conformance,
              twin="[sig-apps] CronJob should support CronJob API operations [Conformance]",
              images=["busybox"], category="Core.Concurrent")
def test_api_operations(api: client.ApiClient, namespace: str, target: Target) -> None:
    batch, label = workloads.batch(api), f"special-label={namespace}"
    template = new_test_cronjob(target, "test-api", "Allow", SUCCEED, schedule="* */1 * * ?", success_limit=1,
                                failed_limit=0)
    template["metadata"]["labels"] = {"special-label": namespace}

    created = create(api, namespace, template)
    assert int(created.metadata.resource_version) > 0, "the created object has no valid resource version"
    assert batch.read_namespaced_cron_job(created.metadata.name, namespace).metadata.uid == created.metadata.uid
    listed = retry.call(batch.list_namespaced_cron_job, namespace, label_selector=label)
    assert len(listed.items) == 1, "filtered list should have 1 item"
    cluster_listed = retry.call(batch.list_cron_job_for_all_namespaces, label_selector=label)
    assert len(cluster_listed.items) == 1, "filtered cluster-wide list should have 1 item"

    with EventStream(batch.list_namespaced_cron_job, namespace=namespace, label_selector=label,
                     resource_version=listed.metadata.resource_version) as watched:
        patched = batch.patch_namespaced_cron_job(created.metadata.name, namespace,
                                                  {"metadata": {"annotations": {"patched": "true"}}},
                                                  _content_type=MERGE_PATCH)
        assert (patched.metadata.annotations or {}).get("patched") == "true", "the patch lost its annotation"
        assert int(patched.metadata.resource_version) > int(created.metadata.resource_version), \
            "the patched object should have a larger resource version"

        def annotate(obj: Any) -> None:
            obj.metadata.annotations = {**(obj.metadata.annotations or {}), "updated": "true"}

        updated = workloads.update_with_retries(
            lambda: batch.read_namespaced_cron_job(created.metadata.name, namespace),
            lambda obj: batch.replace_namespaced_cron_job(created.metadata.name, namespace, obj), annotate)
        assert (updated.metadata.annotations or {}).get("updated") == "true", "the update lost its annotation"

        def modified_with_patch(kind: str, cj: Any) -> bool:
            assert kind == "MODIFIED", f"unexpected {kind} event for cronjob {cj.metadata.name}"
            return (cj.metadata.annotations or {}).get("patched") == "true"

        watched.until("watch events with the patched annotation", modified_with_patch)

    check_status_subresource(api, namespace, created)
    check_deletion(api, namespace, template, label)


def check_status_subresource(api: client.ApiClient, namespace: str, created: Any) -> None:
    """Patch, update and read /status: lastScheduleTime and the annotation are applied."""
    batch, name = workloads.batch(api), created.metadata.name
    first = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    patched = batch.patch_namespaced_cron_job_status(
        name, namespace, {"metadata": {"annotations": {"patchedstatus": "true"}},
                          "status": {"lastScheduleTime": first.isoformat()}}, _content_type=MERGE_PATCH)
    assert patched.status.last_schedule_time == first, f"patched lastScheduleTime {patched.status}"
    assert (patched.metadata.annotations or {}).get("patchedstatus") == "true", "the patch lost its annotation"

    second = first + datetime.timedelta(seconds=1)

    def reschedule(obj: Any) -> None:
        obj.status.last_schedule_time = second

    updated = workloads.update_with_retries(lambda: batch.read_namespaced_cron_job(name, namespace),
                                            lambda obj: batch.replace_namespaced_cron_job_status(name, namespace,
                                                                                                 obj), reschedule)
    assert updated.status.last_schedule_time == second, f"updated lastScheduleTime {updated.status}"
    assert batch.read_namespaced_cron_job_status(name, namespace).metadata.uid == created.metadata.uid


def check_deletion(api: client.ApiClient, namespace: str, template: dict[str, Any], label: str) -> None:
    """delete and deletecollection: gone, or held only by finalizers while being deleted."""
    batch = workloads.batch(api)

    def being_deleted(cj: Any, step: str) -> None:
        assert cj.metadata.deletion_timestamp is not None and cj.metadata.finalizers, \
            f"expected a deletion timestamp and finalizers after {step}: {cj.metadata}"

    template["metadata"]["name"] = "for-removal"
    created = create(api, namespace, template)
    batch.delete_namespaced_cron_job(created.metadata.name, namespace)
    try:
        being_deleted(batch.read_namespaced_cron_job(created.metadata.name, namespace), "deleting cronjob")
    except client.exceptions.ApiException as err:
        assert err.status == 404, f"expected 404, got {err}"
    batch.delete_collection_namespaced_cron_job(namespace, label_selector=label)
    left = retry.call(batch.list_namespaced_cron_job, namespace, label_selector=label).items
    assert len(left) <= 2, f"filtered list length should be <= 2, got {[c.metadata.name for c in left]}"
    for cronjob in left:
        being_deleted(cronjob, "deleting the cronjob collection")
