"""`cluster up --type kind` and `cluster down --type kind`: create or reuse the cluster, make it winsuite's (kwok's
simulated nodes, the test images), and remove it with everything it put on the host."""

from __future__ import annotations

import base64
import contextlib
import shutil
import time
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from winsuite.cluster.kind import cli
from winsuite.cluster.kind import engine as engines
from winsuite.cluster.kind import leftovers
from winsuite.cluster.kind import network
from winsuite.cluster.kind import node
from winsuite.cluster.kind import readiness
from winsuite.cluster.kind.config import cluster_config
from winsuite.cluster.kind.config import render
from winsuite.cluster.kind.engine import ContainerEngine
from winsuite.cluster.kind.engine import Engine
from winsuite.cluster.kind.nodeimage import build as nodeimage
from winsuite.cluster.kind.nodeimage.files import KWOK_UNIT
from winsuite.cluster.kind.paths import KindLayout
from winsuite.cluster.kind.paths import kind_dir
from winsuite.cluster.kind.state import KindState
from winsuite.cluster.kind.state import load
from winsuite.cluster.kind.state import save
from winsuite.cluster.readiness import wait_for_controllers
from winsuite.components import images
from winsuite.components import kube
from winsuite.components import simnodes
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.locks import file_lock
from winsuite.components.progress import Reporter
from winsuite.components.progress import elapsed
from winsuite.components.simnodes import ClusterConfig
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins

CREATE_WAIT = "4m"  # kind's own wait for the control plane's node to be Ready
CREATE_TIMEOUT = 900.0
READY_TIMEOUT = 300.0
LIB_MODULES = Path("/lib/modules")


def _cgroup_v1() -> bool:
    return not Path("/sys/fs/cgroup/cgroup.controllers").exists()


def up(name: str, image: str | None, config: ClusterConfig, report: Reporter,
       bin_dir: Path | None = None) -> tuple[KindState, bool]:
    """Create the kind cluster, or reuse it when it serves; returns its state and whether this call created it.

    `image`: a node image to use as it is (pulled by kind when the engine lacks it); None: winsuite's own, built
    (or found up to date) now.
    """
    simnodes.check_builds(config.windows_builds)  # a user mistake: say so before anything starts
    engine = engines.choose()
    kind = cli.find(report, bin_dir)
    assert kind is not None
    layout = KindLayout(name)
    with file_lock(layout.lock):
        existing = load(layout)
        if name in cli.clusters(kind, engine):
            if existing is None:  # somebody's own cluster: never deleted by winsuite
                raise UsageError(f"a kind cluster named {name} exists that winsuite did not make; choose another "
                                 f"--name, or delete it with `kind delete cluster --name {name}`")
            problem = readiness.not_serving(engine, layout, existing)
            if problem is None and existing is not None:
                report(f"kind cluster {name} is already running ({existing.server}); reusing it")
                return existing, False
            report(f"kind cluster {name}: {problem}; replacing it")
            _down_locked(kind, engine, layout, existing, report)
        reference = image or nodeimage.ensure(load_pins(), engine, report, bin_dir)
        return _create(kind, engine, layout, reference, config, report, bin_dir), True


def _create(kind: Path, engine: ContainerEngine, layout: KindLayout, image: str, config: ClusterConfig,
            report: Reporter, bin_dir: Path | None) -> KindState:
    started = time.monotonic()
    shutil.rmtree(layout.root, ignore_errors=True)
    state = KindState(layout.name, engine.name, image, made_lib_modules=_ensure_lib_modules(engine))
    save(layout, state)  # from here on, `down` knows what to undo
    if engine.engine is Engine.PODMAN:
        network.ensure()
    labels = nodeimage.image_labels(engine, image) or {}
    layout.config.write_text(render(cluster_config(dns_image_tag=labels.get(nodeimage.DNS_TAG_LABEL),
                                                   cgroup_v1=_cgroup_v1())))
    report(f"creating kind cluster {layout.name} from {image} ({engine.name})")
    try:
        cli.run(kind, engine, ["create", "cluster", "--name", layout.name, "--image", image, "--config",
                               str(layout.config), "--wait", CREATE_WAIT, "--retain"],
                log=layout.root / "logs" / "kind-create.log", report=report, timeout=CREATE_TIMEOUT)
        state.container_id = engine.output(["inspect", "--type", "container", "--format", "{{.Id}}",
                                            layout.node]).strip()
        state.netns = _netns(engine, layout.node)
        state.server = f"https://{node.address(engine, layout.node)}:6443" if engine.engine is Engine.PODMAN else ""
        _write_kubeconfig(kind, engine, layout, state)
        save(layout, state)
        _add_simulated_nodes(engine, layout, state, config)
        save(layout, state)
        _import_test_images(engine, layout, report, bin_dir)
        readiness.wait(engine, layout, state, READY_TIMEOUT)
        took = wait_for_controllers(kube.api(layout.kubeconfig).api_client, report)
        report(f"  controllers working after {took:.1f}s")
    except BaseException:
        kept = _failed_logs(kind, engine, layout)
        report(f"kind cluster {layout.name} failed to start; removing it (what the node printed: {kept})")
        _down_locked(kind, engine, layout, state, report)
        raise
    report(f"kind cluster {layout.name} ready in {elapsed(time.monotonic() - started)}: "
           f"{len(state.nodes)} nodes, {state.server}")
    return state


def _ensure_lib_modules(engine: ContainerEngine) -> bool:
    """kind mounts /lib/modules into the node; podman refuses a missing bind source, so an empty one is made."""
    if engine.engine is not Engine.PODMAN or LIB_MODULES.exists():
        return False
    LIB_MODULES.mkdir(parents=True)
    return True


