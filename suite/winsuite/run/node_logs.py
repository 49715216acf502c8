"""Node logs of a run: the kubelet's, the container runtime's and kube-proxy's of every node that runs containers,
for the run's time window, through the kubelet's node log query (`/api/v1/nodes/<node>/proxy/logs/?query=…`,
GA in v1.36, on Linux and Windows nodes), into artifacts/nodes/<node>/. What could not be collected is said per
node, with the reason, in artifacts/nodes/<node>/collection.txt.

A service that logs to journald (Linux) or the event log (Windows) is queried for the window itself; one that
logs to a file under /var/log comes whole (the query takes no time options for files) and is cut to the window
here, by the klog timestamps of its lines.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Iterable
from pathlib import Path

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.k8s import retry
from winsuite.k8s.api_answer import answer_body

NODES_DIR = "nodes"
REPORT_FILE = "collection.txt"
QUERY_TIMEOUT = 60.0
FILE_OPTIONS_REFUSED = "options present and query resolved to log files"
NOT_FOUND = "log not found for"
NO_JOURNAL = "journal output not available"
MODES = ("on-failure", "always", "never")
# klog's header: Lmmdd hh:mm:ss.uuuuuu (the year is the run's).
KLOG_TIME = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})")
# containerd and other logfmt/RFC 3339 lines: time="2026-11-24T10:31:00.123Z" or a leading timestamp.
RFC3339_TIME = re.compile(r'(?:^|time=")(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))')


@dataclasses.dataclass(frozen=True)
class Collected:
    node: str
    written: list[str]  # files under artifacts/nodes/<node>/
    missing: list[str]  # "<service>: why"


def services_of(node: NodeFacts) -> list[str]:
    """kubelet, the node's container runtime (containerd, cri-o, …) and kube-proxy."""
    runtime = node.container_runtime.split("://", 1)[0] or "containerd"
    return ["kubelet", runtime, "kube-proxy"]


def in_window(text: str, since: datetime.datetime, until: datetime.datetime) -> str:
    """The lines of a file log within [since, until]; a line without a timestamp goes with the line before."""
    kept: list[str] = []
    keep = False
    for line in text.splitlines(keepends=True):
        stamp = _stamp(line, since.year)
        if stamp is not None:
            keep = since <= stamp <= until
        if keep:
            kept.append(line)
    return "".join(kept)


def _stamp(line: str, year: int) -> datetime.datetime | None:
    if m := KLOG_TIME.match(line):
        month, day, hour, minute, second, micro = (int(g) for g in m.groups())
        try:
            return datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=datetime.UTC)
        except ValueError:
            return None
    if m := RFC3339_TIME.search(line[:80]):
        try:
            return datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).astimezone(datetime.UTC)
        except ValueError:
            return None
    return None


def collect_service(api: client.ApiClient, node: str, service: str, since: datetime.datetime,
                    until: datetime.datetime) -> tuple[str | None, str]:
    """(the service's log lines of the window, "") or (None, why not)."""
    try:
        text = _get(api, node, service, since, until)
        from_file = FILE_OPTIONS_REFUSED in text
        if from_file:
            text = _get(api, node, service, None, None)
    except ApiException as err:
        return None, _api_reason(err)
    stripped = text.strip()
    if stripped == f"{NOT_FOUND} {service}":
        return None, f"the node has no journal unit and no /var/log file for {service}"
    if stripped == f"error: {NO_JOURNAL}":
        return None, "the node's journal is not available"
    return (in_window(text, since, until) if from_file else text), ""


def _get(api: client.ApiClient, node: str, service: str, since: datetime.datetime | None,
         until: datetime.datetime | None) -> str:
    """GET /api/v1/nodes/<node>/proxy/logs/?query=<service>[&sinceTime=…&untilTime=…]."""
    params: list[tuple[str, str]] = [("query", service)]
    if since is not None and until is not None:
        params += [("sinceTime", _rfc3339(since)), ("untilTime", _rfc3339(until))]
    # The generated client's node proxy call cannot pass query parameters through: serialize the request here.
    request = api.param_serialize("GET", "/api/v1/nodes/{name}/proxy/logs/", path_params={"name": node},
                                  query_params=params, header_params={"Accept": "*/*"},
                                  auth_settings=["BearerToken"])

    def get() -> bytes:
        response = api.call_api(*request, _request_timeout=QUERY_TIMEOUT)
        response.read()
        if not 200 <= response.status <= 299:
            raise ApiException(http_resp=response)
        return bytes(response.data)

    return retry.call(get).decode("utf-8", errors="replace")


def _api_reason(err: ApiException) -> str:
    body = answer_body(err).strip()
    if err.status == 403:
        return f"forbidden: the run's credentials may not use nodes/proxy ({body[:200]})"
    if err.status == 404 and "disabled" in body:
        return "the kubelet's node log query is disabled (enableSystemLogHandler/enableSystemLogQuery)"
    return f"the node log query answered {err.status} {err.reason}: {body[:200]}"


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(api: client.ApiClient, facts: ClusterFacts, artifacts: Path, since: float,
            until: float) -> list[Collected]:
    """Every node's logs of the window; simulated nodes are listed with why they have none."""
    start = datetime.datetime.fromtimestamp(since, datetime.UTC)
    end = datetime.datetime.fromtimestamp(until, datetime.UTC)
    results = []
    for node in facts.nodes:
        directory = artifacts / NODES_DIR / node.name
        directory.mkdir(parents=True, exist_ok=True)
        written, missing = [], []
        if node.simulated:
            missing.append("every service: a simulated (kwok) node has no kubelet, runtime or logs")
        else:
            for service in services_of(node):
                text, why = collect_service(api, node.name, service, start, end)
                if text is None:
                    missing.append(f"{service}: {why}")
                    continue
                (directory / f"{service}.log").write_text(text, encoding="utf-8")
                written.append(f"{service}.log")
        _write_report(directory, node, start, end, written, missing)
        results.append(Collected(node.name, written, missing))
    return results


def _write_report(directory: Path, node: NodeFacts, since: datetime.datetime, until: datetime.datetime,
                  written: Iterable[str], missing: Iterable[str]) -> None:
    lines = [f"node {node.name} ({node.os}{', simulated' if node.simulated else ''}), "
             f"window {_rfc3339(since)} .. {_rfc3339(until)}",
             *(f"collected: {name}" for name in written),
             *(f"not collected: {why}" for why in missing)]
    (directory / REPORT_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
