"""winsuite.inputs.pins: the pinned versions agree with each other and, where the Go module cache has it, with the
pinned Kubernetes source (go.mod and test/utils/image/manifest.go)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from winsuite import paths
from winsuite import versions
from winsuite.inputs.images import ImageCatalog
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.pins import Pins
from winsuite.inputs.pins import load_pins

VERSION = re.compile(r"^v\d+\.\d+\.\d+$")


@pytest.fixture(scope="module")
def pins() -> Pins:
    return load_pins()


def test_pins_are_versions(pins: Pins) -> None:
    pinned = (pins.kubernetes, pins.etcd, pins.kwok, pins.coredns, pins.metrics_server, pins.kind, pins.containerd,
              pins.crictl, pins.cni_plugins)
    assert [p for p in pinned if not VERSION.match(p)] == []
    assert re.fullmatch(r"\d+\.\d+", pins.go)


def test_kubernetes_pin_is_the_image_catalogs_version(pins: Pins) -> None:
    catalog = yaml.safe_load((paths.test_images_dir() / "catalog.yaml").read_text())
    assert catalog["kubernetes"] == pins.kubernetes


def test_busybox_pin_is_the_version_of_the_catalogs_busybox_tag(pins: Pins) -> None:
    catalog = yaml.safe_load((paths.test_images_dir() / "catalog.yaml").read_text())
    tag = catalog["images"]["busybox"]["version"]  # 1.37.0-1: busybox 1.37.0, the image's first build
    assert tag.rsplit("-", 1)[0] == pins.busybox
    assert re.fullmatch(r"[0-9a-f]{64}", pins.busybox_sha256)


def test_kind_node_image_and_staging_version_follow_the_kubernetes_pin(pins: Pins) -> None:
    # winsuite's own build (kind v0.33.0 publishes no kindest/node for v1.36.3), tagged with the Kubernetes it holds.
    repository, tag = pins.kind_node_image.rsplit(":", 1)
    assert (tag, repository.startswith("kindest/")) == (pins.kubernetes, False)
    assert versions.staging_version(pins.kubernetes) == "v0" + pins.kubernetes.removeprefix("v1")


def test_the_pinned_versions_upstream_names_are_kept(pins: Pins) -> None:
    assert paths.upstream_names_file(pins.kubernetes).is_file()


# --- against the pinned Kubernetes source, when the Go module cache holds it -------------------------------------
def module_cache() -> Path:
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0]
    return Path(gopath or Path.home() / "go") / "pkg" / "mod"


@pytest.fixture(scope="module")
def kubernetes_source(pins: Pins) -> Path:
    source = module_cache() / "k8s.io" / f"kubernetes@{pins.kubernetes}"
    if not (source / "go.mod").is_file():
        pytest.skip(f"needs k8s.io/kubernetes@{pins.kubernetes} in the Go module cache (not in {source.parent}; "
                    "`winsuite cluster build` downloads it)")
    return source


def go_mod_requirement(go_mod: str, module: str) -> str:
    found = re.search(rf"^\s*{re.escape(module)} (v\S+)", go_mod, re.M)
    assert found, f"{module} is not required by go.mod"
    return found.group(1)


def test_etcd_pin_is_the_etcd_client_kubernetes_requires(pins: Pins, kubernetes_source: Path) -> None:
    go_mod = (kubernetes_source / "go.mod").read_text()
    assert go_mod_requirement(go_mod, "go.etcd.io/etcd/client/v3") == pins.etcd


def test_go_pin_is_the_go_directive_of_kubernetes(pins: Pins, kubernetes_source: Path) -> None:
    directive = re.search(r"^go (\d+\.\d+)", (kubernetes_source / "go.mod").read_text(), re.M)
    assert directive and directive.group(1) == pins.go


def manifest(kubernetes_source: Path) -> str:
    return (kubernetes_source / "test/utils/image/manifest.go").read_text()


def yaml_keys(manifest_go: str) -> dict[str, str]:
    """RegistryList field -> its repo-list (yaml) key."""
    return dict(re.findall(r'^\s*(\w+)\s+string\s+`yaml:"(\w+)"`', manifest_go, re.M))


def test_catalog_registries_are_manifests(kubernetes_source: Path) -> None:
    text = manifest(kubernetes_source)
    init = re.search(r"initRegistry = RegistryList\{(.*?)\n\t\}", text, re.S)
    assert init
    keys = yaml_keys(text)
    defaults = {keys[field]: value for field, value in re.findall(r'(\w+):\s+"([^"]+)"', init.group(1))}
    assert load_image_catalog().default_registries == defaults


def test_catalog_images_are_manifests(kubernetes_source: Path) -> None:
    text = manifest(kubernetes_source)
    keys = yaml_keys(text)
    upstream = {
        image_id: (keys[field], name, version)
        for image_id, field, name, version in re.findall(
            r'configs\[(\w+)\] = Config\{list\.(\w+), "([^"]+)", "([^"]+)"\}', text
        )
    }
    assert len(upstream) > 20
    catalog: ImageCatalog = load_image_catalog()
    ours = {
        image.upstream_id: (image.registry_key, image.name, image.version)
        for image in catalog.images.values()
        if image.upstream_id is not None
    }
    assert ours == upstream
