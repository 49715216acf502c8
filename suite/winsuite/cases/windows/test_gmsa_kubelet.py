"""GMSA in the kubelet (gmsa_kubelet.go): credential specs reach the containers, without a domain.

The light GMSA test: no Active Directory is needed, because `nltest /PARENTDOMAIN` names the domain of the
credential spec even when the credentials are bogus. gmsa_full.go tests the whole process.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import pods
from winsuite.k8s import waits

gmsa_kubelet = Describe(Area("sig-windows"), Feature("Windows"), "GMSA Kubelet", Slow) \
    .describe("kubelet GMSA support", "when creating a pod with correct GMSA credential specs")

POD = "with-correct-gmsa-specs"
POD_DOMAIN = "acme.com"
CONTAINER_DOMAIN = "contoso.org"
SLEEP = ["powershell.exe", "-Command", "sleep -Seconds 600"]
COMPLETED = "The command completed successfully"
# PowerShell containers answer exec a little after the runtime reports them running.
EXEC_READY_TIMEOUT = 60.0


def dummy_cred_spec(domain: str) -> str:
    """generateDummyCredSpecs: a credential spec for a made-up account of `domain`."""
    short = domain.split(".", maxsplit=1)[0].upper()
    spec = {
        "ActiveDirectoryConfig": {"GroupManagedServiceAccounts": [
            {"Name": "WebApplication", "Scope": short}, {"Name": "WebApplication", "Scope": domain}]},
        "CmsPlugins": ["ActiveDirectory"],
        "DomainJoinConfig": {"DnsName": domain, "DnsTreeName": domain, "Guid": "244818ae-87ca-4fcd-92ec-e79e5252348a",
                             "MachineAccountName": "WebApplication", "NetBiosName": short,
                             "Sid": "S-1-5-21-2126729477-2524175714-3194792973"},
    }
    return json.dumps(spec)


def credential_spec_pod(target: Target) -> dict[str, Any]:
    """The pod's credential spec applies to container1; container2's own spec overrides it."""
    image = target.image("busybox")
    first = manifests.container("container1", image, command=SLEEP)
    second = manifests.container("container2", image, command=SLEEP, securityContext={
        "windowsOptions": {"gmsaCredentialSpec": dummy_cred_spec(CONTAINER_DOMAIN)}})
    return target.place(manifests.pod(POD, [first, second], securityContext={
        "windowsOptions": {"gmsaCredentialSpec": dummy_cred_spec(POD_DOMAIN)}}))


@windows_pods(lambda target: [credential_spec_pod(target)], upstream="test/e2e/windows/gmsa_kubelet.go:49-130")
@gmsa_kubelet.it("passes the credential specs down to the Pod's containers",
                 twin="[sig-windows] [Feature:Windows] GMSA Kubelet [Slow] kubelet GMSA support when creating a pod "
                      "with correct GMSA credential specs passes the credential specs down to the Pod's containers",
                 category="Extend.ActiveDirectory", needs=[Capability.WINDOWS_KERNEL], images=["busybox"])
def test_credential_specs_reach_the_containers(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    pods.start(api, namespace, credential_spec_pod(target), state="Ready")

    # The pod's spec applies to container1; container2's own spec overrides it.
    for container, domain in (("container1", POD_DOMAIN), ("container2", CONTAINER_DOMAIN)):

        def parent_domain(container: str = container) -> str:
            result = pods.exec_(api, namespace, POD, ["nltest", "/PARENTDOMAIN"], container=container)
            detail = result.stdout if result.exit_code == 0 else str(result)
            assert result.exit_code == 0, detail
            return detail

        output = waits.poll(f"nltest /PARENTDOMAIN to succeed in {container}", parent_domain,
                            timeout=EXEC_READY_TIMEOUT)
        assert output.startswith(domain), f"expected {output!r} to start with {domain!r}"
        assert COMPLETED in output, f"expected {output!r} to contain {COMPLETED!r}"
