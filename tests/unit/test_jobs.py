"""winsuite.inputs.jobs: job files parsed strictly, paths relative to the file, precedence file < env < flags.

Bad job files, one exact error line each, are golden cases: tests/unit/golden/jobs/ (test_golden.py).
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import pytest

from winsuite.authoring.targeting import NodeOS
from winsuite.authoring.targeting import Taint
from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.engines import EngineChoice
from winsuite.inputs.jobs import ENVIRONMENT
from winsuite.inputs.jobs import JobChoice
from winsuite.inputs.jobs import JobSpec
from winsuite.inputs.jobs import apply_overrides
from winsuite.inputs.jobs import load_job
from winsuite.inputs.jobs import parse_duration
from winsuite.inputs.jobs import resolve_job
from winsuite.inputs.jobs import resolve_job_path
from winsuite.paths import jobs_dir

SHIPPED_JOBS = sorted(jobs_dir().glob("*.yaml"))
HEADER = "apiVersion: winsuite.io/v1alpha1\nkind: Job\nname: j\n"


def write_job(directory: Path, body: str = "", name: str = "job.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(HEADER + textwrap.dedent(body))
    return path


@pytest.mark.parametrize("path", SHIPPED_JOBS, ids=[p.stem for p in SHIPPED_JOBS])
def test_every_shipped_job_loads_and_its_files_exist(path: Path) -> None:
    job = load_job(path)
    assert job.name and job.description
    assert all(Path(p).is_file() for p in job.exclusions)
    assert job.repo_list is None or Path(job.repo_list).is_file()


def test_the_shipped_jobs_include_the_default_and_sig_windows_jobs() -> None:
    assert {"embedded", "kind", "your-cluster", "sig-windows-parallel", "sig-windows-serial-slow"} <= {
        p.stem for p in SHIPPED_JOBS}


def test_every_field_is_read(tmp_path: Path) -> None:
    path = write_job(tmp_path, """\
        description: d
        dashboard: dash
        tab: t
        interval: 3h
        releaseBlocking: true
        cluster: {type: kubeconfig, kubeconfig: kc.yaml, context: ctx, name: c, realNode: false}
        nodeOS: linux
        repoList: lists/repo.yaml
        exclusions: [x.yaml]
        focus: 'a'
        skip: [b, c]
        parallelism: 3
        flakeAttempts: 2
        timeouts: {test: 15m, run: 1h30m}
        placement: {windowsTaint: {key: k, value: v, effect: NoExecute}, runtimeClassName: rc}
        cni: calico
        artifacts: out
        runExcluded: true
    """)
    assert load_job(path) == JobSpec(
        name="j", source=str(path), description="d", dashboard="dash", tab="t", interval=10800.0,
        release_blocking=True,
        cluster=ClusterSpec(ClusterType.KUBECONFIG, "c", str(tmp_path / "kc.yaml"), "ctx", real_node=False),
        node_os=NodeOS.LINUX, repo_list=str(tmp_path / "lists/repo.yaml"), exclusions=(str(tmp_path / "x.yaml"),),
        focus=("a",), skip=("b", "c"), parallelism=3, flake_attempts=2, test_timeout=900.0, run_timeout=5400.0,
        windows_taint=Taint("k", "v", "NoExecute"), runtime_class="rc", cni="calico", artifacts="out",
        run_excluded=True,
    )


def test_defaults_of_a_minimal_job(tmp_path: Path) -> None:
    job = load_job(write_job(tmp_path))
    assert (job.node_os, job.parallelism, job.flake_attempts, job.test_timeout, job.run_timeout) == (
        "windows", 4, 1, 900.0, 5400.0)
    assert job.windows_taint == Taint("os", "windows", "NoSchedule")
    assert job.tab_name == "j"


def test_windows_taint_null_means_no_toleration(tmp_path: Path) -> None:
    assert load_job(write_job(tmp_path, "placement: {windowsTaint: null}\n")).windows_taint is None


def test_relative_paths_are_resolved_against_the_job_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_job(tmp_path / "jobs" / "ci", """\
        repoList: ../../lists/repo.yaml
        exclusions: [../exclusions/a.yaml, /abs/b.yaml]
        cluster: {type: kubeconfig, kubeconfig: ./kubeconfig}
    """)
    job = load_job(Path("jobs/ci/job.yaml"))
    assert job.repo_list == str(tmp_path / "lists/repo.yaml")
    assert job.exclusions == (str(tmp_path / "jobs/exclusions/a.yaml"), "/abs/b.yaml")
    assert Path(job.cluster.kubeconfig or "").resolve() == path.parent / "kubeconfig"


@pytest.mark.parametrize("url", ["https://example.com/repo.yaml", "http://127.0.0.1:8080/list.yaml"])
def test_repo_list_urls_are_kept(tmp_path: Path, url: str) -> None:
    assert load_job(write_job(tmp_path, f"repoList: '{url}'\n")).repo_list == url


# (job field, value in the file, environment value, flag value, the parsed value of each)
PRECEDENCE: list[tuple[str, str, str, Any, tuple[Any, Any, Any]]] = [
    ("node_os", "nodeOS: linux", "windows", "linux", ("linux", "windows", "linux")),
    ("parallelism", "parallelism: 2", "3", 5, (2, 3, 5)),
    ("flake_attempts", "flakeAttempts: 2", "3", 4, (2, 3, 4)),
    ("test_timeout", "timeouts: {test: 1m}", "2m", 180.0, (60.0, 120.0, 180.0)),
    ("run_timeout", "timeouts: {run: 1h}", "90m", "3h", (3600.0, 5400.0, 10800.0)),
    ("repo_list", "repoList: 'https://file/r.yaml'", "https://env/r.yaml", "https://flag/r.yaml",
     ("https://file/r.yaml", "https://env/r.yaml", "https://flag/r.yaml")),
    ("artifacts", "artifacts: /file", "/env", "/flag", ("/file", "/env", "/flag")),
]


@pytest.mark.parametrize(("field", "line", "env", "flag", "expected"), PRECEDENCE, ids=[p[0] for p in PRECEDENCE])
def test_precedence_file_then_environment_then_flags(
    tmp_path: Path, field: str, line: str, env: str, flag: Any, expected: tuple[Any, Any, Any]
) -> None:
    job = str(write_job(tmp_path, line + "\n"))
    (variable,) = [var for var, target in ENVIRONMENT.items() if target == field]
    from_file = resolve_job(job, {}, {})
    from_env = resolve_job(job, {variable: env}, {})
    from_flags = resolve_job(job, {variable: env}, {field: flag})
    assert (getattr(from_file, field), getattr(from_env, field), getattr(from_flags, field)) == expected


def test_flags_address_the_cluster_spec(tmp_path: Path) -> None:
    job = resolve_job(str(write_job(tmp_path)), {}, {"cluster.kubeconfig": "/k", "cluster.type": "kubeconfig"})
    assert (job.cluster.type, job.cluster.kubeconfig, job.cluster.name) == ("kubeconfig", "/k", "winsuite")


def test_unset_flags_do_not_override(tmp_path: Path) -> None:
    job = load_job(write_job(tmp_path, "parallelism: 2\n"))
    assert apply_overrides(job, {"parallelism": None}) == job


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"WINSUITE_NODE_OS": "macos"}, "environment variable WINSUITE_NODE_OS: node_os: got 'macos'; allowed: "
                                        "windows, linux"),
        ({"WINSUITE_PARALLELISM": "four"}, "environment variable WINSUITE_PARALLELISM: parallelism: expected a whole "
                                           "number >= 1, got 'four'"),
        ({"WINSUITE_FLAKE_ATTEMPTS": "0"}, "environment variable WINSUITE_FLAKE_ATTEMPTS: flake_attempts: expected "
                                           "a whole number >= 1, got 0"),
        ({"WINSUITE_TEST_TIMEOUT": "soon"}, "environment variable WINSUITE_TEST_TIMEOUT: test_timeout: invalid "
                                            "duration 'soon'"),
    ],
)
def test_bad_environment_values_name_the_variable(tmp_path: Path, environ: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_job(str(write_job(tmp_path)), environ, {})
    assert str(caught.value).startswith(message)


def test_bad_flag_values_are_validated_like_the_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"^flags: parallelism: expected a whole number >= 1, got 0$"):
        resolve_job(str(write_job(tmp_path)), {}, {"parallelism": 0})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45s", 45.0), ("15m", 900.0), ("1h30m", 5400.0), ("2h", 7200.0), ("1h0m5s", 3605.0), ("90", 90.0),
     ("1.5", 1.5), (" 5m ", 300.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "m", "1d", "15 minutes", "-5", "5m1h", "1.5m"])
def test_invalid_durations_say_what_is_allowed(text: str) -> None:
    with pytest.raises(UsageError, match=r"^timeouts\.test: invalid duration .*; use e\.g\. 45s, 15m, 1h30m$"):
        parse_duration(text, "timeouts.test")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [("sig-windows-parallel", "sig-windows-parallel.yaml"), ("embedded-linux.yaml", "embedded-linux.yaml")],
)
def test_jobs_are_found_by_name_under_jobs(ref: str, expected: str) -> None:
    assert resolve_job_path(ref) == jobs_dir() / expected


@pytest.mark.parametrize(("environ", "flags", "name", "cluster_type", "why"), [
    ({}, {}, "winsuite-embedded", ClusterType.EMBEDDED, "the default for the embedded cluster"),
    ({}, {"cluster.type": ClusterType.KIND}, "winsuite-kind", ClusterType.KIND, "the default for a kind cluster"),
    ({"WINSUITE_CLUSTER_TYPE": "kind"}, {}, "winsuite-kind", ClusterType.KIND, "the default for a kind cluster"),
    ({"WINSUITE_CLUSTER_TYPE": "kind"}, {"cluster.kubeconfig": "/k", "cluster.type": ClusterType.KUBECONFIG},
     "your-cluster", ClusterType.KUBECONFIG, "the default for a cluster given by --kubeconfig"),
    ({}, {"cluster.type": ClusterType.IN_CLUSTER}, "your-cluster", ClusterType.IN_CLUSTER,
     "the default for the cluster of --in-cluster-config"),
], ids=["embedded", "kind flag", "kind environment", "kubeconfig flag over environment", "in-cluster"])
def test_without_a_job_the_clusters_own_job_applies(environ: dict[str, str], flags: dict[str, Any], name: str,
                                                    cluster_type: ClusterType, why: str) -> None:
    job = resolve_job(None, environ, flags)
    assert (job.name, job.cluster.type, job.chosen) == (name, cluster_type, JobChoice.CLUSTER_DEFAULT)
    assert job.why == f"{why}; --job to choose another"


def test_the_job_of_a_cluster_you_bring_is_like_sig_windows_capz_job_on_upstreams_registries() -> None:
    job = resolve_job(None, {}, {"cluster.kubeconfig": "/k", "cluster.type": ClusterType.KUBECONFIG})
    capz = load_job(jobs_dir() / "sig-windows-parallel.yaml")
    assert (job.repo_list, job.engine, job.cluster.kubeconfig) == (None, EngineChoice.AUTO, "/k")
    assert (job.parallelism, job.flake_attempts, job.test_timeout, job.run_timeout) == (
        capz.parallelism, capz.flake_attempts, capz.test_timeout, capz.run_timeout)
    assert job.focus == capz.focus


def test_the_kind_job_is_the_embedded_job_on_kind() -> None:
    fields = ("source", "name", "description", "dashboard", "tab", "cluster")
    embedded, kind = (dataclasses.asdict(load_job(jobs_dir() / f"{name}.yaml")) for name in ("embedded", "kind"))
    assert {k: v for k, v in embedded.items() if k not in fields} == {k: v for k, v in kind.items() if k not in fields}


def test_a_named_job_and_flags_still_win_over_the_clusters_default() -> None:
    flags = {"cluster.kubeconfig": "/k", "cluster.type": ClusterType.KUBECONFIG, "parallelism": 8}
    named = resolve_job("embedded", {"WINSUITE_PARALLELISM": "3"}, flags)
    assert (named.name, named.chosen, named.why, named.parallelism) == ("winsuite-embedded", JobChoice.NAMED,
                                                                          "named by --job", 8)
    assert named.cluster.type == ClusterType.KUBECONFIG and named.repo_list  # the embedded job's repo list
    assert resolve_job(None, {"WINSUITE_PARALLELISM": "3"}, {**flags, "parallelism": None}).parallelism == 3


def test_a_context_without_a_kubeconfig_cluster_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"^--context picks a context of a kubeconfig, and the job's cluster is "
                                         r"embedded: give --kubeconfig FILE too"):
        resolve_job(None, {}, {"cluster.context": "prod"})
    assert resolve_job("sig-windows-parallel", {}, {"cluster.context": "prod"}).cluster.context == "prod"


def test_an_unknown_job_lists_the_known_ones() -> None:
    with pytest.raises(UsageError, match=r"job 'nightly' not found .*; known jobs: embedded, embedded-linux, "):
        resolve_job_path("nightly")
