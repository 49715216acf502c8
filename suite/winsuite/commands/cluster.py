"""`winsuite cluster`: build, start, inspect and stop the embedded cluster (or, with --type kind, a kind cluster)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
from pathlib import Path

from winsuite.cluster.embedded.realnode import prereqs
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.embedded.status import inspect
from winsuite.cluster.embedded.status import render
from winsuite.commands import cluster_kind
from winsuite.commands._types import Subparsers
from winsuite.components.artifacts import BIN_DIR_ENV
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import bin_dir_from_env
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.logs import tail
from winsuite.components.progress import stderr_reporter
from winsuite.components.simnodes import DEFAULT_WINDOWS_BUILDS
from winsuite.components.simnodes import ClusterConfig
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.inputs.cluster_spec import MADE_CLUSTER_TYPES
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.pins import load_pins

DEFAULT_NAME = "winsuite"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("cluster", help="build, start, inspect and stop the embedded (or a kind) cluster")
    commands = parser.add_subparsers(dest="cluster_command", required=True, metavar="ACTION")

    build = commands.add_parser(
        "build", help="build (once per pinned version) what the embedded cluster runs"
    )
    _bin_dir(build)
    build.add_argument("--e2e-test", action="store_true", help="also build upstream e2e.test (for bench/)")
    build.add_argument("--test-tools", action="store_true",
                       help="also what winsuite's own tests make clusters it did not make with (kwokctl)")
    build.add_argument("--no-real-node", action="store_true", help="only the control plane, etcd and kwok")
    build.add_argument("--kind", action="store_true",
                       help="also the kind node image for the pinned Kubernetes, imported into the container engine")
    build.set_defaults(handler=_build)

    up = commands.add_parser("up", help="start the cluster (or reuse it when it is running)")
    _name(up)
    _bin_dir(up)
    up.add_argument("--kind-image", metavar="REF",
                    help="with --type kind: this node image instead of the one `cluster build --kind` makes")
    up.add_argument(
        "--real-node",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="join one real Linux node (default: where the machine allows it)",
    )
    up.add_argument(
        "--windows-builds",
        default=",".join(DEFAULT_WINDOWS_BUILDS),
        help="comma-separated builds, one simulated Windows node each (default: %(default)s)",
    )
    up.add_argument("--linux-nodes", type=int, default=1, help="simulated Linux nodes (default: %(default)s)")
    up.set_defaults(handler=_up)

    for action, helptext, handler in (
        ("down", "stop every component by pid and remove the cluster's state", _down),
        ("status", "components, nodes, and the log tail of anything that crashed", _status),
        ("kubeconfig", "print the path of the cluster's admin kubeconfig", _kubeconfig),
        ("logs", "print the component log files, or the tail of one", _logs),
    ):
        sub = commands.add_parser(action, help=helptext)
        _name(sub)
        sub.set_defaults(handler=handler)
    commands.choices["logs"].add_argument("component", nargs="?", help="e.g. kube-apiserver, kubelet")

    kubectl = commands.add_parser("kubectl", help="run the cluster's own kubectl with its kubeconfig")
    _name(kubectl)
    kubectl.add_argument("args", nargs=argparse.REMAINDER, help="kubectl arguments (after --)")
    kubectl.set_defaults(handler=_kubectl)

    deps = commands.add_parser("deps", help="print (or run) the install command for the real node's packages")
    deps.add_argument("--install", action="store_true", help="run it (needs root)")
    deps.set_defaults(handler=_deps)


def _name(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default=DEFAULT_NAME, help="cluster name (default: %(default)s)")
    parser.add_argument("--type", choices=tuple(map(str, MADE_CLUSTER_TYPES)), default=ClusterType.EMBEDDED,
                        help="the embedded cluster, or a kind cluster (default: %(default)s)")


def _bin_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bin-dir",
        type=Path,
        default=None,
        help=f"use the binaries found in this directory as they are (env {BIN_DIR_ENV})",
    )


def _build(args: argparse.Namespace) -> int:
    pins = load_pins()
    groups = [Group.CONTROL_PLANE]
    groups += [] if args.no_real_node else [Group.REAL_NODE]
    groups += [Group.E2E] if args.e2e_test else []
    groups += [Group.TEST_TOOLS] if args.test_tools else []
    args.bin_dir = args.bin_dir or bin_dir_from_env()
    paths = Builder(pins, stderr_reporter, args.bin_dir).ensure(select(pins, groups))
    for name, path in paths.items():
        print(f"{name}\t{path}")
    if args.kind:
        cluster_kind.build(args)
    return int(ExitCode.OK)


def _up(args: argparse.Namespace) -> int:
    from winsuite.cluster.embedded import launcher  # the kubernetes client: only when a cluster is started

    if args.linux_nodes < 0:
        raise UsageError(f"--linux-nodes {args.linux_nodes}: expected 0 or more")
    builds = tuple(build.strip() for build in args.windows_builds.split(",") if build.strip())
    config = ClusterConfig(windows_builds=builds, linux_simulated=args.linux_nodes, real_node=args.real_node)
    args.bin_dir = args.bin_dir or bin_dir_from_env()
    if args.type == ClusterType.KIND:
        return cluster_kind.up(args, dataclasses.replace(config, real_node=False))
    launcher.up(args.name, config, stderr_reporter, args.bin_dir)
    print(Layout(args.name).kubeconfig)
    return int(ExitCode.OK)


def _down(args: argparse.Namespace) -> int:
    from winsuite.cluster.embedded import launcher

    if args.type == ClusterType.KIND:
        return cluster_kind.down(args)
    if not launcher.down(args.name, stderr_reporter):
        stderr_reporter(f"no cluster named {args.name} (nothing to stop)")
    return int(ExitCode.OK)


def _status(args: argparse.Namespace) -> int:
    if args.type == ClusterType.KIND:
        return cluster_kind.status(args)
    status = inspect(args.name)
    print("\n".join(render(status)))
    return int(ExitCode.OK if status.running else ExitCode.CLUSTER_UNREACHABLE)


def _running_layout(name: str) -> Layout:
    layout = Layout(name)
    if not layout.kubeconfig.exists():
        raise UsageError(f"cluster {name} is not running; start it with `winsuite cluster up --name {name}`")
    return layout


def _kubeconfig(args: argparse.Namespace) -> int:
    if args.type == ClusterType.KIND:
        return cluster_kind.kubeconfig(args)
    print(_running_layout(args.name).kubeconfig)
    return int(ExitCode.OK)


def _logs(args: argparse.Namespace) -> int:
    if args.type == ClusterType.KIND:
        return cluster_kind.logs(args)
    layout = _running_layout(args.name)
    if args.component is None:
        for log in sorted(layout.logs.glob("*.log")):
            print(log)
        return int(ExitCode.OK)
    log = layout.log(args.component)
    if not log.exists():
        known = ", ".join(sorted(path.stem for path in layout.logs.glob("*.log")))
        raise UsageError(f"no log for component {args.component!r} in {layout.logs}; known: {known}")
    print(tail(log, 50))
    return int(ExitCode.OK)


def _kubectl(args: argparse.Namespace) -> int:
    if args.type == ClusterType.KIND:
        return cluster_kind.kubectl(args)
    layout = _running_layout(args.name)
    state = inspect(args.name).state
    kubectl = state.bins.get("kubectl") if state else None
    if kubectl is None:
        raise UsageError(f"cluster {args.name} has no kubectl recorded; run `winsuite cluster build`")
    argv = [a for a in args.args if a != "--"]
    env = dict(os.environ, KUBECONFIG=str(layout.kubeconfig))
    return subprocess.run([kubectl, *argv], env=env, check=False).returncode


def _deps(args: argparse.Namespace) -> int:
    command = prereqs.install_command()
    if not args.install:
        print(" ".join(command))
        return int(ExitCode.OK)
    if os.geteuid() != 0:
        raise UsageError(f"installing packages needs root: run `sudo {' '.join(command)}`")
    return subprocess.run(
        command, check=False, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    ).returncode
