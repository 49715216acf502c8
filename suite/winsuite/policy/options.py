"""The run options shared by `winsuite run/list` and pytest, declared once, mapped onto job fields."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

from winsuite.authoring.targeting import NodeOS
from winsuite.errors import UsageError
from winsuite.inputs.cluster_spec import MADE_CLUSTER_TYPES
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.engines import EngineChoice
from winsuite.inputs.jobs import parse_duration


@dataclasses.dataclass(frozen=True)
class Option:
    flag: str
    help: str
    field: str | None = None  # the job field it overrides (cluster.* for the cluster spec)
    action: str = "store"
    choices: tuple[str, ...] | None = None
    convert: Callable[[str], Any] | None = None
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return "winsuite_" + self.flag.lstrip("-").replace("-", "_")


def _int(text: str) -> int:
    return int(text)


SELECTION_OPTIONS = (
    Option("--job", "job spec (a path, or a name under jobs/); default: the cluster's own job, jobs/embedded.yaml "
           "(the embedded cluster), kind.yaml (--cluster-type kind) or your-cluster.yaml (--kubeconfig, "
           "--in-cluster-config: named after the cluster and the target OS)", metavar="FILE"),
    Option("--node-os", "target OS of the run (job field nodeOS; env WINSUITE_NODE_OS)", "node_os",
           choices=tuple(NodeOS)),
    Option("--focus", "run only tests whose full name matches this Go regex (repeatable, ORed like ginkgo)",
           "focus", action="append", metavar="RE"),
    Option("--skip", "leave out tests whose full name matches this Go regex (repeatable)", "skip",
           action="append", metavar="RE"),
    Option("--repo-list", "KUBE_TEST_REPO_LIST-style file or URL mapping image registries", "repo_list",
           metavar="FILE"),
    Option("--exclusions", "exclusion list (repeatable; replaces the job's lists)", "exclusions",
           action="append", metavar="FILE"),
    Option("--run-excluded", "run excluded tests anyway (they keep the exclusion in their results)",
           "run_excluded", action="store_true"),
    Option("--cni", "the cluster's CNI plugin name, for scoped exclusions", "cni"),
    Option("--label-filter", "ginkgo label-filter expression over the tests' labels (their tags), e.g. "
           "'Conformance && !Serial' (job field labelFilter)", "label_filter", metavar="EXPR"),
    Option("--engine", "auto (winsuite's port where one exists, else the upstream e2e.test spec), native, "
           "upstream, or both (ports run by both engines and cross-checked) (job field engine; env WINSUITE_ENGINE)",
           "engine", choices=tuple(EngineChoice)),
)

CLUSTER_OPTIONS = (
    Option("--kubeconfig", "run against the cluster of this kubeconfig (default: the embedded cluster)",
           "cluster.kubeconfig", metavar="FILE"),
    Option("--context", "kubeconfig context to use", "cluster.context"),
    Option("--in-cluster-config", "connect with the service account of the pod winsuite runs in (in-cluster config)",
           "cluster.type", action="store_true"),
    Option("--cluster-type", "a cluster winsuite makes: embedded (the default job's) or kind (job field cluster.type; "
           "env WINSUITE_CLUSTER_TYPE)", "cluster.type", choices=MADE_CLUSTER_TYPES, convert=ClusterType),
    Option("--cluster-name", "name of the embedded (or kind) cluster", "cluster.name"),
    Option("--kind-image", "kind node image for a kind cluster winsuite creates (default: the one `winsuite cluster "
           "build --kind` makes; job field cluster.kindImage)", "cluster.kind_image", metavar="REF"),
    Option("--no-real-node", "embedded cluster without the real Linux node", "cluster.real_node",
           action="store_true"),
)

# `list` and `images` ask a cluster only when one is named: they read it, and make nothing in it.
ASKED_CLUSTER_OPTIONS = (
    Option("--kubeconfig", "answer for the cluster of this kubeconfig: the skips its nodes and capabilities decide, "
           "its Kubernetes version's upstream specs, its Windows builds (default: no cluster is asked)",
           "cluster.kubeconfig", metavar="FILE"),
    Option("--context", "kubeconfig context to use (default: its current-context)", "cluster.context"),
)

EXECUTION_OPTIONS = (
    Option("--flake-attempts", "rerun a failed test up to N times, keeping every attempt", "flake_attempts",
           convert=_int, metavar="N"),
    Option("--test-timeout", "per-test timeout, e.g. 15m (job timeouts.test)", "test_timeout",
           convert=parse_duration, metavar="DURATION"),
    Option("--runtime-class", "runtimeClassName given to every test pod", "runtime_class"),
    Option("--prepull", "pull the selection's images on the nodes before the tests, one DaemonSet per target OS and "
           "Windows build (job field prepull)", "prepull", action="store_true"),
    Option("--fail-on-flaky", "a test that passed only on a retry (--flake-attempts) fails the run, as Kubernetes' "
           "no-flake policy wants (job field failOnFlaky)", "fail_on_flaky", action="store_true"),
    Option("--e2e-test", "upstream e2e.test binary for upstream specs (default: built for the server's version; "
           "env WINSUITE_E2E_TEST)", "e2e_test", metavar="PATH"),
)

RUN_OPTIONS = SELECTION_OPTIONS + CLUSTER_OPTIONS + EXECUTION_OPTIONS


def add_to_argparse(parser: argparse.ArgumentParser | Any, options: tuple[Option, ...]) -> None:
    """Add options to an argparse parser or a pytest option group (both take the same arguments)."""
    for option in options:
        kwargs: dict[str, Any] = {"dest": option.dest, "help": option.help, "action": option.action}
        if option.action == "append":
            kwargs["default"] = None
        if option.choices:
            kwargs["choices"] = tuple(map(str, option.choices))  # an enum member is shown by its value
        if option.action != "store_true":
            kwargs["metavar"] = option.metavar or option.flag.lstrip("-").upper().replace("-", "_")
        parser.addoption(option.flag, **kwargs) if hasattr(parser, "addoption") else parser.add_argument(
            option.flag, **kwargs
        )


def overrides(get: Callable[[str], Any], options: tuple[Option, ...] = RUN_OPTIONS) -> dict[str, Any]:
    """Job-field overrides from parsed options (`get(dest)`); options not given are left out."""
    result: dict[str, Any] = {}
    for option in options:
        value = get(option.dest)
        if option.flag == "--kubeconfig" and value is not None and not str(value).strip():
            raise UsageError("--kubeconfig: an empty path; name the kubeconfig file (winsuite never falls back to "
                             "$KUBECONFIG or ~/.kube/config)")
        if option.field is None or value in (None, False, []):
            continue
        if option.convert is not None:
            value = option.convert(value)
        if option.flag == "--in-cluster-config":
            value = ClusterType.IN_CLUSTER
        elif option.flag == "--no-real-node":
            value = False
        elif option.action == "append":
            value = tuple(value)
        result[option.field] = value
    if "cluster.kubeconfig" in result:
        result["cluster.type"] = ClusterType.KUBECONFIG
    return result


def job_ref(get: Callable[[str], Any]) -> str | None:
    value = get("winsuite_job")
    return str(value) if value else None