def _netns(engine: ContainerEngine, container: str) -> str:
    return engine.output(["inspect", "--type", "container", "--format", "{{.NetworkSettings.SandboxKey}}",
                          container]).strip()


def _write_kubeconfig(kind: Path, engine: ContainerEngine, layout: KindLayout, state: KindState) -> None:
    """kind's kubeconfig, pointed at the node's address under podman (no port is published on the host)."""
    doc: dict[str, Any] = yaml.safe_load(cli.output(kind, engine, ["get", "kubeconfig", "--name", layout.name]))
    cluster = doc["clusters"][0]["cluster"]
    if state.server:
        cluster["server"] = state.server
    else:
        state.server = str(cluster["server"])
    layout.ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    layout.kubeconfig.write_text(yaml.safe_dump(doc, sort_keys=False))
    layout.kubeconfig.chmod(0o600)


def _add_simulated_nodes(engine: ContainerEngine, layout: KindLayout, state: KindState,
                         config: ClusterConfig) -> None:
    """kwok in the node (its unit is in winsuite's image) and the Node objects it keeps Ready, tainted as on the
    embedded cluster."""
    node.start_unit(engine, layout.node, KWOK_UNIT)
    manifests = simnodes.manifests(config, load_pins().kubernetes)
    names = [manifest["metadata"]["name"] for manifest in manifests]
    core = kube.api(layout.kubeconfig)
    _keep_kube_proxy_off(core, names)
    kube.create_nodes(core, manifests)
    state.nodes = [layout.node, *names]


def _keep_kube_proxy_off(core: client.CoreV1Api, simulated: list[str]) -> None:
    """kubeadm's kube-proxy DaemonSet tolerates every taint, so kwok would report a kube-proxy "running" on the
    simulated Linux node; the embedded cluster has no such pod, and nothing runs there. Keep it off those nodes."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": simulated}]}]}}}
    apps = client.AppsV1Api(core.api_client)
    try:
        apps.patch_namespaced_daemon_set("kube-proxy", "kube-system", {"spec": {"template": {"spec": {
            "affinity": affinity}}}})
    except client.ApiException as err:
        if err.status != 404:  # no kube-proxy (kubeProxyMode: none in a user's own configuration)
            raise


def _import_test_images(engine: ContainerEngine, layout: KindLayout, report: Reporter,
                        bin_dir: Path | None) -> None:
    """The images the tests ask for, made here as for the embedded cluster's real node (no registry)."""
    pins = load_pins()
    built = Builder(pins, report, bin_dir).ensure(select(pins, [Group.REAL_NODE]))
    node.import_archives(engine, layout.node, images.archives(built, report), report)


def _failed_logs(kind: Path, engine: ContainerEngine, layout: KindLayout) -> Path:
    """What the node printed and kind's own log export, kept beside the cluster's directory."""
    kept = kind_dir() / "clusters" / f"{layout.name}.failed-up-logs"
    shutil.rmtree(kept, ignore_errors=True)
    kept.mkdir(parents=True)
    if (layout.root / "logs").is_dir():
        shutil.copytree(layout.root / "logs", kept, dirs_exist_ok=True)
    printed = engine.run(["logs", layout.node], check=False)
    (kept / "node-console.log").write_bytes(printed.stdout + printed.stderr)
    cli.attempt(kind, engine, ["export", "logs", str(kept / "kind-export"), "--name", layout.name])
    return kept


def export_logs(name: str, dest: Path) -> None:
    """`kind export logs` into dest; a failure is written there instead (logs are collected before teardown)."""
    kind = cli.find(lambda _: None, build=False)
    failed = cli.attempt(kind, engines.choose(), ["export", "logs", str(dest), "--name", name]) if kind else "no kind"
    if failed:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "export-failed.txt").write_text(failed + "\n")


def down(name: str, report: Reporter) -> bool:
    """Delete the kind cluster and what it put on the host; False when there was none."""
    layout = KindLayout(name)
    engine = engines.choose()
    kind = cli.find(report, build=False)
    with file_lock(layout.lock):
        state = load(layout)
        exists = kind is not None and name in cli.clusters(kind, engine)
        if state is None:
            if exists:
                raise UsageError(f"the kind cluster {name} was not made by winsuite; it is left alone "
                                 f"(`kind delete cluster --name {name}` deletes it)")
            return False
        _down_locked(kind, engine, layout, state, report)
        return True


def _down_locked(kind: Path | None, engine: ContainerEngine, layout: KindLayout, state: KindState | None,
                 report: Reporter) -> None:
    problems: list[str] = []
    failed = cli.attempt(kind, engine, ["delete", "cluster", "--name", layout.name]) if kind else None
    problems += [failed] if failed else []
    if engine.engine is Engine.PODMAN and not leftovers.nodes_on_network(engine):
        problems += network.remove()
    if state is not None and state.made_lib_modules and not _other_clusters(layout):
        with contextlib.suppress(OSError):  # only while empty: something may have put modules there since
            LIB_MODULES.rmdir()
    shutil.rmtree(layout.root, ignore_errors=True)
    problems += leftovers.after_down(engine, layout, state)
    report(f"kind cluster {layout.name} deleted" + (f" with problems: {'; '.join(problems)}" if problems else ""))


def _other_clusters(layout: KindLayout) -> bool:
    return any(path.is_dir() and path != layout.root for path in layout.root.parent.glob("*")
               if not path.name.endswith(".failed-up-logs"))
