"""The test images' busybox: upstream's source built static with its default configuration.

That is how the docker library's busybox image, the base of upstream's e2e-test-images/busybox, is made. Debian's own
busybox-static will not do: a Debian patch makes its `sh` drop environment variables whose names are not identifiers
(`data-1`), which upstream's ConfigMap and Secret `envFrom` specs print with `sh -c env`.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path
from typing import Any

from winsuite.components import debian
from winsuite.components.progress import Reporter
from winsuite.components.progress import run_step
from winsuite.errors import UsageError

# Debian's mirror serves upstream's release tarball as its source package's original tarball, byte for byte.
TARBALL = "pool/main/b/busybox/busybox_{version}.orig.tar.bz2"
# Changed from the default configuration: static, so the image needs no libraries; and no `tc`, which does not
# build against kernel headers from 6.8 on (CBQ was removed) and which no test runs.
CONFIG = {"CONFIG_STATIC": "y", "CONFIG_TC": None}
# Tar's "data" filter where this Python has it (3.11.4 on; Debian 12's is 3.11.2); the tarball's SHA-256 is pinned.
DATA_FILTER: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


def configure(config: Path) -> None:
    """Apply CONFIG to a .config file made by `make defconfig`."""
    config.write_text("".join(f"{_configured(line)}\n" for line in config.read_text().splitlines()))


def _configured(line: str) -> str:
    """`CONFIG_X=y` or `# CONFIG_X is not set` as CONFIG wants it; any other line as it is."""
    name = line.removeprefix("# ").split("=")[0].split(" ")[0]
    if name not in CONFIG:
        return line
    value = CONFIG[name]
    return f"{name}={value}" if value else f"# {name} is not set"


def build(version: str, sha256: str, scratch: Path, out: Path, label: str, logs: Path, report: Reporter) -> None:
    """busybox `version` (its tarball checked against `sha256`) built in `scratch`, written to `out`."""
    missing = [tool for tool in ("make", "gcc") if shutil.which(tool) is None]
    if missing:
        raise UsageError(f"{' and '.join(missing)} not on PATH; the test images' busybox is built from its source: "
                         "apt-get install -y --no-install-recommends make gcc libc6-dev (see `winsuite cluster deps`)")
    tarball = debian.fetch(TARBALL.format(version=version), sha256)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:bz2") as tar:
        tar.extractall(scratch, **DATA_FILTER)
    source = scratch / f"busybox-{version}"
    # Not the make that may run winsuite (`make test`): its jobserver is not ours.
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    run_step(["make", "defconfig"], label=label, log=logs / "busybox-defconfig.log", report=report, cwd=source,
             env=env)
    configure(source / ".config")
    run_step(["make", f"-j{os.cpu_count() or 1}", "busybox"], label=label, log=logs / "busybox.log", report=report,
             cwd=source, env=env)
    shutil.copyfile(source / "busybox", out)
    out.chmod(0o755)
