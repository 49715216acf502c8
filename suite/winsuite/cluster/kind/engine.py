"""The container engine kind's nodes run in: Debian's podman (rootful), or docker where a docker engine runs."""

from __future__ import annotations

import dataclasses
import enum
import os
import resource
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from winsuite.cluster.kind.paths import kind_dir
from winsuite.errors import UsageError

ENGINE_ENV = "WINSUITE_KIND_ENGINE"
# The network winsuite's kind nodes join (kind's own "kind" network is left to the user's kind clusters).
NETWORK = "winsuite-kind"
# podman's defaults for a container's limits; a machine whose hard limits are lower cannot give them.
PODMAN_DEFAULT_LIMITS = {"nofile": (resource.RLIMIT_NOFILE, 1048576), "nproc": (resource.RLIMIT_NPROC, 4194304)}


class Engine(enum.Enum):
    PODMAN = "podman"
    DOCKER = "docker"


@dataclasses.dataclass(frozen=True)
class ContainerEngine:
    engine: Engine
    executable: str

    @property
    def name(self) -> str:
        return self.engine.value

    def env(self) -> dict[str, str]:
        """The environment of every engine and kind command winsuite runs."""
        env = dict(os.environ)
        if self.engine is Engine.PODMAN:
            env.update(CONTAINERS_CONF=str(podman_config()), KIND_EXPERIMENTAL_PROVIDER="podman",
                       KIND_EXPERIMENTAL_PODMAN_NETWORK=NETWORK)
        else:
            env.update(KIND_EXPERIMENTAL_PROVIDER="docker")
        return env

    def run(self, args: Sequence[str], *, stdin: Path | None = None, timeout: float = 300,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """Run `<engine> args` (reading the file `stdin`); with check, a failure is one line naming the command and
        the engine's message."""
        with stdin.open("rb") if stdin else open(os.devnull, "rb") as source:
            done = subprocess.run([self.executable, *args], stdin=source, capture_output=True, timeout=timeout,
                                  env=self.env(), check=False)
        if check and done.returncode != 0:
            message = done.stderr.decode(errors="replace").strip().splitlines()
            raise UsageError(f"`{self.name} {' '.join(args[:3])}` failed (exit {done.returncode}): "
                             f"{message[-1] if message else 'no message'}")
        return done

    def output(self, args: Sequence[str], timeout: float = 300) -> str:
        return self.run(args, timeout=timeout).stdout.decode(errors="replace")


def podman_config() -> Path:
    return kind_dir() / "engine" / "containers.conf"


def podman_network_dir() -> Path:
    """podman's CNI network directory for winsuite's kind nodes (not /etc/cni/net.d, which others read)."""
    return kind_dir() / "engine" / "networks"


def _pid_max() -> int:
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        return PODMAN_DEFAULT_LIMITS["nproc"][1]


def _limits() -> list[str]:
    """Container limits no higher than this machine allows: its hard limits, and for processes its pid_max (seen:
    a container asking for more processes than pid_max fails to start with EPERM even under a higher hard limit)."""
    limits = []
    for name, (which, podman_default) in PODMAN_DEFAULT_LIMITS.items():
        _, hard = resource.getrlimit(which)
        allowed = podman_default if hard == resource.RLIM_INFINITY else hard
        if which == resource.RLIMIT_NPROC:
            allowed = min(allowed, _pid_max())
        if allowed < podman_default:
            limits.append(f'"{name}={allowed}:{allowed}"')
    return limits


def write_podman_config() -> None:
    """containers.conf for winsuite's podman commands (CONTAINERS_CONF): limits, and a network directory of its own."""
    lines = ["# Written by winsuite for its kind nodes (CONTAINERS_CONF); rewritten on every `cluster up`."]
    limits = _limits()
    if limits:
        lines += ["[containers]", f"default_ulimits = [{', '.join(limits)}]"]
    lines += ["[network]", f'network_config_dir = "{podman_network_dir()}"']
    podman_network_dir().mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    if not podman_config().exists() or podman_config().read_text() != text:
        podman_config().write_text(text)


def _docker_engine_runs(docker: str) -> bool:
    try:
        return subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=20,
                              check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def choose() -> ContainerEngine:
    """docker where a docker engine answers, else podman ($WINSUITE_KIND_ENGINE names one); one line if neither."""
    wanted = os.environ.get(ENGINE_ENV, "")
    if wanted and wanted not in {engine.value for engine in Engine}:
        raise UsageError(f"environment variable {ENGINE_ENV}: got {wanted!r}; allowed: podman, docker")
    docker, podman = shutil.which("docker"), shutil.which("podman")
    if wanted != "podman" and docker and (wanted == "docker" or _docker_engine_runs(docker)):
        return ContainerEngine(Engine.DOCKER, docker)
    if wanted != "docker" and podman:
        if os.geteuid() != 0:
            raise UsageError("kind nodes run under rootful podman: run winsuite as root (or give a docker engine)")
        write_podman_config()
        return ContainerEngine(Engine.PODMAN, podman)
    raise UsageError(f"a kind cluster needs a container engine: no {wanted or 'running docker engine or podman'} "
                     "found; install podman with `winsuite cluster deps --install`")
