"""Wrapper go.mod files that make `go build` of another module's main packages possible."""

from __future__ import annotations

import dataclasses
import re

from winsuite.versions import parse_tolerant
from winsuite.versions import staging_version

# k8s.io/kubernetes requires each staging module at v0.0.0 and maps it to ./staging with a replace that only
# applies in its own repository; a wrapper module must point those at their published v0.X.Y tags.
_STAGING_REQUIRE = re.compile(r"^\s*(k8s\.io/[a-z0-9-]+) v0\.0\.0(?:\s*//.*)?$", re.MULTILINE)
_GO_LINE = re.compile(r"^go (\S+)\s*$", re.MULTILINE)
_GODEBUG_LINE = re.compile(r"^godebug (\S+=\S+)\s*$", re.MULTILINE)
_GODEBUG_BLOCK = re.compile(r"^godebug \(\n(.*?)^\)", re.MULTILINE | re.DOTALL)

VERSION_PACKAGES = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")


@dataclasses.dataclass(frozen=True)
class ModFile:
    """What a wrapper needs from the wrapped module's go.mod."""

    go: str
    godebug: tuple[str, ...]
    staging: tuple[str, ...]


def parse_mod(text: str) -> ModFile:
    """Read the go directive, godebug settings and v0.0.0 staging requirements of a go.mod."""
    go = _GO_LINE.search(text)
    if go is None:
        raise ValueError("go.mod has no go directive")
    godebug = list(_GODEBUG_LINE.findall(text))
    for block in _GODEBUG_BLOCK.findall(text):
        godebug.extend(line.strip() for line in block.splitlines() if line.strip())
    return ModFile(go=go.group(1), godebug=tuple(godebug), staging=tuple(_STAGING_REQUIRE.findall(text)))


def render_wrapper(module: str, require: str, version: str, wrapped: ModFile) -> str:
    """A go.mod that requires `require@version`, pins its staging modules and keeps its go/godebug lines."""
    lines = [f"module {module}", "", f"go {wrapped.go}", ""]
    lines += [f"godebug {setting}" for setting in wrapped.godebug]
    if wrapped.godebug:
        lines.append("")
    lines += [f"require {require} {version}", ""]
    if wrapped.staging:
        pinned = staging_version(version)
        lines.append("replace (")
        lines += [f"\t{path} => {path} {pinned}" for path in wrapped.staging]
        lines += [")", ""]
    return "\n".join(lines)


def version_ldflags(kubernetes_version: str) -> list[str]:
    """-X flags as hack/lib/version.sh sets them, so /version and `kubectl version` report the pin."""
    version = parse_tolerant(kubernetes_version)
    values = {
        "gitVersion": kubernetes_version,
        "gitMajor": str(version.major),
        "gitMinor": str(version.minor),
        "gitTreeState": "clean",
        "gitCommit": "0" * 40,
        "buildDate": "1970-01-01T00:00:00Z",
    }
    return [f"-X {package}.{key}={value}" for package in VERSION_PACKAGES for key, value in values.items()]
