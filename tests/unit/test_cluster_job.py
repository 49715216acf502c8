"""The job a run gets from its flags: the cluster's own job without --job, the one for a cluster you bring named after
that cluster (its context, else its server's host) and the target OS; --job and job fields still win."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from winsuite.cli import build_parser
from winsuite.inputs.jobs import JobChoice
from winsuite.inputs.jobs import JobSpec
from winsuite.policy import options
from winsuite.policy.cluster_job import path_safe
from winsuite.policy.run_config import resolve_run
from winsuite.run.request import flags_of


def kubeconfig(directory: Path, *contexts: str, server: str = "https://prod.example.com:6443") -> Path:
    """A kubeconfig with these contexts (the first current), each on its own cluster entry."""
    path = directory / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": contexts[0],
        "clusters": [{"name": f"c{i}", "cluster": {"server": server}} for i, _ in enumerate(contexts)],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": name, "context": {"cluster": f"c{i}", "user": "u"}} for i, name in enumerate(contexts)],
    }))
    return path


def job_of(argv: list[str], environ: dict[str, str] | None = None) -> JobSpec:
    """The job `winsuite run ARGV` resolves, from its parsed flags."""
    args = build_parser("run").parse_args(["run", *argv])
    return resolve_run(options.job_ref(vars(args).get), flags_of(args), environ=environ or {}).job


def test_a_cluster_given_by_kubeconfig_gets_a_job_named_after_its_context_and_target_os(tmp_path: Path) -> None:
    job = job_of(["--kubeconfig", str(kubeconfig(tmp_path, "admin@prod", "staging"))])
    assert (job.name, job.dashboard, job.tab) == ("winsuite-admin-prod-windows", "winsuite-admin-prod",
                                                  "admin-prod-windows")
    assert job.chosen is JobChoice.CLUSTER_DEFAULT
    assert job.why == "the default for a cluster given by --kubeconfig; --job to choose another"


def test_the_context_and_target_os_given_name_the_job(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, "admin@prod", "staging")
    assert job_of(["--kubeconfig", str(path), "--context", "staging", "--node-os", "linux"]).name == (
        "winsuite-staging-linux")
    assert job_of(["--kubeconfig", str(path)], {"WINSUITE_NODE_OS": "linux"}).name == "winsuite-admin-prod-linux"


def test_a_context_that_leaves_no_name_gives_way_to_the_servers_host(tmp_path: Path) -> None:
    assert job_of(["--kubeconfig", str(kubeconfig(tmp_path, "@@@"))]).tab == "prod.example.com-windows"


def test_a_run_inside_a_pod_is_named_after_its_api_server(tmp_path: Path) -> None:
    assert job_of(["--in-cluster-config"], {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}).name == (
        "winsuite-10.96.0.1-windows")
    assert job_of(["--in-cluster-config"]).name == "winsuite-in-cluster-windows"


def test_a_named_job_keeps_its_name_and_made_clusters_keep_their_jobs(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, "prod")
    named = job_of(["--job", "sig-windows-parallel", "--kubeconfig", str(path)])
    assert (named.name, named.tab, named.why) == ("sig-windows-parallel", "winsuite-windows-master", "named by --job")
    assert job_of([]).name == "winsuite-embedded"
    assert job_of(["--cluster-type", "kind"]).name == "winsuite-kind"


@pytest.mark.parametrize(("text", "safe"), [
    ("kubernetes-admin@kubernetes", "kubernetes-admin-kubernetes"),
    ("arn:aws:eks:us-west-2:123456789012:cluster/prod", "arn-aws-eks-us-west-2-123456789012-cluster-prod"),
    ("gke_proj_europe-west1_win", "gke_proj_europe-west1_win"),
    ("..", ""), ("-a b-", "a-b"), ("x" * 300, "x" * 100),
])
def test_a_cluster_name_becomes_part_of_a_directory_name(text: str, safe: str) -> None:
    assert path_safe(text) == safe
