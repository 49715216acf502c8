"""`winsuite publish BUILD_DIR DEST`: a build uploaded in prow's layout to gs://, s3:// or a directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from winsuite.commands._types import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="upload a build in prow's layout to gs://, s3:// or a directory and update latest-build.txt",
        description="Upload BUILD_DIR as DEST/<job>/<build>/ (started.json first, finished.json last) and point "
        "DEST/<job>/latest-build.txt at it. Safe to repeat: a retry uploads only what is missing; a destination that "
        "holds another build with the same id is refused. Credentials: Application Default Credentials (gs://), "
        "the AWS chain (s3://); none for a public bucket.",
    )
    parser.add_argument("build_dir", type=Path, metavar="BUILD_DIR", help="a build: <job>/<build>/ of a results root")
    parser.add_argument("dest", metavar="DEST",
                        help="results root: gs://BUCKET/PREFIX, s3://BUCKET/PREFIX or a directory")
    parser.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> int:
    from winsuite.run.publish_step import publish_and_say

    return int(publish_and_say(args.build_dir, args.dest))
