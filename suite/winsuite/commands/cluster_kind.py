"""`winsuite cluster … --type kind`: build the kind node image, and create, inspect and delete a kind cluster."""

from __future__ import annotations

import argparse
import os
import subprocess
import time

from winsuite.cluster.kind import engine as engines
from winsuite.cluster.kind.paths import KindLayout
from winsuite.cluster.kind.state import load
from winsuite.cluster.kubectl import pinned_kubectl
from winsuite.components.progress import stderr_reporter
from winsuite.components.simnodes import ClusterConfig
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins


def build(args: argparse.Namespace) -> None:
    """The node image for the pinned Kubernetes, in the container engine (built only when its inputs changed)."""
    from winsuite.cluster.kind.nodeimage import build as nodeimage

    print(nodeimage.ensure(load_pins(), engines.choose(), stderr_reporter, args.bin_dir))


def up(args: argparse.Namespace, config: ClusterConfig) -> int:
    from winsuite.cluster.kind import lifecycle  # the kubernetes client: only when a cluster is started

    lifecycle.up(args.name, args.kind_image, config, stderr_reporter, args.bin_dir)
    print(KindLayout(args.name).kubeconfig)
    return int(ExitCode.OK)


def down(args: argparse.Namespace) -> int:
    from winsuite.cluster.kind import lifecycle

    if not lifecycle.down(args.name, stderr_reporter):
        stderr_reporter(f"no kind cluster named {args.name} (nothing to delete)")
    return int(ExitCode.OK)


def status(args: argparse.Namespace) -> int:
    from winsuite.cluster.kind import readiness
    from winsuite.cluster.kind.node import state as container_state

    layout, engine = KindLayout(args.name), engines.choose()
    state = load(layout)
    if state is None:
        print(f"kind cluster {args.name}: not running (start it with `winsuite cluster up --type kind "
              f"--name {args.name}`)")
        return int(ExitCode.CLUSTER_UNREACHABLE)
    problem = readiness.not_serving(engine, layout, state, patience=0)
    print(f"kind cluster {args.name}: {'running' if problem is None else 'degraded: ' + problem}")
    print(f"  engine      {state.engine}\n  image       {state.image}\n  server      {state.server}\n"
          f"  kubeconfig  {layout.kubeconfig}\n  node        {layout.node} ({container_state(engine, layout.node)})")
    if problem is None:
        from winsuite.components.kube import node_readiness

        for node, readiness_ in sorted(node_readiness(layout.kubeconfig).items()):
            print(f"  node {node:<24} {readiness_}")
    return int(ExitCode.OK if problem is None else ExitCode.CLUSTER_UNREACHABLE)


def _running(name: str) -> KindLayout:
    layout = KindLayout(name)
    if not layout.kubeconfig.exists():
        raise UsageError(f"kind cluster {name} is not running; start it with `winsuite cluster up --type kind "
                         f"--name {name}`")
    return layout


def kubeconfig(args: argparse.Namespace) -> int:
    print(_running(args.name).kubeconfig)
    return int(ExitCode.OK)


def logs(args: argparse.Namespace) -> int:
    """`kind export logs` into the cluster's directory; prints where (the node's journal, kubelet, every pod)."""
    from winsuite.cluster.kind import lifecycle

    dest = _running(args.name).root / "logs" / f"export-{time.strftime('%Y%m%d%H%M%S')}"
    lifecycle.export_logs(args.name, dest)
    print(dest)
    return int(ExitCode.OK)


def kubectl(args: argparse.Namespace) -> int:
    layout = _running(args.name)
    binary = pinned_kubectl()
    if binary is None:
        raise UsageError("no kubectl: run `winsuite cluster build`")
    argv = [a for a in args.args if a != "--"]
    return subprocess.run([binary, *argv], env=dict(os.environ, KUBECONFIG=str(layout.kubeconfig)),
                          check=False).returncode
