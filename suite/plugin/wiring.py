"""winsuite's pytest plugin: wiring only (options, markers, and the plugins that do the work)."""

from __future__ import annotations

import atexit
import gc
import signal
import threading
from pathlib import Path
from types import FrameType

import pytest

from winsuite import timeline
from winsuite.authoring.naming import SPEC_MARKER
from winsuite.authoring.registry import load_registry
from winsuite.plugin import fixtures
from winsuite.plugin import hookspecs
from winsuite.plugin.collection import Selection
from winsuite.plugin.flakes import FlakeAttempts
from winsuite.plugin.requirements import Requirements
from winsuite.plugin.results_writer import ResultsWriter
from winsuite.plugin.session import close_session
from winsuite.plugin.session import run_config
from winsuite.plugin.timeouts import TestTimeouts
from winsuite.plugin.timing import Timing
from winsuite.policy import options
from winsuite.policy.run_config import PHASES

PLUGINS_KEY = pytest.StashKey[list[str]]()

# Options only the runner passes to its pytest phases.
INTERNAL_OPTIONS = (
    options.Option("--run-id", "label of this run's namespaces (set by `winsuite run`)"),
    options.Option("--phase", "run all tests, only the parallel-safe ones, or only [Serial]/[Disruptive]",
                   choices=PHASES),
    options.Option("--discovery", "cluster facts written by `winsuite run` (skips discovering again)",
                   metavar="FILE"),
    options.Option("--results-dir", "write JUnit and diagnostics here as tests finish", metavar="DIR"),
    options.Option("--diagnostics-dir", "write failed tests' diagnostics here (default: --results-dir)",
                   metavar="DIR"),
    options.Option("--build-dir", "the prow build directory that diagnostics links are relative to "
                   "(default: the parent of --diagnostics-dir)", metavar="DIR"),
    options.Option("--junit-name", "JUnit file name in --results-dir (default junit_01.xml)"),
    options.Option("--durations-file", "earlier durations of the tests: the longest run first", metavar="FILE"),
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
    results_dir = config.getoption("winsuite_results_dir")
    if results_dir and hasattr(config, "workerinput"):
        # A run's xdist worker exits when the controller lets it go, after it reported everything: the objects
        # it holds are frozen then, so the interpreter's last collection does not walk them (a third of a second
        # of the phase's end).
        atexit.register(gc.freeze)
    if results_dir and not hasattr(config, "workerinput"):  # only the controller writes results
        junit_name = config.getoption("winsuite_junit_name") or "junit_01.xml"
        plugins["winsuite-results"] = ResultsWriter(Path(results_dir), junit_name, config)
        _interrupt_on_sigterm()
    for name, plugin in plugins.items():
        config.pluginmanager.register(plugin, name)
    config.stash[PLUGINS_KEY] = list(plugins)


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
