"""PersistentVolumes (test/e2e/storage/persistent_volumes.go): PV/PVC lifecycle and status, a mounted volume.

A pre-provisioned volume (no upstream twin tests one portably) keeps a pod's data for the next pod.

SMB, iSCSI, AzureFile and AzureDisk volumes (KEP-116 "What works today") need a cloud or a storage server
outside the cluster; none of them is testable here, so the portable part is covered: pre-provisioned
PersistentVolumes bound to claims, and one mounted by pods of the target OS.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import no_pods
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import container_output
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import workloads
from winsuite.k8s.not_found import ignore_not_found
from winsuite.k8s.waits import wait_for_set
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH

persistent_volumes = Describe(Area("sig-storage"), "PersistentVolumes")
csi_conformance = persistent_volumes.describe("CSI Conformance")

POOL_LABEL = "e2e-pv-pool"  # e2epv.VolumeSelectorKey
DELETE_TIMEOUT = 30.0
BIND_TIMEOUT = 120.0


def make_pv(namespace: str, source: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """e2epv.MakePersistentVolume: 2Gi, ReadWriteOnce, Retain, in the test's own storage class and pool."""
    return {"metadata": {"generateName": f"{namespace}-", "labels": {POOL_LABEL: namespace},
                         "annotations": {"pv.beta.kubernetes.io/gid": "777"}},
            "spec": {"persistentVolumeReclaimPolicy": "Retain", "capacity": {"storage": "2Gi"},
                     "accessModes": ["ReadWriteOnce"], "storageClassName": namespace, **source, **spec}}


def make_pvc(namespace: str, **spec: Any) -> dict[str, Any]:
    """e2epv.MakePersistentVolumeClaim: 2Gi, ReadWriteOnce, in the test's own storage class."""
    return {"metadata": {"generateName": "pvc-"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}},
                     "storageClassName": namespace, **spec}}


@contextmanager
def pv_and_pvc(api: client.ApiClient, namespace: str, pv: dict[str, Any], pvc: dict[str, Any]) -> Iterator[None]:
    """CreatePVsPVCs (one pair); PVPVCMapCleanup afterwards, including the cluster-scoped volume."""
    core = pods.core(api)
    created = core.create_persistent_volume(pv)
    try:
        core.create_namespaced_persistent_volume_claim(namespace, pvc)
        yield
    finally:
        for claim in retry.call(core.list_namespaced_persistent_volume_claim, namespace).items:
            with ignore_not_found():
                core.delete_namespaced_persistent_volume_claim(claim.metadata.name, namespace)
        for volume in retry.call(core.list_persistent_volume, label_selector=f"{POOL_LABEL}={namespace}").items:
            with ignore_not_found():
                core.delete_persistent_volume(volume.metadata.name)
        workloads.wait_for_gone(core.list_persistent_volume, name=created.metadata.name, namespace=None,
                                what=f"persistent volume {created.metadata.name}", timeout=BIND_TIMEOUT)


def wait_until_none(list_fn: Callable[..., Any], namespace: str | None, selector: str, what: str) -> None:
    """Eventually (30s) the list is empty."""
    wait_for_set(list_fn, namespace=namespace, label_selector=selector, what=f"{what} to be deleted",
                 condition=lambda items: not items, timeout=DELETE_TIMEOUT,
                 describe=lambda items: f"still listed: {[o.metadata.name for o in items]}")


def pool_objects(core: client.CoreV1Api, namespace: str, pool: str) -> tuple[list[Any], list[Any]]:
    """The PVs of this test's pool and the PVCs of its namespace, as the API lists them."""
    volumes = retry.call(core.list_persistent_volume, label_selector=pool).items
    return volumes, retry.call(core.list_namespaced_persistent_volume_claim, namespace).items


def csi_pv(namespace: str, handle: str) -> dict[str, Any]:
    """A pre-provisioned CSI volume of a driver that does not exist: only the API objects are exercised."""
    return make_pv(namespace, {"csi": {"driver": f"e2e-driver-{uuid.uuid4()}", "volumeHandle": handle}})


@no_pods("creates PersistentVolumes and claims only")
@csi_conformance.it("should run through the lifecycle of a PV and a PVC", Conformance,
                    twin="[sig-storage] PersistentVolumes CSI Conformance should run through the lifecycle of a PV "
                         "and a PVC [Conformance]", category="Core.Storage")
