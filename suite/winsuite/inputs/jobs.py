"""Job specs (jobs/*.yaml): one strictly parsed document per job; precedence file < environment < flags."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import TypeVar

from winsuite.authoring.targeting import DEFAULT_WINDOWS_TAINT
from winsuite.authoring.targeting import NodeOS
from winsuite.authoring.targeting import Taint
from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.errors import shown
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.inputs import strict_yaml
from winsuite.inputs.cluster_spec import MADE_CLUSTER_TYPES
from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.engines import EngineChoice
from winsuite.inputs.label_filter import LabelFilterError
from winsuite.inputs.label_filter import parse_label_filter
from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2
from winsuite.paths import jobs_dir

API_VERSION = "winsuite.io/v1alpha1"
KIND = "Job"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# Without --job, the job of the cluster the run targets: a made cluster's own, or the job for a cluster the user
# brings (upstream's registries, engine auto, SIG Windows' capz parallelism and timeouts), named from that cluster.
DEFAULT_JOBS: dict[ClusterType, str] = {
    ClusterType.EMBEDDED: "embedded.yaml",
    ClusterType.KIND: "kind.yaml",
    ClusterType.KUBECONFIG: "your-cluster.yaml",
    ClusterType.IN_CLUSTER: "your-cluster.yaml",
}
# The cluster each default job is for, as a run's header names it.
_DEFAULT_FOR: dict[ClusterType, str] = {
    ClusterType.EMBEDDED: "the embedded cluster",
    ClusterType.KIND: "a kind cluster",
    ClusterType.KUBECONFIG: "a cluster given by --kubeconfig",
    ClusterType.IN_CLUSTER: "the cluster of --in-cluster-config",
}

_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


MAX_DURATION = 30 * 24 * 3600.0  # seconds; longer is a typo (and past what timers and deadlines can hold)


def parse_duration(text: str, where: str = "duration") -> float:
    """'90m', '1h30m', '45s' or a number of seconds -> seconds (at most MAX_DURATION)."""
    text = str(text).strip()
    if len(text) > 40:
        raise UsageError(f"{where}: invalid duration {text[:40]!r}…; use e.g. 45s, 15m, 1h30m")
    if re.fullmatch(r"\d+(\.\d+)?", text):
        seconds = float(text)
    else:
        m = _DURATION.match(text)
        if not text or m is None or not any(m.groups()):
            raise UsageError(f"{where}: invalid duration {text!r}; use e.g. 45s, 15m, 1h30m")
        hours, minutes, secs = (int(g or 0) for g in m.groups())
        seconds = float(hours * 3600 + minutes * 60 + secs)
    if seconds > MAX_DURATION:
        raise UsageError(f"{where}: duration {text!r} is longer than {MAX_DURATION / 86400:.0f} days")
    return seconds


class JobChoice(enum.StrEnum):
    """Why a run's job is the one that applies (its header says so)."""

    NAMED = "named"  # --job (or a job file read by its path)
    CLUSTER_DEFAULT = "cluster-default"  # no --job: the default job of the cluster type the run targets
    RERUN = "rerun"  # --rerun-failed: the job of the build it runs again


@dataclasses.dataclass(frozen=True)
class JobSpec:
    name: str
    source: str = "<flags>"
    chosen: JobChoice = JobChoice.NAMED
    description: str = ""
    dashboard: str = "winsuite"
    tab: str = ""
    interval: float | None = None
    release_blocking: bool = False
    cluster: ClusterSpec = dataclasses.field(default_factory=ClusterSpec)
    node_os: NodeOS = NodeOS.WINDOWS
    repo_list: str | None = None
    exclusions: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    parallelism: int = 4
    flake_attempts: int = 1
    test_timeout: float = 900.0
    run_timeout: float = 5400.0
    windows_taint: Taint | None = DEFAULT_WINDOWS_TAINT
    runtime_class: str | None = None
    cni: str | None = None
    artifacts: str | None = None
    run_excluded: bool = False
    engine: EngineChoice = EngineChoice.AUTO
    label_filter: str = ""
    prepull: bool = False  # pull the selection's images on the nodes before the tests
    fail_on_flaky: bool = False  # a test that passed only on a retry fails the run (Kubernetes' no-flake policy)
    e2e_test: str | None = None  # an e2e.test binary to use (default: built for the server's version)

    @property
    def tab_name(self) -> str:
        return self.tab or self.name

    @property
    def why(self) -> str:
        """Why this job applies, in a few words for the run's header."""
        if self.chosen is JobChoice.CLUSTER_DEFAULT:
            return f"the default for {_DEFAULT_FOR[self.cluster.type]}; --job to choose another"
        return "the job of the build it reruns" if self.chosen is JobChoice.RERUN else "named by --job"


