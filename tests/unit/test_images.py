"""winsuite.inputs.images: the image catalog, repo lists of both key generations, resolution per Windows build."""

from __future__ import annotations

import http.server
import re
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from winsuite import paths
from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs.images import ImageCatalog
from winsuite.inputs.images import ImageUnavailable
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.images import load_repo_list

DEFAULT_AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.63.0"


@pytest.fixture(scope="module")
def catalog() -> ImageCatalog:
    return load_image_catalog()


def write(tmp_path: Path, text: str, name: str = "file.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# --- the catalog ------------------------------------------------------------------------------------------
def test_shipped_catalog_loads_with_windows_variants(catalog: ImageCatalog) -> None:
    assert len(catalog.images) > 20
    assert set(catalog.windows_versions) == {"ltsc2019", "ltsc2022", "ltsc2025"}
    assert catalog.image("agnhost").windows == ("ltsc2019", "ltsc2022", "ltsc2025")
    assert catalog.image("etcd").os == ("linux",)
    assert catalog.default_repo_list().registries == catalog.default_registries


MINIMAL_CATALOG = """\
windowsVersions:
  ltsc2022: {build: "10.0.20348", imageTag: ltsc2022}
registries:
  promoterE2eRegistry: registry.k8s.io/e2e-test-images
images:
"""


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ("- a list\n", "", "expected a dict, got list"),
        ("windowsVersions: {}\nregistries: [a]\nimages: {}\n", "registries", "expected a dict, got list"),
        ("registries: {}\nimages: {}\n", "windowsVersions", "expected a dict, got NoneType"),
        (MINIMAL_CATALOG + "  x: [linux]\n", "images.x", "expected a dict, got list"),
        (MINIMAL_CATALOG + "  x: {registry: promoterE2eRegistry, name: x, version: '1'}\n", "images.x.os",
         "expected a list, got NoneType"),
        (MINIMAL_CATALOG + "  x: {os: [macos], reference: x}\n", "images.x.os", "expected a list of windows, linux"),
        (MINIMAL_CATALOG + "  x: {os: [linux], registry: e2eRegstry, name: x, version: '1'}\n", "images.x.registry",
         "unknown registry key 'e2eRegstry'; known: promoterE2eRegistry"),
        (MINIMAL_CATALOG + "  x: {os: [windows], windows: [ltsc2031], reference: x}\n", "images.x.windows",
         "unknown Windows versions ['ltsc2031']"),
        (MINIMAL_CATALOG + "  x: {os: [linux], registry: promoterE2eRegistry, version: '1'}\n", "images.x.name",
         "required"),
    ],
)
def test_bad_catalog_names_file_and_field(tmp_path: Path, text: str, field: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(DataError) as caught:
        load_image_catalog(path)
    assert (caught.value.path, caught.value.field) == (str(path), field)
    assert problem in caught.value.problem


# --- repo lists ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "image", "reference"),
    [
        ("promoterE2eRegistry: my.reg/e2e\n", "agnhost", "my.reg/e2e/agnhost:2.63.0"),
        # the older generation: e2eRegistry stands for promoterE2eRegistry …
        ("e2eRegistry: old.reg\n", "agnhost", "old.reg/agnhost:2.63.0"),
        # … unless promoterE2eRegistry is set too
        ("e2eRegistry: old.reg\npromoterE2eRegistry: new.reg\n", "agnhost", "new.reg/agnhost:2.63.0"),
        ("promoterE2eRegistry: new.reg\ne2eRegistry: old.reg\n", "agnhost", "new.reg/agnhost:2.63.0"),
        ("etcdRegistry: old.reg\n", "etcd", "old.reg/etcd:3.6.8-0"),
        ("PrivateRegistry: old.reg\n", "agnhost-private", "old.reg/agnhost:2.6"),
        ("gcRegistry: my.reg\n", "agnhost", DEFAULT_AGNHOST),  # other keys keep their defaults
        ("", "pause", "registry.k8s.io/pause:3.10.2"),
        ("promoterE2eRegistry: my.reg\n", "windows-servercore", "mcr.microsoft.com/windows:ltsc2019"),  # fixed
    ],
)
def test_repo_list_key_generations(
    tmp_path: Path, catalog: ImageCatalog, text: str, image: str, reference: str
) -> None:
    repo_list = load_repo_list(write(tmp_path, text), catalog)
    target = "windows" if image == "windows-servercore" else "linux"
    assert catalog.resolve(image, repo_list, target_os=target) == reference
    assert repo_list.warnings == ()


def test_legacy_keys_without_effect_are_reported(tmp_path: Path, catalog: ImageCatalog) -> None:
    path = write(tmp_path, "sampleRegistry: x\ne2eRegistry: y\nhazelcastRegistry: z\n")
    assert load_repo_list(path, catalog).warnings == (
        f"{path}: repo-list key(s) sampleRegistry, hazelcastRegistry belong to an older generation and no image "
        "uses them now",
    )