def test_pv_pvc_lifecycle(api: client.ApiClient, namespace: str) -> None:
    core, pool = pods.core(api), f"{POOL_LABEL}={namespace}"
    with pv_and_pvc(api, namespace, csi_pv(namespace, "e2e-conformance"), make_pvc(namespace)):
        volumes, claims = pool_objects(core, namespace, pool)
        assert len(volumes) == 1 and len(claims) == 1, f"{len(volumes)} PVs and {len(claims)} PVCs, want 1 and 1"
        pv, pvc = volumes[0], claims[0]

        patched_pv = core.patch_persistent_volume(pv.metadata.name, {"metadata": {"labels": {
            pv.metadata.name: "patched"}}}, _content_type=STRATEGIC_MERGE_PATCH)
        assert patched_pv.metadata.labels.get(pv.metadata.name) == "patched", "the PV patch was not applied"
        assert int(patched_pv.metadata.resource_version) > int(pv.metadata.resource_version)
        patched_pvc = core.patch_namespaced_persistent_volume_claim(pvc.metadata.name, namespace, {"metadata": {
            "labels": {pvc.metadata.name: "patched"}}}, _content_type=STRATEGIC_MERGE_PATCH)
        assert patched_pvc.metadata.labels.get(pvc.metadata.name) == "patched", "the PVC patch was not applied"
        assert int(patched_pvc.metadata.resource_version) > int(pvc.metadata.resource_version)
        assert core.read_persistent_volume(pv.metadata.name).metadata.uid == patched_pv.metadata.uid
        assert core.read_namespaced_persistent_volume_claim(pvc.metadata.name, namespace).metadata.uid == \
            patched_pvc.metadata.uid

        core.delete_namespaced_persistent_volume_claim(pvc.metadata.name, namespace)
        wait_until_none(core.list_namespaced_persistent_volume_claim, namespace, "", f"PVC {pvc.metadata.name}")
        core.delete_persistent_volume(pv.metadata.name)
        wait_until_none(core.list_persistent_volume, None, pool, f"PV {pv.metadata.name}")

    with pv_and_pvc(api, namespace, csi_pv(namespace, "e2e-conformance"), make_pvc(namespace)):
        volumes, claims = pool_objects(core, namespace, pool)
        pv_name, pvc_name = volumes[0].metadata.name, claims[0].metadata.name

        def label_pv(obj: Any) -> None:
            obj.metadata.labels[pv_name] = "updated"

        def label_pvc(obj: Any) -> None:
            obj.metadata.labels = {pvc_name: "updated"}

        updated_pv = workloads.update_with_retries(lambda: core.read_persistent_volume(pv_name),
                                                   lambda obj: core.replace_persistent_volume(pv_name, obj), label_pv)
        assert updated_pv.metadata.labels.get(pv_name) == "updated", "the PV update was not applied"
        updated_pvc = workloads.update_with_retries(
            lambda: core.read_namespaced_persistent_volume_claim(pvc_name, namespace),
            lambda obj: core.replace_namespaced_persistent_volume_claim(pvc_name, namespace, obj), label_pvc)
        assert updated_pvc.metadata.labels.get(pvc_name) == "updated", "the PVC update was not applied"
        listed = retry.call(core.list_persistent_volume_claim_for_all_namespaces,
                            label_selector=f"{pvc_name}=updated").items
        assert len(listed) == 1, f"expected 1 PVC labelled {pvc_name}=updated, got {len(listed)}"

        core.delete_collection_namespaced_persistent_volume_claim(namespace, label_selector=f"{pvc_name}=updated")
        wait_until_none(core.list_namespaced_persistent_volume_claim, namespace, f"{pvc_name}=updated",
                        f"PVC {pvc_name}")
        core.delete_collection_persistent_volume(label_selector=f"{pv_name}=updated")
        wait_until_none(core.list_persistent_volume, None, f"{pv_name}=updated", f"PV {pv_name}")


@no_pods("creates PersistentVolumes and claims only")
@csi_conformance.it("should apply changes to a pv/pvc status", Conformance,
                    twin="[sig-storage] PersistentVolumes CSI Conformance should apply changes to a pv/pvc status "
                         "[Conformance]", category="Core.Storage")
