"""test_images/embedded-images.yaml: valid recipes, and the names each image is imported under."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite.components import images
from winsuite.errors import DataError
from winsuite.inputs.images import load_image_catalog


def test_recipes_load_and_exactly_one_is_the_sandbox_image() -> None:
    recipes = images.load_recipes()

    assert recipes.sandbox().id == "pause"
    assert set(recipes.images) >= {"pause", "busybox", "agnhost"}


def test_every_recipe_is_a_catalog_image() -> None:
    catalog = load_image_catalog()

    assert set(images.load_recipes().images) <= set(catalog.images)


def test_images_are_imported_under_embedded_and_upstream_names() -> None:
    recipes, catalog = images.load_recipes(), load_image_catalog()

    assert images.names(recipes.images["agnhost"], catalog) == (
        "winsuite.local/e2e-test-images/agnhost:2.63.0",
        "registry.k8s.io/e2e-test-images/agnhost:2.63.0",
    )
    assert "registry.k8s.io/e2e-test-images/busybox:1.36.1-1" in images.names(
        recipes.images["busybox"], catalog
    )
    assert images.sandbox_image_name() == "winsuite.local/pause:3.10.2"


def test_unknown_recipe_keys_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text(
        "layers: {a: [{dir: /tmp}]}\nimages:\n  pause: {layers: [a], sandbox: true, entrypont: [x]}\n"
    )

    with pytest.raises(DataError, match="unknown keys \\['entrypont'\\]"):
        images.load_recipes(path)


def test_a_file_entry_needs_exactly_one_source(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text("layers: {a: [{file: /x, host: /bin/sh, text: hi}]}\nimages: {}\n")

    with pytest.raises(DataError, match="exactly one source"):
        images.load_recipes(path)


def test_libraries_need_a_host_program(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text("layers: {a: [{file: /x, text: hi, libraries: true}]}\nimages: {}\n")

    with pytest.raises(DataError, match="needs a `host` file"):
        images.load_recipes(path)


def test_a_dynamic_program_brings_its_loader_and_libraries() -> None:
    """/bin/sh on any Debian machine is dynamically linked against libc, through the loader."""
    libraries = images.shared_libraries(Path("/bin/sh"))

    names = {lib.name for lib in libraries}
    assert "libc.so.6" in names
    assert any(name.startswith("ld-linux") for name in names)
    assert all(lib.is_absolute() and lib.exists() for lib in libraries)


def test_host_files_are_the_recipes_host_entries() -> None:
    """curl is this machine's; busybox is built from its source (Debian's own drops environment names)."""
    host_files = set(images.host_files())

    assert Path("/usr/bin/curl") in host_files
    assert Path("/bin/busybox") not in host_files
