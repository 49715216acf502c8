"""Every user-visible warning text in one place, so wording stays consistent and reviewable."""

from __future__ import annotations


def unknown_repo_list_keys(source: str, keys: list[str], known: list[str]) -> str:
    return (
        f"{source}: unknown repo-list key(s) {', '.join(keys)} (ignored; upstream e2e.test ignores them "
        f"silently); known keys: {', '.join(known)}"
    )


def unused_legacy_repo_list_keys(source: str, keys: list[str]) -> str:
    return f"{source}: repo-list key(s) {', '.join(keys)} belong to an older generation and no image uses them now"


def windows_build_mismatch(node: str, build: str, image_builds: list[str]) -> str:
    return (
        f"node {node} runs Windows build {build}, which no catalog image variant matches "
        f"(images exist for {', '.join(image_builds)}); Windows containers need a matching build"
    )


def version_skew(node: str, kubelet: str, apiserver: str, rule: str) -> str:
    return f"node {node}: kubelet {kubelet} vs kube-apiserver {apiserver} breaks the version-skew policy ({rule})"


def kubectl_skew(found: str, version: str, server: str, pinned: str) -> str:
    return (f"kubectl {version} on PATH ({found}) is more than one minor version away from kube-apiserver {server} "
            f"(kubectl's version skew policy); the tests use the pinned kubectl instead ({pinned})")
