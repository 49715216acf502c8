"""EmptyDir volumes on the node's default medium (test/e2e/common/storage/empty_dir.go): modes, and a volume
shared by the containers of a pod."""

from __future__ import annotations

import stat

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.k8s import container_output
from winsuite.k8s import container_status
from winsuite.k8s import manifests
from winsuite.k8s import pods

emptydir = Describe(Area("sig-storage"), "EmptyDir volumes")

VOLUME_PATH, VOLUME = "/test-volume", "test-volume"
SHARED_PATH = "/usr/share/volumeshare"
NON_ROOT_UID = 1001  # empty_dir.go's nonRootUID
MODES = {"root,0644": (0, 0o644), "root,0666": (0, 0o666), "root,0777": (0, 0o777),
         "non-root,0644": (NON_ROOT_UID, 0o644), "non-root,0666": (NON_ROOT_UID, 0o666),
         "non-root,0777": (NON_ROOT_UID, 0o777)}
NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]
TWIN = "[sig-storage] EmptyDir volumes should support ({},default) [LinuxOnly] [NodeConformance] " \
       "[Conformance]"


def mounttest_pod(target: Target, uid: int, *args: str) -> manifests.Manifest:
    """testPodWithVolume: agnhost mounttest over an emptyDir on the default medium, as `uid` (0: the image's
    user). Linux-only: it sets SELinux options and a numeric user."""
    mounttest = manifests.container("test-container", target.image("agnhost"), args=["mounttest", *args],
                                    volumeMounts=[manifests.volume_mount(VOLUME, VOLUME_PATH)])
    security: dict[str, object] = {"seLinuxOptions": {"level": "s0"}}
    if uid:
        security["runAsUser"] = uid
    pod = manifests.pod("pod-emptydir", [mounttest], volumes=[{"name": VOLUME, "emptyDir": {}}],
                        securityContext=security, restartPolicy="Never")
    return target.place(pod)


def perms(mode: int) -> str:
    """How Go prints a file mode's permission bits (-rw-r--r--)."""
    return stat.filemode(stat.S_IFREG | mode)


@emptydir.it("volume on default medium should have the correct mode", LinuxOnly, NodeConformance, Conformance,
             twin="[sig-storage] EmptyDir volumes volume on default medium should have the correct mode "
                  "[LinuxOnly] [NodeConformance] [Conformance]",
             needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_default_medium_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = mounttest_pod(target, 0, f"--fs_type={VOLUME_PATH}", f"--file_perm={VOLUME_PATH}")
    container_output.expect_output(api, namespace, pod, [f'perms of file "{VOLUME_PATH}": -rwxrwxrwx'])


@emptydir.it_each("should support ({entry},default)", LinuxOnly, NodeConformance, Conformance,
                  argname="user_and_mode", entries=MODES, needs=NEEDS, images=["agnhost"],
                  category="Core.Storage", twins={entry: TWIN.format(entry) for entry in MODES})
def test_new_file_mode(api: client.ApiClient, namespace: str, target: Target,
                       user_and_mode: tuple[int, int]) -> None:
    """doTest0644 / doTest0666 / doTest0777 on the default medium."""
    uid, mode = user_and_mode
    path = f"{VOLUME_PATH}/test-file"
    pod = mounttest_pod(target, uid, f"--fs_type={VOLUME_PATH}", f"--new_file_{mode:04o}={path}",
                        f"--file_perm={path}")
    container_output.expect_output(api, namespace, pod, [f'perms of file "{path}": {perms(mode)}',
                                                         f'content of file "{path}": mount-tester new file'])


@emptydir.it("pod should support shared volumes between containers", Conformance,
             twin="[sig-storage] EmptyDir volumes pod should support shared volumes between containers "
                  "[Conformance]",
             needs=[Capability.RUNS_CONTAINERS, Capability.EXEC], images=["busybox"], category="Core.Storage")
def test_shared_volume(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, main, sub = "pod-sharedvolume", "busybox-main-container", "busybox-sub-container"
    message = "Hello from the busy-box sub-container"
    reader = manifests.container(main, target.image("busybox"), command=["/bin/sh"],
                                 args=["-c", "trap exit TERM; while true; do sleep 1; done"],
                                 volumeMounts=[manifests.volume_mount("shared-data", SHARED_PATH)])
    writer = manifests.container(sub, target.image("busybox"), command=["/bin/sh"],
                                 args=["-c", f"echo {message} > /pod-data/shareddata.txt"],
                                 volumeMounts=[manifests.volume_mount("shared-data", "/pod-data")])
    pod = manifests.pod(name, [reader, writer], volumes=[{"name": "shared-data", "emptyDir": {}}],
                        terminationGracePeriodSeconds=0, restartPolicy="Never")
    pods.start(api, namespace, target.place(pod))
    # Upstream reads as soon as the pod runs; waiting for the writer to finish first removes that race.
    pods.wait_until(api, namespace, name, f"container {sub} to have written the file",
                    lambda p: container_status.has_terminated(p, sub),
                    timeout=pods.POD_START_TIMEOUT)
    result = pods.exec_(api, namespace, name, ["/bin/sh", "-c", f"cat {SHARED_PATH}/shareddata.txt"],
                        container=main).check()
    assert result.stdout.strip() == message, f"expected {message!r} in the shared volume: {result.stdout!r}"
