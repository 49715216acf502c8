"""Packaging glue pyproject.toml cannot express: the repository's folders installed under the project's own names.

The checkout keeps `suite/` and `reports/`; what is installed is `winsuite` and `winsuite_reports`, so a user's own
`suite/` or `reports/` folder (a test repository often has them) can never shadow the plugin. The wheel also
carries the data the CLI reads: `jobs/` and `test_images/` as `winsuite/data/`.
"""

from __future__ import annotations

from setuptools import find_packages
from setuptools import setup

IMPORT_NAMES = {"suite": "winsuite", "reports": "winsuite_reports"}
DATA_PACKAGES = {"winsuite.data.jobs": "jobs", "winsuite.data.test_images": "test_images"}


def installed_name(package: str) -> str:
    top, _, rest = package.partition(".")
    return IMPORT_NAMES[top] + (f".{rest}" if rest else "")


setup(
    packages=[installed_name(p) for p in find_packages(include=[f"{t}*" for t in IMPORT_NAMES])] + list(DATA_PACKAGES),
    package_dir={**{name: folder for folder, name in IMPORT_NAMES.items()}, **DATA_PACKAGES},
    package_data={
        "winsuite": ["*.yaml", "plan/*.yaml", "plan/*.md", "cases/README.md", "cluster/local/README.md",
                     "cluster/local/servicelb/*.go"],
        "winsuite_reports": ["templates/*"],
        "winsuite.data.jobs": ["*.yaml", "*.md", "exclusions/*", "upstream-names/*"],
        "winsuite.data.test_images": ["*.yaml", "*.md", "repo-lists/*"],
    },
)
