"""winsuite as users install it: the wheel in a fresh virtual environment, used from a directory of its own.

The wheel carries every file the CLI reads (plan, registry, pins, jobs, exclusion lists, image catalog, templates),
and its import names are its own: a test repository with `suite/` and `reports/` packages does not shadow them.
Needs PyPI (or pip's cache) for winsuite's dependencies, as any install does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT = 900


def clean_env() -> dict[str, str]:
    """The user's environment without what would point Python or winsuite back at the checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WINSUITE_HOME", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the checkout: setuptools' build/ directory must not outlive the test in the checkout
    (a stale one would put deleted modules into later wheels). The wait, once per module, is the copy and pip's build
    of the wheel in an isolated environment, with setuptools and wheel installed into it."""
    source = tmp_path_factory.mktemp("source") / "winsuite"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "_artifacts", "_dashboard", "*.egg-info", "__pycache__", ".*_cache"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
                    "-w", str(out), str(source)], check=True, timeout=INSTALL_TIMEOUT, env=clean_env())
    (built,) = out.glob("winsuite-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A fresh venv with the wheel (and its dependencies) installed; its bin/ directory. The wait, once per module,
    is the venv's creation and pip installing the wheel's dependencies, from PyPI or pip's cache."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    subprocess.run([str(env_dir / "bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    str(wheel)], check=True, timeout=INSTALL_TIMEOUT, env=clean_env())
    return env_dir / "bin"


@pytest.fixture
def users_repository(tmp_path: Path) -> Path:
    """A test repository of a user's own, with packages named like winsuite's folders."""
    for package in ("suite", "reports"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("raise ImportError('the user\\'s own package')\n")
    return tmp_path


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, check=False, env=clean_env())


def test_the_wheel_carries_the_data_and_only_its_own_import_names(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("winsuite-")}
    assert tops == {"winsuite", "winsuite_reports"}
    for required in ("winsuite/pins.yaml", "winsuite/registry.yaml", "winsuite/plan/adapted.yaml",
                     "winsuite/data/jobs/embedded.yaml", "winsuite/data/jobs/exclusions/will-never-work.yaml",
                     "winsuite/data/test_images/catalog.yaml", "winsuite/data/test_images/repo-lists/embedded.yaml",
                     "winsuite_reports/templates/index.html.j2", "winsuite/cases/adapted/test_pods.py"):
        assert required in names
    assert any(n.startswith("winsuite/data/jobs/upstream-names/") for n in names)


def test_plan_and_list_work_from_another_directory(installed: Path, users_repository: Path) -> None:
    plan = run([str(installed / "winsuite"), "plan"], users_repository)
    assert plan.returncode == 0, plan.stderr
    assert "covered" in plan.stdout and "Traceback" not in plan.stderr
    listed = run([str(installed / "winsuite"), "list"], users_repository)
    assert listed.returncode == 0, listed.stderr
    assert "[sig-node] Pods should get a host IP" in listed.stdout


def test_the_plugin_loads_by_name_in_a_repository_with_suite_and_reports_packages(
        installed: Path, users_repository: Path) -> None:
    done = run([str(installed / "python"), "-m", "pytest", "-p", "winsuite", "--help"], users_repository)
    assert done.returncode == 0, done.stderr
    assert "winsuite (Kubernetes SIG-Windows test plan)" in done.stdout and "--node-os" in done.stdout
