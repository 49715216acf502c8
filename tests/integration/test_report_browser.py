"""The dashboard in a real browser: headless Chromium opens it from disk, draws and filters the grid, and a
hostile test name stays text. Chromium is driven over its DevTools pipe (stdlib only, no network at all).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

pytestmark = pytest.mark.browser

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
    "--window-size=1400,1000",
)
HOSTILE = '[sig-windows] <img src=x onerror="window.pwned=1"><script>window.pwned=2</script> [Serial]'
DEADLINE = 30.0
# Chromium reads commands on fd 3 and answers on fd 4. This puts our pipe ends there before it starts:
# both are copied to fresh descriptors first, so neither can be overwritten by the other's dup2, and
# marked inheritable explicitly because dup2 onto the same number changes nothing.
LAUNCHER = (
    "import os, sys\n"
    "fresh = [os.dup(int(fd)) for fd in sys.argv[1:3]]\n"
    "for target, fd in zip((3, 4), fresh):\n"
    "    os.dup2(fd, target)\n"
    "    os.set_inheritable(target, True)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


class DevTools:
    """A minimal Chrome DevTools Protocol client over --remote-debugging-pipe (fd 3 in, fd 4 out)."""

    def __init__(self, process: subprocess.Popen[bytes], send_fd: int, receive_fd: int) -> None:
        self.process, self.send_fd, self.receive_fd = process, send_fd, receive_fd
        self.next_id = 0
        self.buffer = b""
        self.session = ""

    def call(self, method: str, **params: object) -> dict[str, object]:
        self.next_id += 1
        message: dict[str, object] = {"id": self.next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.send_fd, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise AssertionError(f"{method} failed: {reply['error']}")
                result = reply.get("result", {})
                assert isinstance(result, dict)
                return result

    def evaluate(self, expression: str) -> object:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        value = result["result"]
        assert isinstance(value, dict), result
        return value.get("value")

    def wait_for(self, expression: str) -> object:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"waited {DEADLINE:.0f} s for {expression}")

    def open(self, url: str) -> None:
        target = self.call("Target.createTarget", url="about:blank")
        attached = self.call("Target.attachToTarget", targetId=target["targetId"], flatten=True)
        self.session = str(attached["sessionId"])
        self.call("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def _receive(self) -> dict[str, object]:
        deadline = time.monotonic() + DEADLINE
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.receive_fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self.receive_fd, 1 << 20) if ready else b""
            if not chunk:
                raise AssertionError(f"chromium stopped answering (exit code {self.process.poll()})")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        decoded = json.loads(message)
        assert isinstance(decoded, dict)
        return decoded


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("needs Debian's chromium (apt-get install -y chromium)")
    to_browser, from_browser = os.pipe(), os.pipe()
    args = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", "about:blank"]
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(to_browser[0]), str(from_browser[1]), *args],
        pass_fds=(to_browser[0], from_browser[1]),
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "chromium.log").open("wb"),
    )
    os.close(to_browser[0])
    os.close(from_browser[1])
    devtools = DevTools(process, to_browser[1], from_browser[0])
    try:
        yield devtools
    finally:
        try:
            devtools.session = ""
            devtools.call("Browser.close")
            process.wait(timeout=10)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        os.close(to_browser[1])
        os.close(from_browser[0])


@pytest.fixture
def dashboard(tmp_path: Path) -> Path:
    rows = {
        HOSTILE: "KPPPPF",
        "[sig-network] DNS should resolve the cluster's services [Conformance]": "PPFPPP",
        "[sig-node] Pods should be submitted and removed [Conformance]": "PPPPPP",
        "[sig-storage] EmptyDir volumes should support shared volumes [LinuxOnly]": "SSSSSS",
    }
    meta = {"release-blocking": True, "kubernetes-version": "v1.36.3", "windows-builds": "10.0.20348"}
    write_job(tmp_path / "results", "ci-windows", rows, metadata=meta)
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    return write_dashboard(report, tmp_path / "dashboard").parent


def test_the_grid_draws_filters_and_keeps_a_hostile_name_as_text(
    browser: DevTools, dashboard: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    browser.open((dashboard / "jobs" / "ci-windows" / "grid.html").as_uri())
    rows = "#grid tbody tr:not(.overall)"
    assert browser.wait_for(f"document.querySelectorAll('{rows}').length") == 4
    size = browser.evaluate("JSON.stringify(document.getElementById('grid').getBoundingClientRect())")
    box = json.loads(str(size))
    assert box["width"] > 100
    assert box["height"] > 100
    assert browser.evaluate("document.querySelectorAll('#grid td.sK').length") == 1

    names = browser.evaluate(f"[...document.querySelectorAll('{rows} th.name')].map(th => th.textContent)")
    assert isinstance(names, list)
    assert HOSTILE in names
    assert browser.evaluate("window.pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('body img, #grid script').length") == 0

    visible = f"[...document.querySelectorAll('{rows}')].filter(tr => !tr.hidden).length"
    filter_by = (
        "(() => {{ const box = document.getElementById('filter'); box.value = {!s};"
        " box.dispatchEvent(new Event('input')); }})()"
    )
    browser.evaluate(filter_by.format(json.dumps("dns")))
    assert browser.evaluate(visible) == 1
    assert browser.evaluate("document.getElementById('shown').textContent") == "1 of 4 tests"
    browser.evaluate(filter_by.format(json.dumps("")))
    assert browser.evaluate(visible) == 4

    screenshot = base64.b64decode(str(browser.call("Page.captureScreenshot", format="png")["data"]))
    assert screenshot.startswith(b"\x89PNG")
    (tmp_path / "report-browser.png").write_bytes(screenshot)
    published = request.config.rootpath / "_artifacts" / "report-browser"
    published.mkdir(parents=True, exist_ok=True)
    (published / "grid.png").write_bytes(screenshot)


def test_the_index_shows_the_hostile_name_as_text_and_runs_nothing(
    browser: DevTools, dashboard: Path
) -> None:
    browser.open((dashboard / "index.html").as_uri())
    assert browser.evaluate("document.querySelector('.verdict h1').textContent") == "NOT READY"
    assert browser.evaluate("document.body.textContent.includes(" + json.dumps(HOSTILE) + ")")
    assert browser.evaluate("window.pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('img').length") == 0


@pytest.mark.parametrize("count", [1, 500])
def test_the_grid_header_is_compact_and_rows_show_their_engine(
    browser: DevTools, tmp_path: Path, request: pytest.FixtureRequest, count: int
) -> None:
    """The build header takes one short rotated row; versions and runtime are runs of equal values."""
    rows = {"[sig-node] Pods should be submitted and removed [Conformance]": "P" * count,
            "[sig-windows] Services should be able to create a functioning NodePort service for Windows": "F" * count}
    properties = {name: {"engine": engine} for name, engine in zip(rows, ("native", "upstream"), strict=True)}
    meta = {"kubernetes-version": "v1.36.3", "windows-builds": "10.0.17763,10.0.20348",
            "container-runtime": "containerd://1.7.20", "node-logs": "artifacts/nodes/"}
    write_job(tmp_path / "results", "ci-windows", rows, metadata=meta, properties=properties)
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    page = write_dashboard(report, tmp_path / "dashboard").parent / "jobs" / "ci-windows" / "grid.html"
    browser.open(page.as_uri())
    assert browser.wait_for("document.querySelectorAll('#grid tbody tr:not(.overall)').length") == 2
    height = browser.evaluate("document.querySelector('#grid thead').getBoundingClientRect().height")
    assert isinstance(height, int | float) and height <= 170, f"the header is {height}px high"
    links = browser.evaluate("[...document.querySelectorAll('#grid th.logs a')].map(a => a.href)")
    assert isinstance(links, list) and len(links) == min(count, 50)
    assert all(str(link).endswith("/artifacts/nodes/") for link in links)
    runs = browser.evaluate("[...document.querySelectorAll('#grid thead th.run')].map(th => th.textContent)")
    assert runs == ["v1.36.3", "10.0.17763,10.0.20348", "containerd://1.7.20"], runs
    engines = browser.evaluate("[...document.querySelectorAll('#grid th.name')].map(th => th.dataset.engine || '')")
    assert engines == ["", "native", "upstream"]
    by_engine = ("(() => { const s = document.getElementById('filter-engine'); s.value = 'upstream';"
                 " s.dispatchEvent(new Event('input')); })()")
    browser.evaluate(by_engine)
    assert browser.evaluate("document.getElementById('shown').textContent") == "1 of 2 tests"
    screenshot = base64.b64decode(str(browser.call("Page.captureScreenshot", format="png")["data"]))
    published = request.config.rootpath / "_artifacts" / "report-browser"
    published.mkdir(parents=True, exist_ok=True)
    (published / f"grid-header-{count}-builds.png").write_bytes(screenshot)


def test_the_category_view_shows_categories_and_cases(
    browser: DevTools, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rows = {"[sig-node] Pods should get a host IP": "PPPF", "[sig-node] Pods should support retrieving logs": "PPPP",
            "[sig-windows] Services should be able to create a functioning NodePort service": "SSSS"}
    case = {"category": "Core.Pods", "ops-readiness-case": "Ability to schedule a pod and read its logs"}
    properties = {name: case for name in list(rows)[:2]}
    properties[list(rows)[2]] = {"category": "Core.Network"}
    write_job(tmp_path / "results", "ci-windows", rows, properties=properties)
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    page = write_dashboard(report, tmp_path / "dashboard").parent / "jobs" / "ci-windows" / "categories.html"
    browser.open(page.as_uri())
    assert browser.wait_for("document.querySelectorAll('table.cases').length") == 2
    cases = browser.evaluate("[...document.querySelectorAll('table.cases td:first-child')].map(td => td.textContent)")
    assert cases == ["[sig-windows] Services should be able to create a functioning NodePort service",
                     "Ability to schedule a pod and read its logs (2 tests)"]
    assert browser.evaluate("document.querySelectorAll('table.cases td.history span').length") == 8
    screenshot = base64.b64decode(str(browser.call("Page.captureScreenshot", format="png")["data"]))
    published = request.config.rootpath / "_artifacts" / "report-browser"
    published.mkdir(parents=True, exist_ok=True)
    (published / "categories.png").write_bytes(screenshot)


def test_a_failed_cell_shows_its_class_and_every_cell_its_evidence_and_nodes(
    browser: DevTools, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The grid's script: class letters on failed cells, each cell's detail (message, evidence, nodes), a flaky cell
    still purple, the failures per class of each build, and a failed row's link to its cluster."""
    pull, flaky = "[sig-windows] pulls its image", "[sig-node] passes on a retry"
    rows = {pull: "FP", flaky: "KP", "[sig-node] green": "PP"}
    nodes = "win-0 (windows, 10.0.20348, runtime containerd://1.7.24)"
    properties = {
        pull: {"failure-class": "infrastructure", "failure-evidence": "Failed: ErrImagePull on pod e2e-1a2b/agnhost",
               "ran-on": nodes},
        flaky: {"failure-class": "infrastructure", "ran-on": nodes},
        "[sig-node] green": {"ran-on": nodes},
    }
    write_job(tmp_path / "results", "ci-windows", rows, properties=properties)
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    page = write_dashboard(report, tmp_path / "dashboard").parent / "jobs" / "ci-windows" / "grid.html"
    browser.open(page.as_uri())
    assert browser.wait_for("document.querySelectorAll('#grid tbody tr:not(.overall)').length") == 3
    cell = "document.querySelector('#grid td.sF.c-infrastructure')"
    assert browser.evaluate(f"{cell}.textContent") == "I"
    detail = str(browser.evaluate(f"{cell}.title"))
    assert "evidence: Failed: ErrImagePull on pod e2e-1a2b/agnhost" in detail and f"ran on: {nodes}" in detail
    assert browser.evaluate("document.querySelectorAll('#grid td.sK.c-infrastructure').length") == 0
    assert browser.evaluate("document.querySelector('#grid td.sK').textContent") == "1/2"
    passes = browser.evaluate(
        "[...document.querySelectorAll('#grid tbody tr:not(.overall) td.sP')].map(td => td.title)")
    assert passes == [f"ran on: {nodes}"] * 4
    header = "document.querySelector('#grid thead th.failures')"
    assert browser.evaluate(f"{header}.textContent") == "1I"
    assert str(browser.evaluate(f"{header}.title")).endswith("infrastructure 1 · flaky 1")
    link = str(browser.evaluate("document.querySelector('#grid th.name a.cluster').href"))
    anchor = link.partition("#")[2]
    assert link.startswith((page.parent / "failures.html").as_uri()) and anchor
    browser.open(link)
    assert browser.wait_for(f"document.getElementById({json.dumps(anchor)}) !== null")
    screenshot = base64.b64decode(str(browser.call("Page.captureScreenshot", format="png")["data"]))
    published = request.config.rootpath / "_artifacts" / "report-browser"
    published.mkdir(parents=True, exist_ok=True)
    (published / "failures.png").write_bytes(screenshot)
