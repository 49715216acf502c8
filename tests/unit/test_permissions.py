"""What a run asks the API server before it makes anything (run/permissions.py), and how a refusal reads: one line
naming the verb, the resource, the user and what the run needed it for."""

from __future__ import annotations

import pytest

from winsuite.errors import one_line
from winsuite.k8s.access import Access
from winsuite.policy.run_config import resolve_run
from winsuite.run import permissions
from winsuite.run.engines import placement_policy

USER = "system:serviceaccount:ns:viewer"


def test_an_access_reads_as_rbac_names_it() -> None:
    assert Access("create", "namespaces", "x").describe() == "create namespaces"
    assert Access("create", "pods/exec", "x").describe() == "create pods/exec"
    lease = Access("patch", "leases", "x", group="coordination.k8s.io", namespace="default")
    assert lease.describe() == "patch leases.coordination.k8s.io in namespace default"
    review = lease.review().spec.resource_attributes
    assert (review.verb, review.group, review.resource, review.namespace) == (
        "patch", "coordination.k8s.io", "leases", "default")
    exec_review = Access("create", "pods/exec", "x").review().spec.resource_attributes
    assert (exec_review.resource, exec_review.subresource, exec_review.namespace) == ("pods", "exec", None)


@pytest.mark.parametrize("engine", ["native", "auto"])
def test_a_run_asks_first_for_namespaces_then_for_what_its_engines_make(engine: str) -> None:
    run = resolve_run(None, {"node_os": "linux", "engine": engine}, environ={}, run_id="r1")
    needs = permissions.run_needs(run)
    assert needs[0] == Access("create", "namespaces", permissions.TESTS)
    described = {need.describe() for need in needs}
    assert {"create pods", "delete pods", "watch pods", "create services", "create deployments.apps",
            "create jobs.batch", "list nodes", "list events",
            "create leases.coordination.k8s.io in namespace default"} <= described
    policies = {need for need in needs if need.group == placement_policy.GROUP}
    assert bool(policies) == (engine == "auto")  # only upstream specs' pods are placed by a policy
    assert len(described) == len(needs)


def test_a_refusal_names_the_first_need_its_user_and_counts_the_rest() -> None:
    needs = [Access("create", "namespaces", permissions.TESTS)]
    assert permissions.refusal(USER, needs) == (
        f"the cluster refuses {USER} to create namespaces (needed to run tests); nothing was created")
    many = needs + [Access(verb, "pods", permissions.TESTS) for verb in permissions.OBJECT_VERBS]
    said = permissions.refusal(USER, many)
    assert said.startswith(f"the cluster refuses {USER} to create namespaces (needed to run tests) and 5 more the "
                           "run needs: create pods, get pods, list pods, watch pods, …; nothing was created")
    assert one_line(said) == said  # whole, on the one line an error gets
