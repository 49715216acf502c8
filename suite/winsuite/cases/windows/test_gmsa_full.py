"""GMSA end to end (gmsa_full.go): a pod authenticates to Active Directory with a Group Managed Service Account.

It assumes what the AKS setup of upstream's daily job provides: exactly one Windows node labelled
agentpool=windowsgmsa, joined to the domain k8sgmsa.lan, with a GMSA installed and its GMSACredentialSpec
manifest (custom resource gmsa-e2e) at C:\\gmsa\\gmsa-cred-spec-gmsa-e2e.yml; a Linux node for the webhook;
the admission webhooks enabled; and, for the SMB test, a folder write_test shared with the GMSA account.
Deploying the webhook downloads its script and packages, so the cluster must reach the Internet.
"""

from __future__ import annotations

import functools
import logging
import re
import uuid
from collections.abc import Generator
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits
from winsuite.k8s import workloads
from winsuite.k8s.undo import Undo

gmsa_support = Describe(Area("sig-windows"), Feature("Windows"), "GMSA Full", Serial, Slow).describe("GMSA support")
TWIN = "[sig-windows] [Feature:Windows] GMSA Full [Serial] [Slow] GMSA support "
NEEDS = [Capability.WINDOWS_KERNEL, Capability.ACTIVE_DIRECTORY, Capability.LINUX_AND_WINDOWS_CONTAINERS,
         Capability.EXTERNAL_NETWORK]

GMSA_NODE_LABEL = "agentpool=windowsgmsa"
CRED_SPEC_MANIFEST = "C:\\gmsa\\gmsa-cred-spec-gmsa-e2e.yml"
CRED_SPEC_NAME = "gmsa-e2e"
DOMAIN = "k8sgmsa.lan"
SHARED_FOLDER = "write_test"
WEBHOOK = "gmsa-webhook"
WEBHOOK_SCRIPT = ("https://raw.githubusercontent.com/kubernetes-sigs/windows-gmsa/master/admission-webhook/deploy/"
                  "deploy-gmsa-webhook.sh")
CRD = "gmsacredentialspecs.windows.k8s.io"
CRED_SPEC_READER = "retrieve-gmsa-crd-contents"
DEPLOYER = "webhook-deployer"
GMSA_POD = "pod-with-gmsa"
QUERY_OK = "The command completed successfully"
RETRY_TIMEOUT = 60.0
log = logging.getLogger(__name__)
IPV4 = re.compile(r"(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)(\.(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)){3}")


@pytest.fixture
def undo(namespace: str) -> Generator[Undo]:
    """Cluster-scoped objects and the webhook go before the namespace does."""
    steps = Undo()
    yield steps
    steps.run()


def exec_in(api: client.ApiClient, namespace: str, pod: str, *command: str) -> pods.ExecResult:
    return pods.exec_(api, namespace, pod, list(command), timeout=120)


def gmsa_node(api: client.ApiClient) -> client.V1Node:
    labelled = retry.call(client.CoreV1Api(api).list_node, label_selector=GMSA_NODE_LABEL).items
    if len(labelled) != 1:
        pytest.skip(f"requires exactly one node labelled {GMSA_NODE_LABEL} (found: {len(labelled)})")
    return labelled[0]


def cred_spec_reader_pod(target: Target, node: str) -> dict[str, Any]:
    """A pod on the GMSA node mounting the folder of its credential spec manifest."""
    folder = CRED_SPEC_MANIFEST.rsplit("\\", 1)[0]
    reader = manifests.container(CRED_SPEC_READER, target.image("pause"),
                                 volumeMounts=[manifests.volume_mount(f"{CRED_SPEC_READER}-volume", folder)])
    pod = manifests.pod(CRED_SPEC_READER, [reader],
                        volumes=[{"name": f"{CRED_SPEC_READER}-volume", "hostPath": {"path": folder}}])
    return manifests.pin_to_node(target.place(pod), node)


def webhook_deployer_pod(target: Target, account: str, webhook_namespace: str) -> dict[str, Any]:
    """The Linux pod that runs the windows-gmsa deploy script with the account's (cluster-admin) rights."""
    install = " ".join([
        'echo "@community http://dl-cdn.alpinelinux.org/alpine/edge/community/" >> /etc/apk/repositories',
        "&& apk add kubectl@community gettext openssl", "&& apk add --update coreutils",
        f"&& curl {WEBHOOK_SCRIPT} > gmsa.sh", "&& chmod +x gmsa.sh",
        f"&& ./gmsa.sh --file /manifests.yml --name {WEBHOOK} --namespace {webhook_namespace} --certs-dir certs "
        "--tolerate-master", "&& /agnhost pause"])
    agnhost = manifests.container(DEPLOYER, target.image("agnhost", os="linux"), command=["bash", "-c"],
                                  args=[install])
    return manifests.on_linux(manifests.pod(DEPLOYER, [agnhost], serviceAccountName=account),
                              target.placement.simulated_nodes)


