"""The test images' busybox: upstream's default configuration, changed only where winsuite says."""

from __future__ import annotations

from pathlib import Path

from winsuite.components import busybox


def test_defconfig_is_made_static_and_without_tc(tmp_path: Path) -> None:
    config = tmp_path / ".config"
    config.write_text(
        "# Busybox version: 1.37.0\n"
        "# CONFIG_STATIC is not set\n"
        "CONFIG_STATIC_LIBGCC=y\n"
        "CONFIG_ASH=y\n"
        "CONFIG_TC=y\n"
        "CONFIG_FEATURE_TC_INGRESS=y\n"
    )

    busybox.configure(config)

    assert config.read_text().splitlines() == [
        "# Busybox version: 1.37.0",
        "CONFIG_STATIC=y",
        "CONFIG_STATIC_LIBGCC=y",
        "CONFIG_ASH=y",
        "# CONFIG_TC is not set",
        "CONFIG_FEATURE_TC_INGRESS=y",
    ]
