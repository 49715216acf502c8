"""winsuite's pytest plugin: wiring only (options, markers, and the plugins that do the work)."""

from __future__ import annotations

import atexit
import gc
import signal
import threading
from types import FrameType
from typing import Any

import pytest

from winsuite import timeline
from winsuite.authoring.naming import SPEC_MARKER
from winsuite.authoring.registry import load_registry
from winsuite.errors import UsageError
from winsuite.inputs.run_modes import Phase
from winsuite.plugin import fixtures
from winsuite.plugin import hookspecs
from winsuite.plugin.collection import Selection
from winsuite.plugin.flakes import FlakeAttempts
from winsuite.plugin.requirements import Requirements
from winsuite.plugin.results_writer import ResultsWriter
from winsuite.plugin.results_writer import plain_build
from winsuite.plugin.session import WORKER_INPUT_KEY
from winsuite.plugin.session import close_session
from winsuite.plugin.session import run_config
from winsuite.plugin.session import worker_input
from winsuite.plugin.timeouts import TestTimeouts
from winsuite.plugin.timing import Timing
from winsuite.policy import options
from winsuite_reports.conventions import junit_name

PLUGINS_KEY = pytest.StashKey[list[str]]()

# Options `winsuite run` passes to its pytest phases: the run, resolved, and which of its phases this is.
INTERNAL_OPTIONS = (
    options.Option("--run-file", "the resolved run (artifacts/run.json of a build, written by `winsuite run`): its "
                   "results are written into that build as tests finish", metavar="FILE"),
    options.Option("--phase", "run all tests, only the parallel-safe ones, or only [Serial]/[Disruptive]",
                   choices=tuple(Phase)),
    options.Option("--results-dir", "without --run-file: write JUnit, the event log and failed tests' diagnostics "
                   "here as tests finish (links relative to its parent directory)", metavar="DIR"),
)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("winsuite", "winsuite (Kubernetes SIG-Windows test plan)")
    options.add_to_argparse(group, options.RUN_OPTIONS + INTERNAL_OPTIONS)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{SPEC_MARKER}(spec): a winsuite test and its upstream-style name")
    registry = load_registry()
    for tag in registry.all_tags():
        meaning = registry.tags.get(tag.value, f"tests tagged {tag.render()}")
        config.addinivalue_line("markers", f"{tag.marker}: {tag.render()} {meaning}")
    plugins: dict[str, object] = {
        "winsuite-selection": Selection(lambda: run_config(config)),
        "winsuite-requirements": Requirements(),
        "winsuite-flakes": FlakeAttempts(lambda: run_config(config).job.flake_attempts),
        "winsuite-timeouts": TestTimeouts(lambda: run_config(config).job.test_timeout),
        "winsuite-fixtures": fixtures,
    }
    if timeline.enabled():
        plugins["winsuite-timing"] = Timing(config)
    writes_results = config.getoption("winsuite_run_file") or config.getoption("winsuite_results_dir")
    if writes_results and hasattr(config, "workerinput"):
        # A run's xdist worker exits when the controller lets it go, after it reported everything: the objects
        # it holds are frozen then, so the interpreter's last collection does not walk them (a third of a second
        # of the phase's end).
        atexit.register(gc.freeze)
    if writes_results and not hasattr(config, "workerinput"):  # only the controller writes results
        run = run_config(config)
        # A phase of `winsuite run` (--run-file) hands its rows to the run through its event log: the run's build
        # writes them. Plain pytest has a build of its own.
        build = None if config.getoption("winsuite_run_file") else plain_build(run.layout)
        plugins["winsuite-results"] = ResultsWriter(run.layout.artifacts, junit_name(run.phase.number), config, build)
        _interrupt_on_sigterm()
    for name, plugin in plugins.items():
        config.pluginmanager.register(plugin, name)
    config.stash[PLUGINS_KEY] = list(plugins)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: each worker gets the run the controller resolved, so no worker reads a job or repo list again."""
    config = node.config
    try:
        get = config.getoption
        in_use = get("winsuite_run_file") or get("winsuite_results_dir") or options.job_ref(get) or options.overrides(
            get)
    except UsageError as err:
        raise pytest.UsageError(str(err)) from err
    if in_use:
        node.workerinput[WORKER_INPUT_KEY] = worker_input(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    close_session(config)
    for name in config.stash.get(PLUGINS_KEY, []):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)


def _interrupt_on_sigterm() -> None:
    """SIGTERM ends the session like Ctrl-C, so results are still written, marked interrupted."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt("SIGTERM")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)
