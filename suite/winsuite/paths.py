"""Where winsuite's data lives: `jobs/` and `test_images/` (checkout or wheel), and the package's own data."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CASES_PACKAGE = "winsuite.cases"  # winsuite's own tests, the catalog `winsuite run` runs by default
# An installed wheel carries jobs/ and test_images/ under winsuite/data/ (setup.py); a checkout has them at its top,
# beside the source root suite/ that holds this package.
INSTALLED_DATA_DIR = PACKAGE_DIR / "data"
RESULTS_ROOT = "_artifacts"  # the prow layout's root when a command is given none (in the working directory)
DASHBOARD_DIR = "_dashboard"  # a run's dashboard: in the results root it was given, beside the default one


def project_root() -> Path:
    """The directory that holds `jobs/` and `test_images/` (override: WINSUITE_HOME)."""
    override = os.environ.get("WINSUITE_HOME")
    if override:
        return Path(override).resolve()
    return INSTALLED_DATA_DIR if INSTALLED_DATA_DIR.is_dir() else PACKAGE_DIR.parents[1]


def jobs_dir() -> Path:
    return project_root() / "jobs"


def test_images_dir() -> Path:
    return project_root() / "test_images"


def plan_dir() -> Path:
    return PACKAGE_DIR / "plan"


def cache_dir() -> Path:
    """winsuite's cache (built binaries, images), shared by every install; override: WINSUITE_CACHE_DIR."""
    override = os.environ.get("WINSUITE_CACHE_DIR")
    if override:
        return Path(override).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "winsuite"


def upstream_names_file(kubernetes_version: str) -> Path:
    """`e2e.test --list-tests` of a Kubernetes version, kept so lists can be checked without the binary."""
    return jobs_dir() / "upstream-names" / f"{kubernetes_version}.txt.gz"