def gmsa_pod(target: Target, node: str, account: str) -> dict[str, Any]:
    """The pod with the GMSA identity: the credential spec by name, the account allowed to use it. Upstream
    leaves placement to the cluster; only the labelled node is joined to the domain."""
    sleeper = manifests.container(GMSA_POD, target.image("busybox"),
                                  command=["powershell.exe", "-Command", "sleep -Seconds 600"])
    pod = manifests.pod(GMSA_POD, [sleeper], serviceAccountName=account,
                        securityContext={"windowsOptions": {"gmsaCredentialSpecName": CRED_SPEC_NAME}})
    return manifests.pin_to_node(target.place(pod), node)


def gmsa_pods(target: Target) -> list[dict[str, Any]]:
    account = "ns-sa-00000000-0000-0000-0000-000000000001"
    return [cred_spec_reader_pod(target, "win-0"), webhook_deployer_pod(target, account, "ns-webhook"),
            gmsa_pod(target, "win-0", account)]


def cred_spec_manifest(api: client.ApiClient, namespace: str, target: Target, node: str) -> str:
    """retrieveCRDManifestFileContents: read the manifest on the node through a pod mounting its folder."""
    name = CRED_SPEC_READER
    pods.start(api, namespace, cred_spec_reader_pod(target, node), state="Ready")
    result = exec_in(api, namespace, name, "cmd", "/S", "/C", f"type {CRED_SPEC_MANIFEST}")
    assert result.exit_code == 0, f"failed to retrieve the contents of {CRED_SPEC_MANIFEST} on node {node}: {result}"
    return result.stdout.replace("\r\n", "\n")


def service_account(api: client.ApiClient, namespace: str) -> str:
    name = f"{namespace}-sa-{uuid.uuid4()}"
    retry.call(client.CoreV1Api(api).create_namespaced_service_account, namespace, {"metadata": {"name": name}})
    return name


def binding(kind: str, namespace: str, account: str, role: str) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": {"name": f"{namespace}-rbac-binding"},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}}


def deploy_webhook(api: client.ApiClient, namespace: str, target: Target, undo: Undo) -> None:
    """deployGmsaWebhook: a Linux pod with cluster-admin rights runs the windows-gmsa deploy script."""
    rbac = client.RbacAuthorizationV1Api(api)
    webhook_namespace = f"{namespace[:50].rstrip('-')}-webhook"  # a namespace name has at most 63 characters
    deployer = DEPLOYER
    account = service_account(api, namespace)
    admin = binding("ClusterRoleBinding", namespace, account, "cluster-admin")
    # Undone last: the deployer's cluster-admin rights are what deletes the webhook's manifests.
    undo.add("the deployer's ClusterRoleBinding",
             lambda: retry.call(rbac.delete_cluster_role_binding, admin["metadata"]["name"]))
    undo.add("the webhook's manifests",
             lambda: exec_in(api, namespace, deployer, "kubectl", "delete", "-f", "/manifests.yml"))
    undo.add("the webhook's CertificateSigningRequest", lambda: retry.call(
        client.CertificatesV1Api(api).delete_certificate_signing_request, f"{WEBHOOK}.{webhook_namespace}"))
    undo.add("the GMSACredentialSpec CRD", lambda: retry.call(
        client.ApiextensionsV1Api(api).delete_custom_resource_definition, CRD))
    retry.call(rbac.create_cluster_role_binding, admin)
    pods.start(api, namespace, webhook_deployer_pod(target, account, webhook_namespace), state="Ready")
    try:
        workloads.wait_for_deployment_complete(api, webhook_namespace, WEBHOOK, timeout=300)
    finally:
        log.info("GMSA webhook deployment logs:\n%s", pods.logs(api, namespace, deployer, deployer))


def create_cred_spec(api: client.ApiClient, manifest: str, undo: Undo) -> None:
    """createGmsaCustomResource: apply the node's manifest (`kubectl apply` semantics: server-side apply)."""
    dynamic = DynamicClient(api)
    for document in (d for d in yaml.safe_load_all(manifest) if d):
        resource = dynamic.resources.get(api_version=document["apiVersion"], kind=document["kind"])
        dynamic.server_side_apply(resource, body=document, field_manager="winsuite", force_conflicts=True)
        undo.add(f"{document['kind']} {document['metadata']['name']}",
                 functools.partial(dynamic.delete, resource, name=document["metadata"]["name"]))


