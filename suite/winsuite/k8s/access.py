"""May these credentials do that? The API server's own answer (SelfSubjectAccessReview), asked before trying, and who
the credentials are (SelfSubjectReview), so a refusal can name its user."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.k8s import retry

# Each review is one small request; a remote API server answers a run's few dozen of them in one round trip's time
# when they are asked side by side.
PARALLEL_REVIEWS = 8


@dataclasses.dataclass(frozen=True)
class Access:
    """One verb on one resource that something needs, and what for (said when it is refused)."""

    verb: str
    resource: str  # plural, as RBAC names it; a subresource after a slash: "pods/exec"
    why: str
    group: str = ""  # "" is the core group
    namespace: str = ""  # "" for a cluster-scoped resource, or for every namespace at once

    def describe(self) -> str:
        """`create namespaces`, `create leases.coordination.k8s.io in namespace default`."""
        resource, slash, subresource = self.resource.partition("/")
        named = f"{resource}.{self.group}" if self.group else resource
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.verb} {named}{slash}{subresource}{where}"

    def review(self) -> client.V1SelfSubjectAccessReview:
        resource, _, subresource = self.resource.partition("/")
        attributes = client.V1ResourceAttributes(verb=self.verb, group=self.group, resource=resource,
                                                 subresource=subresource or None, namespace=self.namespace or None)
        return client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(
            resource_attributes=attributes))


def refused(api: client.ApiClient, needs: Sequence[Access]) -> list[Access]:
    """The needs the API server's authorizer does not allow these credentials, in the order given."""
    authorization = client.AuthorizationV1Api(api)

    def allowed(need: Access) -> bool:
        answer = retry.call(authorization.create_self_subject_access_review, need.review())
        return bool(answer.status and answer.status.allowed)

    # Credentials that may do anything (RBAC matches "*" only to a rule of "*": cluster-admin's) need one answer.
    if allowed(Access("*", "*", "everything", group="*")):
        return []
    with ThreadPoolExecutor(PARALLEL_REVIEWS) as pool:
        answers = list(pool.map(allowed, needs))
    return [need for need, yes in zip(needs, answers, strict=True) if not yes]


def user_name(api: client.ApiClient) -> str:
    """Who the API server takes these credentials for (`system:serviceaccount:ns:name`); where it does not say
    (SelfSubjectReview refused or absent), "these credentials"."""
    try:
        review = retry.call(client.AuthenticationV1Api(api).create_self_subject_review,
                            client.V1SelfSubjectReview())
    except ApiException:
        return "these credentials"
    user = review.status.user_info if review.status else None
    return str(user.username) if user is not None and user.username else "these credentials"
