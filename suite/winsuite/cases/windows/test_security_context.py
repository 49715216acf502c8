"""Windows security context (security_context.go): runAsUserName, runAsNonRoot, Linux-only fields ignored."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import container_output
from winsuite.k8s import events
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import waits

security_context = Describe(Area("sig-windows"), Feature("Windows"), "SecurityContext")
TWIN = "[sig-windows] [Feature:Windows] SecurityContext "

RUN_AS_CONTAINER = "run-as-username-container"
PRINT_USER = ["cmd", "/S", "/C", "echo %username%"]
WRONG_PASSWORD = "The user name or password is incorrect."
COULD_NOT_START = ("ContainerCannotRun", "StartError")
# PodClient.WaitForErrorEventOrSuccess: the first of these events decides.
ERROR_EVENTS = ("Killing", "Failed", "SysctlForbidden")
NEEDS = [Capability.WINDOWS_KERNEL]
UPSTREAM = "test/e2e/windows/security_context.go:"
SECOND_CONTAINER = "run-as-username-new-container"
UNSUPPORTED_FIELDS_POD = "run-ignore-unsupported-fields"


def run_as_username_pod(target: Target, username: str | None) -> dict[str, Any]:
    """runAsUserNamePod: the NonRoot image prints %username%, with the name at pod and container level."""
    options = {"runAsUserName": username} if username else {}
    printer = manifests.container(RUN_AS_CONTAINER, target.image("nonroot"), command=PRINT_USER,
                                  securityContext={"windowsOptions": dict(options)})
    name = f"run-as-username-{uuid.uuid4()}"
    return target.place(manifests.pod(name, [printer], securityContext={"windowsOptions": dict(options)},
                                      restartPolicy="Never"))


def without_os_field(manifest: dict[str, Any]) -> dict[str, Any]:
    """Upstream's pods carry no spec.os: with spec.os.name windows the API server would reject the Linux-only
    fields these tests set (seed 002), and the point is that the kubelet ignores them."""
    manifest["spec"].pop("os", None)
    return manifest


def error_event_or_success(api: client.ApiClient, namespace: str, name: str) -> client.CoreV1Event | None:
    """WaitForErrorEventOrSuccess: the pod's first error event, or None once a container Started."""
    found: list[client.CoreV1Event | None] = []

    def check() -> str:
        seen = [e for e in events.list_events(api, namespace) if e.involved_object.name == name]
        for event in seen:
            if event.reason in (*ERROR_EVENTS, "Started"):
                found.append(event if event.reason != "Started" else None)
                return events.describe(event)
        raise AssertionError("; ".join(events.describe(e) for e in seen) or "no events")

    waits.poll(f"an error event or a started container of pod {name}", check,
               timeout=pods.POD_START_TIMEOUT)
    return found[0]


@windows_pods(lambda target: [run_as_username_pod(target, None), run_as_username_pod(target, "ContainerAdministrator")],
              upstream=UPSTREAM + "52-59")
@security_context.it("should be able create pods and run containers with a given username",
                     twin=TWIN + "should be able create pods and run containers with a given username",
                     category="Extend.ActiveDirectory", needs=NEEDS, images=["nonroot"])