# --- strict reading ---------------------------------------------------------------------------------
Reader = Callable[[Any, str, str], Any]
StrEnumT = TypeVar("StrEnumT", bound=enum.StrEnum)


def _string(value: Any, path: str, field: str) -> str:
    if not isinstance(value, str):
        raise DataError(path, field, f"expected a string, got {shown(value)}")
    return value


def _path(value: Any, path: str, field: str) -> str:
    text = _string(value, path, field)
    if not text or "\0" in text:
        raise DataError(path, field, "expected a file path (non-empty, no NUL)")
    return text


def _path_list(value: Any, path: str, field: str) -> tuple[str, ...]:
    paths = _string_list(value, path, field)
    for i, item in enumerate(paths):
        _path(item, path, f"{field}[{i}]")
    return paths


def _job_name(value: Any, path: str, field: str) -> str:
    """A job's name is a directory of the results root (prow's layout): no separators, no dot-dot."""
    text = _string(value, path, field)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", text):
        raise DataError(path, field, f"expected a job name of letters, digits, '.', '_' and '-', got {shown(text)}")
    return text


def _boolean(value: Any, path: str, field: str) -> bool:
    if not isinstance(value, bool):
        raise DataError(path, field, f"expected true or false, got {shown(value)}")
    return value


def _positive_int(value: Any, path: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(path, field, f"expected a whole number >= 1, got {shown(value)}")
    return value


def _duration(value: Any, path: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):  # str() of a list could never end
        raise DataError(path, field, f"invalid duration {shown(value)}; use e.g. 45s, 15m, 1h30m")
    try:
        return parse_duration(str(value), field)
    except UsageError:
        raise DataError(path, field, f"invalid duration {shown(value)}; use e.g. 45s, 15m, 1h30m") from None


def _string_list(value: Any, path: str, field: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(path, field, "expected a list of strings")
    return tuple(value)


def _regex_list(value: Any, path: str, field: str) -> tuple[str, ...]:
    patterns = _string_list(value, path, field)
    for i, pattern in enumerate(patterns):
        try:
            compile_re2(pattern)
        except RegexError as err:
            raise DataError(path, f"{field}[{i}]", f"{shown(pattern)}: {err.problem} (offset {err.pos})") from None
    return patterns


def _label_filter(value: Any, path: str, field: str) -> str:
    text = _string(value, path, field)
    try:
        parse_label_filter(text)
    except LabelFilterError as err:
        raise DataError(path, field, str(err)) from None
    return text


def _one_of(allowed: tuple[str, ...]) -> Reader:
    def read(value: Any, path: str, field: str) -> str:
        if value not in allowed:
            raise DataError(path, field, f"got {shown(value)}; allowed: {', '.join(allowed)}")
        return str(value)

    return read


def _member_of(members: type[StrEnumT]) -> Callable[[Any, str, str], StrEnumT]:
    def read(value: Any, path: str, field: str) -> StrEnumT:
        if not isinstance(value, str) or value not in members.__members__.values():
            raise DataError(path, field, f"got {shown(value)}; allowed: {', '.join(members)}")
        return members(value)

    return read


def _mapping(value: Any, path: str, field: str, readers: Mapping[str, Reader]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(path, field, "expected a mapping")
    unknown = sorted(str(key) for key in set(value) - set(readers))
    if unknown:
        raise DataError(path, f"{field}.{unknown[0]}" if field else unknown[0],
                        f"unknown key; known keys: {', '.join(readers)}")
    return {key: readers[key](v, path, f"{field}.{key}" if field else key) for key, v in value.items()}


def _cluster(value: Any, path: str, field: str) -> ClusterSpec:
    raw = _mapping(value, path, field, {
        "type": _member_of(ClusterType), "name": _string, "kubeconfig": _path,
        "context": _string, "realNode": _boolean, "kindImage": _string,
    })
    if "realNode" in raw:
        raw["real_node"] = raw.pop("realNode")
    if "kindImage" in raw:
        raw["kind_image"] = raw.pop("kindImage")
    return ClusterSpec(**raw)


def _taint(value: Any, path: str, field: str) -> Taint | None:
    if value is None:
        return None
    raw = _mapping(value, path, field, {"key": _string, "value": _string, "effect": _one_of(TAINT_EFFECTS)})
    missing = {"key", "effect"} - set(raw)
    if missing:
        raise DataError(path, f"{field}.{sorted(missing)[0]}", "required")
    return Taint(raw["key"], raw.get("value", ""), raw["effect"])


def _timeouts(value: Any, path: str, field: str) -> dict[str, float]:
    return _mapping(value, path, field, {"test": _duration, "run": _duration})


def _placement(value: Any, path: str, field: str) -> dict[str, Any]:
    return _mapping(value, path, field, {"windowsTaint": _taint, "runtimeClassName": _string})


# Top-level keys: reader, and the JobSpec field(s) they fill.
_TOP_LEVEL: dict[str, Reader] = {
    "apiVersion": _string, "kind": _string, "name": _job_name, "description": _string,
    "dashboard": _string, "tab": _string, "interval": _duration, "releaseBlocking": _boolean,
    "cluster": _cluster, "nodeOS": _member_of(NodeOS), "repoList": _path, "exclusions": _path_list,
    "focus": _regex_list, "skip": _regex_list, "parallelism": _positive_int,
    "flakeAttempts": _positive_int, "timeouts": _timeouts, "placement": _placement, "cni": _string,
    "artifacts": _path, "runExcluded": _boolean, "engine": _member_of(EngineChoice), "e2eTest": _path,
    "labelFilter": _label_filter, "prepull": _boolean, "failOnFlaky": _boolean,
}
_FIELD_OF = {
    "releaseBlocking": "release_blocking", "nodeOS": "node_os", "repoList": "repo_list",
    "flakeAttempts": "flake_attempts", "runExcluded": "run_excluded", "e2eTest": "e2e_test",
    "labelFilter": "label_filter", "failOnFlaky": "fail_on_flaky",
}


def resolve_job_path(name_or_path: str) -> Path:
    """A job given as a path, or as a name under jobs/ ('sig-windows-parallel')."""
    path = Path(name_or_path)
    if probe(path, "job") is not Found.MISSING:
        return path
    for candidate in (jobs_dir() / name_or_path, jobs_dir() / f"{name_or_path}.yaml"):
        if probe(candidate, "job") is not Found.MISSING:
            return candidate
    known = ", ".join(sorted(p.stem for p in jobs_dir().glob("*.yaml")))
    raise UsageError(f"job {name_or_path!r} not found (as a path or under {jobs_dir()}); known jobs: {known}")


def load_job(path: Path) -> JobSpec:
    source = str(path)
    raw = strict_yaml.read(path, "job")
    values = _mapping(raw, source, "", _TOP_LEVEL)
    if values.get("apiVersion") != API_VERSION or values.get("kind") != KIND:
        raise DataError(source, "apiVersion/kind", f"expected apiVersion: {API_VERSION} and kind: {KIND}")
    if "name" not in values:
        raise DataError(source, "name", "required")
    return _job_from_values(values, source, base=path.parent)


def _job_from_values(values: dict[str, Any], source: str, base: Path) -> JobSpec:
    fields: dict[str, Any] = {"source": source}
    for key, value in values.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "timeouts":
            fields.update({f"{k}_timeout": v for k, v in value.items()})
        elif key == "placement":
            if "windowsTaint" in value:
                fields["windows_taint"] = value["windowsTaint"]
            if "runtimeClassName" in value:
                fields["runtime_class"] = value["runtimeClassName"]
        else:
            fields[_FIELD_OF.get(key, key)] = value
    # Paths in a job file are relative to the file, so jobs can be moved together with their lists.
    if "repo_list" in fields and not fields["repo_list"].startswith(("http://", "https://")):
        fields["repo_list"] = str((base / fields["repo_list"]).resolve())
    if "exclusions" in fields:
        fields["exclusions"] = tuple(str((base / p).resolve()) for p in fields["exclusions"])
    if "e2e_test" in fields:
        fields["e2e_test"] = str(base / Path(fields["e2e_test"]).expanduser())
    if fields.get("cluster") and fields["cluster"].kubeconfig:
        kubeconfig = Path(fields["cluster"].kubeconfig).expanduser()
        fields["cluster"] = dataclasses.replace(fields["cluster"], kubeconfig=str(base / kubeconfig))
    return JobSpec(**fields)


# --- environment and flags ------------------------------------------------------------------------------
# Environment variables that feed job fields (documented next to each field in docs/flags-and-job-fields.md).
ENVIRONMENT: dict[str, str] = {
    "KUBE_TEST_REPO_LIST": "repo_list",
    "WINSUITE_NODE_OS": "node_os",
    "WINSUITE_PARALLELISM": "parallelism",
    "WINSUITE_FLAKE_ATTEMPTS": "flake_attempts",
    "WINSUITE_TEST_TIMEOUT": "test_timeout",
    "WINSUITE_RUN_TIMEOUT": "run_timeout",
    "ARTIFACTS": "artifacts",  # what prow sets for a job's artifacts directory
    "WINSUITE_ENGINE": "engine",
    "WINSUITE_E2E_TEST": "e2e_test",
    "WINSUITE_CLUSTER_TYPE": "cluster.type",
}


def _coerce(field: str, value: Any, where: str) -> Any:
    """Validate one override the same way the job file is validated."""
    if field == "node_os":
        return _member_of(NodeOS)(value, where, field)
    if field == "engine":
        return _member_of(EngineChoice)(value, where, field)
    if field == "cluster.type":
        return ClusterType(_one_of(MADE_CLUSTER_TYPES)(value, where, field))
    if field == "label_filter":
        return _label_filter(value, where, "--label-filter")
    if field in ("parallelism", "flake_attempts"):
        try:
            return _positive_int(int(value), where, field)
        except (TypeError, ValueError):
            raise DataError(where, field, f"expected a whole number >= 1, got {shown(value)}") from None
    if field in ("test_timeout", "run_timeout"):
        return value if isinstance(value, float) else parse_duration(str(value), f"{where}: {field}")
    return value


def overrides_from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    return {
        field: _coerce(field, environ[var], f"environment variable {var}")
        for var, field in ENVIRONMENT.items()
        if environ.get(var)
    }


def apply_overrides(job: JobSpec, overrides: Mapping[str, Any], where: str = "flags") -> JobSpec:
    """A copy of `job` with the given fields replaced; cluster.* keys address the cluster spec."""
    fields: dict[str, Any] = {}
    cluster: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue
        if key.startswith("cluster."):
            cluster[key.removeprefix("cluster.")] = value
        else:
            fields[key] = _coerce(key, value, where)
    if cluster:
        fields["cluster"] = dataclasses.replace(job.cluster, **cluster)
    return dataclasses.replace(job, **fields)


def resolve_job(
    job_ref: str | None, environ: Mapping[str, str], flags: Mapping[str, Any]
) -> JobSpec:
    """The job to run: the file (default: the one of the cluster type the environment and flags target, embedded
    when they name none), then the environment, then flags."""
    from_env = overrides_from_env(environ)
    if job_ref is not None:
        job = load_job(resolve_job_path(job_ref))
    else:
        cluster_type = flags.get("cluster.type") or from_env.get("cluster.type") or ClusterType.EMBEDDED
        job = dataclasses.replace(load_job(jobs_dir() / DEFAULT_JOBS[cluster_type]), chosen=JobChoice.CLUSTER_DEFAULT)
    job = apply_overrides(apply_overrides(job, from_env, "environment"), flags, "flags")
    if flags.get("cluster.context") and job.cluster.type != ClusterType.KUBECONFIG:
        raise UsageError(f"--context picks a context of a kubeconfig, and the job's cluster is {job.cluster.type}: "
                         "give --kubeconfig FILE too (or a job whose cluster.type is kubeconfig)")
    return job
