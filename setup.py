"""Packaging glue pyproject.toml cannot express: two source roots, and the data folders installed inside the package.

`suite/winsuite/` is the package `winsuite` and `reports/winsuite_reports/` is `winsuite_reports` (the src layout:
each top-level folder is a source root, so a user's own `suite/` or `reports/` package never shadows the plugin).
The wheel also carries the data the CLI reads: `jobs/` and `test_images/` as `winsuite/data/`.
"""

from __future__ import annotations

from setuptools import find_packages
from setuptools import setup

SOURCE_ROOTS = ("suite", "reports")
DATA_PACKAGES = {"winsuite.data.jobs": "jobs", "winsuite.data.test_images": "test_images"}

setup(
    packages=[p for root in SOURCE_ROOTS for p in find_packages(root)] + list(DATA_PACKAGES),
    package_dir={"winsuite": "suite/winsuite", "winsuite_reports": "reports/winsuite_reports", **DATA_PACKAGES},
    package_data={
        "winsuite": ["*.yaml", "plan/*.yaml", "plan/*.md", "cases/README.md", "cluster/embedded/README.md",
                     "components/servicelb/*.go"],
        "winsuite_reports": ["templates/*"],
        "winsuite.data.jobs": ["*.yaml", "*.md", "exclusions/*", "upstream-names/*"],
        "winsuite.data.test_images": ["*.yaml", "*.md", "repo-lists/*"],
    },
)
