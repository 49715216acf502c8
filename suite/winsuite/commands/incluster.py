"""The commands of runs inside the cluster: `image build`, `attach`, and `shard-worker` (what a shard pod runs)."""

from __future__ import annotations

import argparse

from winsuite.commands._types import Subparsers


def register(subparsers: Subparsers) -> None:
    image = subparsers.add_parser("image", help="winsuite's own image (for `winsuite run --in-cluster`)")
    image_commands = image.add_subparsers(dest="image_command", required=True, metavar="COMMAND")
    build = image_commands.add_parser(
        "build", help="make winsuite's image here (an OCI archive) and import it into the embedded cluster's node",
        description="The image of this winsuite, its dependencies, the pinned e2e.test, ginkgo and kubectl, as an "
        "OCI archive in the cache (no registry, no Docker). For a registry, build Containerfile instead.")
    build.add_argument("--cluster-name", default="winsuite",
                       help="import it into this embedded cluster's real node when it runs (default: winsuite)")
    build.add_argument("--no-import", action="store_true", help="only write the archive")
    build.set_defaults(handler=image_build)

    attach = subparsers.add_parser("attach", help="follow a detached `winsuite run --in-cluster` and collect its build")
    attach.add_argument("build", metavar="BUILD_DIR", help="the build directory `run --in-cluster --detach` printed")
    attach.set_defaults(handler=attach_run)

    worker = subparsers.add_parser("shard-worker", help="what each pod of `winsuite run --in-cluster` runs")
    worker.add_argument("--config", required=True, metavar="DIR", help="the run's ConfigMap, mounted")
    worker.add_argument("--results", required=True, metavar="DIR", help="a writable directory for the shard's build")
    worker.set_defaults(handler=shard_worker)


def image_build(args: argparse.Namespace) -> int:
    from winsuite.inputs.cluster_spec import ClusterType
    from winsuite.run.incluster.local_image import build_image
    from winsuite.run.incluster.local_image import ensure_on_node

    def report(text: str) -> None:
        print(text, flush=True)

    if args.no_import:
        ref, archive = build_image(report)
    else:
        ref = ensure_on_node(ClusterType.EMBEDDED, args.cluster_name, report)
        _, archive = build_image(lambda text: None)
    print(f"{ref}\t{archive}")
    return 0


def attach_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from winsuite.run.incluster.start import attach

    return attach(Path(args.build))


def shard_worker(args: argparse.Namespace) -> int:
    from pathlib import Path

    from winsuite.run.incluster.worker import completion_index
    from winsuite.run.incluster.worker import shard_run
    from winsuite.run.incluster.worker import stream_run

    return stream_run(shard_run(Path(args.config), Path(args.results), completion_index()))