def test_unknown_keys_give_a_warning_that_names_them(tmp_path: Path, catalog: ImageCatalog) -> None:
    path = write(tmp_path, "e2eRegstry: x\npromoterE2eRegistry: y\nfooRegistry: z\n")
    repo_list = load_repo_list(path, catalog)
    (warning,) = repo_list.warnings
    assert warning.startswith(f"{path}: unknown repo-list key(s) e2eRegstry, fooRegistry (ignored;")
    assert "known keys: promoterE2eRegistry, buildImageRegistry" in warning
    assert repo_list.registries["promoterE2eRegistry"] == "y"


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ("e2eRegistry: [a, b]\n", "e2eRegistry", "expected a registry such as"),
        ("promoterE2eRegistry: ''\n", "promoterE2eRegistry", "expected a registry such as"),
        ("gcRegistry:\n", "gcRegistry", "expected a registry such as"),
        ("- promoterE2eRegistry: x\n", "", "a repo list is a mapping"),
        ("promoterE2eRegistry: [\n", "", "not valid YAML"),
    ],
)
def test_bad_repo_list_names_file_and_field(
    tmp_path: Path, catalog: ImageCatalog, text: str, field: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(DataError) as caught:
        load_repo_list(path, catalog)
    assert (caught.value.path, caught.value.field) == (str(path), field)
    assert problem in caught.value.problem


def test_missing_repo_list_is_a_usage_error(tmp_path: Path, catalog: ImageCatalog) -> None:
    with pytest.raises(UsageError, match=r"cannot read repo list .*nowhere\.yaml: No such file"):
        load_repo_list(tmp_path / "nowhere.yaml", catalog)


@pytest.mark.parametrize(
    ("name", "warnings"),
    [("embedded.yaml", 0), ("windows-testing-legacy.yaml", 1)],
)
def test_shipped_repo_lists_load(catalog: ImageCatalog, name: str, warnings: int) -> None:
    repo_list = load_repo_list(paths.test_images_dir() / "repo-lists" / name, catalog)
    assert len(repo_list.warnings) == warnings
    assert set(repo_list.registries) == set(catalog.default_registries)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A loopback HTTP server over tmp_path; yields its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)  # type: ignore[arg-type]  # socketserver's args, passed on

        def log_message(self, format: str, *args: object) -> None:  # the stdlib's signature
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_repo_list_from_a_url(tmp_path: Path, served: str, catalog: ImageCatalog) -> None:
    write(tmp_path, "e2eRegistry: url.reg\nbogusRegistry: x\n", "list.yaml")
    url = f"{served}/list.yaml"
    repo_list = load_repo_list(url, catalog)
    assert catalog.resolve("agnhost", repo_list) == "url.reg/agnhost:2.63.0"
    assert repo_list.source == url
    assert repo_list.warnings[0].startswith(f"{url}: unknown repo-list key(s) bogusRegistry")


def test_unreachable_repo_list_url_is_a_usage_error(served: str, catalog: ImageCatalog) -> None:
    says = f"cannot read repo list (KUBE_TEST_REPO_LIST) {served}/absent.yaml: HTTP Error 404"
    with pytest.raises(UsageError, match=re.escape(says)):
        load_repo_list(f"{served}/absent.yaml", catalog)


# --- resolution per Windows build -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "version"),
    [
        ("10.0.17763", "ltsc2019"),
        ("10.0.20348", "ltsc2022"),
        ("10.0.26100", "ltsc2025"),
        ("10.0.20348.2340", "ltsc2022"),  # with the update revision
    ],
)
def test_windows_build_label_names_a_version(catalog: ImageCatalog, build: str, version: str) -> None:
    assert catalog.windows_version(build).name == version
    assert catalog.resolve("agnhost", target_os="windows", windows_build=build) == DEFAULT_AGNHOST


@pytest.mark.parametrize("build", ["10.0.19041", "10.0.2034", "10.0.203480"])
def test_unknown_windows_build_is_refused_naming_the_known_ones(catalog: ImageCatalog, build: str) -> None:
    with pytest.raises(ImageUnavailable) as caught:
        catalog.resolve("agnhost", target_os="windows", windows_build=build)
    assert str(caught.value) == (
        f"unknown Windows build {build!r}; known builds: 10.0.17763 (ltsc2019), 10.0.20348 (ltsc2022), "
        "10.0.26100 (ltsc2025)"
    )


@pytest.mark.parametrize(
    ("image", "target_os", "build", "message"),
    [
        ("windows-servercore", "windows", "10.0.20348",
         "image 'windows-servercore' has no Windows ltsc2022 (10.0.20348) variant (published for: ltsc2019)"),
        ("directx-device-plugin", "windows", "10.0.26100", "has no Windows ltsc2025 (10.0.26100) variant"),
        ("etcd", "windows", "10.0.17763", "image 'etcd' is not published for windows (only linux)"),
        ("etcd", "windows", None, "image 'etcd' is not published for windows (only linux)"),
        ("windows-servercore", "linux", None, "is not published for linux (only windows)"),
    ],
)
def test_images_without_a_variant_are_refused(
    catalog: ImageCatalog, image: str, target_os: str, build: str | None, message: str
) -> None:
    with pytest.raises(ImageUnavailable, match=message.replace("(", r"\(").replace(")", r"\)")):
        catalog.resolve(image, target_os=target_os, windows_build=build)


def test_unknown_image_lists_the_catalog(catalog: ImageCatalog) -> None:
    with pytest.raises(UsageError, match=r"unknown image 'agnhot'; the catalog \(.*catalog\.yaml\) has: agnhost, "):
        catalog.image("agnhot")