def pod_with_gmsa(api: client.ApiClient, namespace: str, target: Target, node: str, undo: Undo) -> str:
    """The RBAC role to use the credential spec, a service account bound to it, and a pod using both."""
    rbac = client.RbacAuthorizationV1Api(api)
    role = f"{namespace}-rbac-role"
    rule = {"apiGroups": ["windows.k8s.io"], "resources": ["gmsacredentialspecs"], "verbs": ["use"],
            "resourceNames": [CRED_SPEC_NAME]}
    undo.add("the GMSA ClusterRole", lambda: retry.call(rbac.delete_cluster_role, role))
    retry.call(rbac.create_cluster_role, {"metadata": {"name": role}, "rules": [rule]})
    account = service_account(api, namespace)
    retry.call(rbac.create_namespaced_role_binding, namespace, binding("RoleBinding", namespace, account, role))
    pods.start(api, namespace, gmsa_pod(target, node, account), state="Ready")
    return GMSA_POD


def set_up_gmsa_pod(api: client.ApiClient, namespace: str, target: Target, undo: Undo) -> str:
    """The steps both tests share, up to a running pod with the GMSA identity."""
    nodes.skip_unless_target_os_is_windows(target.os)
    node = objects.name_of(gmsa_node(api))
    namespaces.allow_privileged_pods(api, namespace)
    manifest = cred_spec_manifest(api, namespace, target, node)
    deploy_webhook(api, namespace, target, undo)
    create_cred_spec(api, manifest, undo)
    return pod_with_gmsa(api, namespace, target, node, undo)


@windows_pods(gmsa_pods, upstream="test/e2e/windows/gmsa_full.go:99-160,240-420")
@gmsa_support.it("works end to end", twin=TWIN + "works end to end", category="Extend.ActiveDirectory",
                 needs=NEEDS, images=["pause", "agnhost", "busybox"])
def test_gmsa_works_end_to_end(api: client.ApiClient, namespace: str, target: Target, undo: Undo) -> None:
    pod = set_up_gmsa_pod(api, namespace, target, undo)

    # nltest /QUERY succeeds only with a GMSA identity that reaches and authenticates to the domain controller.
    def query() -> str:
        result = exec_in(api, namespace, pod, "nltest", "/QUERY")
        valid = QUERY_OK in result.stdout and not any(
            e in result.stdout for e in ("ERROR_NO_LOGON_SERVERS", "RPC_S_SERVER_UNAVAILABLE"))
        if result.exit_code == 0 and valid:
            return result.stdout
        # Repair the secure channel, as the GMSA troubleshooting guide says, and try again.
        reset = exec_in(api, namespace, pod, "nltest", f"/sc_reset:{DOMAIN}")
        raise AssertionError(f"failed to connect to the domain ({result}); tried resetting it: {reset}")

    waits.poll("nltest /QUERY to succeed", query, timeout=RETRY_TIMEOUT)


@windows_pods(gmsa_pods, upstream="test/e2e/windows/gmsa_full.go:163-219,240-420")
@gmsa_support.it("can read and write file to remote SMB folder",
                 twin=TWIN + "can read and write file to remote SMB folder",
                 category="Extend.ActiveDirectory", needs=NEEDS, images=["pause", "agnhost", "busybox"])
def test_gmsa_smb_share(api: client.ApiClient, namespace: str, target: Target, undo: Undo) -> None:
    pod = set_up_gmsa_pod(api, namespace, target, undo)
    lookup = exec_in(api, namespace, pod, "nslookup", DOMAIN).stdout
    addresses = IPV4.search(lookup[max(lookup.find(DOMAIN), 0):])
    assert addresses, f"failed to get the IP of the GMSA domain {DOMAIN} from nslookup:\n{lookup}"
    # A remote folder: keep the UNC form.
    path = f"\\\\{addresses.group(0)}\\{SHARED_FOLDER}\\write-test-{str(uuid.uuid4())[:4]}.txt"

    def write_then_read() -> str:
        exec_in(api, namespace, pod, "powershell.exe", "-Command", f"echo 'This is a test file.' > {path}")
        read = exec_in(api, namespace, pod, "powershell.exe", "-Command", f"cat {path}")
        detail = str(read)
        assert read.exit_code == 0, detail
        return detail

    waits.poll(f"{path} to be written and read", write_then_read, timeout=RETRY_TIMEOUT)
