"""What a run needs the cluster to let it do, asked before it makes anything: a run whose credentials may not create a
namespace stops before its first test with one line naming the verb, the resource and the user, instead of a
failure per test (or a refusal halfway, with objects left behind).

The needs follow the run: every run discovers the cluster, holds its Lease and runs tests in namespaces of their own
(the pods and the other objects tests make there: Services, workloads, ConfigMaps, Secrets); a run with upstream specs
also places their pods with a MutatingAdmissionPolicy. A test that makes a rarer object (a PriorityClass, a
RuntimeClass) is not asked for here: refused, it fails on its own, and the run's other tests still run."""

from __future__ import annotations

from kubernetes import client

from winsuite.errors import UsageError
from winsuite.k8s import access
from winsuite.k8s import run_leases
from winsuite.k8s.access import Access
from winsuite.policy.run_config import RunConfig
from winsuite.run.engines import placement_policy
from winsuite.run.observations import NODE_LEASES

TESTS = "needed to run tests"
DISCOVERY = "needed to discover the cluster"
LEASE = "needed to hold the run's Lease"
PLACEMENT = "needed to place upstream specs' pods on the target OS"
EVIDENCE = "needed to observe where tests ran"
OBJECT_VERBS = ("create", "get", "list", "watch", "delete")
# (group, resource): what the framework and the tests make in a test's namespace.
TEST_OBJECTS = (("", "pods"), ("", "services"), ("", "configmaps"), ("", "secrets"), ("apps", "deployments"),
                ("apps", "replicasets"), ("apps", "daemonsets"), ("apps", "statefulsets"), ("batch", "jobs"),
                ("batch", "cronjobs"))
SHOWN_MORE = 4  # refused needs named after the first; the rest counted


def run_needs(run: RunConfig) -> list[Access]:
    """Everything the run will ask of the API server, in the order a refusal is best explained by."""
    needs = [Access(verb, "namespaces", TESTS) for verb in ("create", "delete", "get", "list", "patch")]
    needs += [Access(verb, resource, TESTS, group=group) for group, resource in TEST_OBJECTS for verb in OBJECT_VERBS]
    needs += [Access("get", "pods/log", TESTS), Access("create", "pods/exec", TESTS)]
    needs += [Access(verb, "events", TESTS) for verb in ("list", "watch")]
    needs += [Access(verb, "nodes", DISCOVERY) for verb in ("get", "list", "watch")]
    needs += [Access("list", "runtimeclasses", DISCOVERY, group="node.k8s.io"),
              Access("get", "apiservices", DISCOVERY, group="apiregistration.k8s.io"),
              Access("list", "endpointslices", DISCOVERY, group="discovery.k8s.io", namespace="kube-system")]
    needs += [Access(verb, "leases", LEASE, group="coordination.k8s.io", namespace=run_leases.NAMESPACE)
              for verb in ("create", "patch", "list", "delete")]
    needs += [Access(verb, "leases", EVIDENCE, group="coordination.k8s.io", namespace=NODE_LEASES)
              for verb in ("list", "watch")]
    if run.with_upstream:
        needs += [Access(verb, plural, PLACEMENT, group=placement_policy.GROUP)
                  for plural in (placement_policy.POLICIES, placement_policy.BINDINGS)
                  for verb in ("create", "delete", "list")]
    return needs


def check(api: client.ApiClient, run: RunConfig) -> None:
    """Nothing when the cluster allows every need; else a usage error naming the first refused need, its user, and
    how many more were refused."""
    refused = access.refused(api, run_needs(run))
    if refused:
        raise UsageError(refusal(access.user_name(api), refused))


def refusal(user: str, refused: list[Access]) -> str:
    """`the cluster refuses U to create namespaces (needed to run tests) and 3 more the run needs: …; nothing was
    created`."""
    first, rest = refused[0], refused[1:]
    more = ""
    if rest:
        shown = ", ".join(need.describe() for need in rest[:SHOWN_MORE])
        more = f" and {len(rest)} more the run needs: {shown}{', …' if len(rest) > SHOWN_MORE else ''}"
    return f"the cluster refuses {user} to {first.describe()} ({first.why}){more}; nothing was created"