def test_run_as_username(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    container_output.expect_output(api, namespace, run_as_username_pod(target, None), ["ContainerUser"])
    container_output.expect_output(api, namespace, run_as_username_pod(target, "ContainerAdministrator"),
                                   ["ContainerAdministrator"])


@windows_pods(lambda target: [run_as_username_pod(target, "FooLish")], upstream=UPSTREAM + "61-106")
@security_context.it("should not be able to create pods with unknown usernames at Pod level",
                     twin=TWIN + "should not be able to create pods with unknown usernames at Pod level",
                     category="Extend.ActiveDirectory", needs=NEEDS, images=["nonroot"])
def test_unknown_username_at_pod_level(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    invalid = pods.create(api, namespace, run_as_username_pod(target, "FooLish"))
    name = objects.name_of(invalid)

    # Runtimes that pass runAsUserName to the sandbox (containerd 1.6+) fail the sandbox, and the pod stays
    # Pending by design (kubernetes#104635); others fail the workload container.
    def failed() -> str:
        sandbox = [e for e in events.list_events(api, namespace)
                   if e.involved_object.name == name and e.reason == "FailedCreatePodSandBox"]
        if any(WRONG_PASSWORD in (e.message or "") for e in sandbox):
            return "FailedCreatePodSandBox: " + WRONG_PASSWORD
        pod = pods.get(api, namespace, name)
        reason = pods.terminated_reasons(pod).get(RUN_AS_CONTAINER)
        detail = pods.describe(pod)
        assert pods.phase_of(pod) == "Failed" and reason in COULD_NOT_START, detail
        return detail

    waits.poll(f"pod {name} to fail for its unknown user name", failed,
               timeout=pods.POD_START_TIMEOUT)


def unknown_container_user_pod(target: Target) -> dict[str, Any]:
    manifest = run_as_username_pod(target, "FooLish")
    manifest["spec"]["securityContext"]["windowsOptions"]["runAsUserName"] = "ContainerUser"
    return manifest


@windows_pods(lambda target: [unknown_container_user_pod(target)], upstream=UPSTREAM + "108-122")
@security_context.it("should not be able to create pods with unknown usernames at Container level",
                     twin=TWIN + "should not be able to create pods with unknown usernames at Container "
                                 "level",
                     category="Extend.ActiveDirectory", needs=NEEDS, images=["nonroot"])
def test_unknown_username_at_container_level(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    manifest = unknown_container_user_pod(target)
    name = manifest["metadata"]["name"]
    pods.create(api, namespace, manifest)
    failed = pods.wait_for_pod(api, namespace, name, state="Failed", timeout=pods.POD_START_TIMEOUT)
    assert not (failed.status and failed.status.reason), f"unexpected pod reason: {pods.describe(failed)}"
    reason = pods.terminated_reasons(failed).get(RUN_AS_CONTAINER)
    assert reason in COULD_NOT_START, (
        f"the container terminated reason was supposed to be 'ContainerCannotRun' or 'StartError', "
        f"not {reason!r}")


def override_pod(target: Target) -> dict[str, Any]:
    """The container's user name overrides the pod's; a second container keeps the pod's."""
    manifest = run_as_username_pod(target, "ContainerAdministrator")
    manifest["spec"]["containers"][0]["securityContext"]["windowsOptions"]["runAsUserName"] = "ContainerUser"
    manifest["spec"]["containers"].append(manifests.container(SECOND_CONTAINER, target.image("nonroot"),
                                                              command=PRINT_USER))
    return manifest


@windows_pods(lambda target: [override_pod(target)], upstream=UPSTREAM + "124-137")
@security_context.it("should override SecurityContext username if set",
                     twin=TWIN + "should override SecurityContext username if set",
                     category="Extend.ActiveDirectory", needs=NEEDS, images=["nonroot"])
def test_container_username_overrides_pod_username(api: client.ApiClient, namespace: str,
                                                   target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    container_output.expect_output(api, namespace, override_pod(target),
                                   {RUN_AS_CONTAINER: ["ContainerUser"], SECOND_CONTAINER: ["ContainerAdministrator"]})


def selinux_pod(target: Target) -> dict[str, Any]:
    selinux = {"level": "s0:c24,c9"}
    container_security = {"seLinuxOptions": selinux,
                          "windowsOptions": {"runAsUserName": "ContainerAdministrator"}}
    agnhost = manifests.container("windows-container", target.image("agnhost"),
                                  args=["test-webserver-with-selinux"], ports=[{"containerPort": 80}],
                                  securityContext=container_security)
    manifest = manifests.pod(f"pod-{uuid.uuid4()}", [agnhost], securityContext={"seLinuxOptions": selinux})
    return without_os_field(target.place(manifest))


@windows_pods(lambda target: [selinux_pod(target)], upstream=UPSTREAM + "139-161")
@security_context.it("should ignore Linux Specific SecurityContext if set",
                     twin=TWIN + "should ignore Linux Specific SecurityContext if set",
                     category="Extend.Worker", needs=NEEDS, images=["agnhost"])
def test_linux_security_context_is_ignored(api: client.ApiClient, namespace: str, target: Target) -> None:
    """It is enough that the pod comes up: before kubernetes#93475 SELinux options kept it from starting."""
    nodes.skip_unless_target_os_is_windows(target.os)
    manifest = pods.create(api, namespace, selinux_pod(target))
    pods.wait_for_pod(api, namespace, objects.name_of(manifest), state="Running", timeout=pods.POD_START_TIMEOUT)


@windows_pods(lambda target: [non_root_pod(target, "ContainerAdministrator")], upstream=UPSTREAM + "163-179")
@security_context.it("should not be able to create pods with containers running as ContainerAdministrator "
                     "when runAsNonRoot is true",
                     twin=TWIN + "should not be able to create pods with containers running as "
                                 "ContainerAdministrator when runAsNonRoot is true",
                     category="Extend.ActiveDirectory", needs=NEEDS, images=["nonroot"])
def test_run_as_non_root_rejects_container_administrator(api: client.ApiClient, namespace: str,
                                                         target: Target) -> None:
    assert_non_root_policy_rejects(api, namespace, target, "ContainerAdministrator")


@windows_pods(lambda target: [non_root_pod(target, "CONTAINERADMINISTRATOR")], upstream=UPSTREAM + "181-197")
@security_context.it("should not be able to create pods with containers running as CONTAINERADMINISTRATOR "
                     "when runAsNonRoot is true",
                     twin=TWIN + "should not be able to create pods with containers running as "
                                 "CONTAINERADMINISTRATOR when runAsNonRoot is true",
                     category="Extend.ActiveDirectory", needs=NEEDS, images=["nonroot"])
def test_run_as_non_root_rejects_upper_case_administrator(api: client.ApiClient, namespace: str,
                                                          target: Target) -> None:
    assert_non_root_policy_rejects(api, namespace, target, "CONTAINERADMINISTRATOR")


def non_root_pod(target: Target, username: str) -> dict[str, Any]:
    manifest = run_as_username_pod(target, username)
    manifest["spec"]["securityContext"]["runAsNonRoot"] = True
    return manifest


def assert_non_root_policy_rejects(api: client.ApiClient, namespace: str, target: Target,
                                   username: str) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    manifest = non_root_pod(target, username)
    pods.create(api, namespace, manifest)
    event = error_event_or_success(api, namespace, manifest["metadata"]["name"])
    assert event is not None, "the container started: expected an error event from the non-root policy"
    expected = (f"container's runAsUserName ({username}) which will be regarded as root identity and will "
                "break non-root policy")
    assert expected in (event.message or ""), f"event {events.describe(event)} does not say {expected!r}"


def unsupported_fields_pod(target: Target) -> dict[str, Any]:
    pause = manifests.container("test-container", target.image("pause"))
    security = {"runAsUser": 999, "runAsGroup": 999, "runAsNonRoot": True}
    manifest = manifests.pod(UNSUPPORTED_FIELDS_POD, [pause], securityContext=security, restartPolicy="Never")
    return without_os_field(target.place(manifest))


@windows_pods(lambda target: [unsupported_fields_pod(target)], upstream=UPSTREAM + "204-222")
@security_context.it("should be able to create pod and run containers",
                     twin=TWIN + "should be able to create pod and run containers",
                     category="Extend.Worker", needs=NEEDS)
def test_unsupported_fields_are_ignored(api: client.ApiClient, namespace: str, target: Target) -> None:
    """runAsUser and runAsGroup mean nothing on Windows; a pod that sets them still runs there."""
    nodes.skip_unless_target_os_is_windows(target.os)
    name = UNSUPPORTED_FIELDS_POD
    pods.create(api, namespace, unsupported_fields_pod(target))
    pods.wait_for_pod(api, namespace, name, state="Running", timeout=pods.POD_START_TIMEOUT)
    container_output.wait_for_logs(api, namespace, name, "test-container", what="any output (or none)",
                                   matches=lambda _: True, timeout=120)