def test_pv_pvc_status(api: client.ApiClient, namespace: str) -> None:
    core, pool = pods.core(api), f"{POOL_LABEL}={namespace}"
    with pv_and_pvc(api, namespace, csi_pv(namespace, "e2e-status-conformance"), make_pvc(namespace)):
        volumes, claims = pool_objects(core, namespace, pool)
        pv_name, pvc_name = volumes[0].metadata.name, claims[0].metadata.name
        assert core.read_namespaced_persistent_volume_claim_status(pvc_name, namespace).status.phase in \
            ("Pending", "Bound"), "the PVC status was not read"
        assert core.read_persistent_volume_status(pv_name).status.phase in ("Available", "Bound", "Pending"), \
            "the PV status was not read"

        patched_pvc = core.patch_namespaced_persistent_volume_claim_status(pvc_name, namespace, {"status": {
            "conditions": [{"type": "StatusPatched", "status": "True", "reason": "E2E patchedStatus",
                            "message": "Set from e2e test"}]}}, _content_type=MERGE_PATCH)
        assert any(c.type == "StatusPatched" and "Set from e2e test" in (c.message or "")
                   and "E2E patchedStatus" in (c.reason or "") for c in patched_pvc.status.conditions or []), \
            f"the patched status was not applied: {patched_pvc.status.conditions}"
        patched_pv = core.patch_persistent_volume_status(pv_name, {"status": {
            "message": "StatusPatched", "reason": "E2E patchStatus"}}, _content_type=MERGE_PATCH)
        assert (patched_pv.status.reason, patched_pv.status.message) == ("E2E patchStatus", "StatusPatched")

        def add_condition(obj: Any) -> None:
            obj.status.conditions = [*(obj.status.conditions or []), client.V1PersistentVolumeClaimCondition(
                type="StatusUpdated", status="True", reason="E2E updateStatus", message="Set from e2e test")]

        updated_pvc = workloads.update_with_retries(
            lambda: core.read_namespaced_persistent_volume_claim(pvc_name, namespace),
            lambda obj: core.replace_namespaced_persistent_volume_claim_status(pvc_name, namespace, obj), add_condition)
        assert any(c.type == "StatusUpdated" and "Set from e2e test" in (c.message or "")
                   and "E2E updateStatus" in (c.reason or "") for c in updated_pvc.status.conditions or []), \
            f"the updated status was not applied: {updated_pvc.status.conditions}"

        def set_reason(obj: Any) -> None:
            obj.status.reason, obj.status.message = "E2E updateStatus", "StatusUpdated"

        updated_pv = workloads.update_with_retries(lambda: core.read_persistent_volume(pv_name),
                                                   lambda obj: core.replace_persistent_volume_status(pv_name, obj),
                                                   set_reason)
        assert (updated_pv.status.reason, updated_pv.status.message) == ("E2E updateStatus", "StatusUpdated")


def host_temp(target: Target) -> str:
    """The node directory the test's volume directory is made in."""
    return "C:\\tmp" if target.os == "windows" else "/tmp"


def volume_pod(target: Target, name: str, script: str, volume: dict[str, Any]) -> dict[str, Any]:
    """busybox running `script` with `volume` at /mnt/volume1."""
    busybox = manifests.container("busybox", target.image("busybox"), command=["sh", "-c", script],
                                  volumeMounts=[manifests.volume_mount("data", "/mnt/volume1")])
    return target.place(manifests.pod(name, [busybox], restartPolicy="Never", volumes=[{"name": "data", **volume}]))


def data_pods(target: Target, namespace: str, token: str, node: str) -> list[dict[str, Any]]:
    """The writer and the reader of the claim, and the cleaner that removes the volume's directory from the
    node (the node's, not the cluster's)."""
    claim = {"persistentVolumeClaim": {"claimName": "pvc-data"}}
    writer = volume_pod(target, "writer", f"echo {token} > /mnt/volume1/data", claim)
    reader = volume_pod(target, "reader", "cat /mnt/volume1/data", claim)
    parent = {"hostPath": {"path": host_temp(target), "type": "Directory"}}
    cleaner = manifests.node_affinity(volume_pod(target, "cleaner", f"rm -rf /mnt/volume1/{namespace}", parent), node)
    return [writer, reader, cleaner]


@windows_pods(lambda target: data_pods(target, "ns", "0" * 32, "win-0"),
              upstream="no twin: KEP-116 (persistent volumes on Windows)")
@persistent_volumes.it("should keep the data one pod wrote on a pre-provisioned volume for the next pod",
                       needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["busybox"],
                       category="Core.Storage")
def test_pre_provisioned_volume_keeps_data(api: client.ApiClient, namespace: str, target: Target) -> None:
    node = next(n for n in target.facts.nodes if n.os == target.os and n.runs_containers)
    hostname = node.labels.get("kubernetes.io/hostname", node.name)
    separator = "\\" if target.os == "windows" else "/"
    # A directory of the node, made by the kubelet; the PV's node affinity keeps every pod on that node.
    source = {"hostPath": {"path": f"{host_temp(target)}{separator}{namespace}", "type": "DirectoryOrCreate"}}
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [hostname]}]}]}}
    pv = make_pv(namespace, source, nodeAffinity=affinity)
    pvc = make_pvc(namespace)
    pvc["metadata"] = {"name": "pvc-data"}
    token = uuid.uuid4().hex
    writer, reader, cleaner = data_pods(target, namespace, token, node.name)
    try:
        with pv_and_pvc(api, namespace, pv, pvc):
            workloads.wait_for_object(pods.core(api).list_namespaced_persistent_volume_claim, name="pvc-data",
                                      namespace=namespace, what="claim pvc-data to be bound",
                                      condition=lambda c: c.status.phase == "Bound", timeout=BIND_TIMEOUT)
            pods.start(api, namespace, writer, state="Succeeded")
            container_output.expect_output(api, namespace, reader, [token])
            for name in ("writer", "reader"):
                pods.delete(api, namespace, name)
    finally:
        pods.start(api, namespace, cleaner, state="Succeeded")
