"""The Vega bundle: shipped for the vl-convert relplan was built with (checked against what
that vl-convert builds), else built once and cached on disk, checked on every read, never
required."""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from relplan.report import bundle
from relplan.report.html import VL_VERSION


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Point the cache at a fresh folder, ship nothing, and count the (stubbed, fast) builds."""
    calls: list[str] = []

    def fake_build(vl_version: str) -> str:
        calls.append(vl_version)
        return f"/* bundle for {vl_version} */ window.vegaEmbed=1;"

    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bundle, "VENDOR", tmp_path / "vendor-empty")
    monkeypatch.setattr(bundle, "build", fake_build)
    return calls


@pytest.mark.slow
def test_the_shipped_bundle_is_what_the_installed_vl_convert_builds() -> None:
    """Fails after a vl-convert upgrade until `python -m relplan.report.bundle --write` ships
    the new version's bundle (the old one would then be unused: every machine would build)."""
    shipped = bundle.read_shipped(VL_VERSION)
    assert shipped is not None, f"nothing shipped at {bundle.shipped_path(VL_VERSION)}"
    assert shipped == bundle.build(VL_VERSION)
    assert sorted(bundle.VENDOR.iterdir()) == [bundle.shipped_path(VL_VERSION)]


def test_the_shipped_bundle_is_used_without_building_or_caching(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_build(vl_version: str) -> str:
        raise AssertionError(f"built {vl_version}")

    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bundle, "build", no_build)
    js = bundle.load(VL_VERSION)
    assert js == bundle.read_shipped(VL_VERSION)
    assert "window.vegaEmbed=" in js
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # truncated gzip
        lambda raw: gzip.compress(gzip.decompress(raw).replace(b"vegaEmbed", b"vegaEmbeb")),
        lambda raw: gzip.compress(gzip.decompress(raw).split(b"\n", 1)[1]),  # header lost
        lambda raw: b"",
    ],
)
def test_a_damaged_shipped_bundle_is_built_instead_not_inlined(
    builds: list[str], tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    real = Path(bundle.__file__).resolve().parent / "vendor"
    shutil.copytree(real, bundle.VENDOR)
    path = bundle.shipped_path(VL_VERSION)
    path.write_bytes(damage(path.read_bytes()))
    assert bundle.read_shipped(VL_VERSION) is None
    assert bundle.load(VL_VERSION) == f"/* bundle for {VL_VERSION} */ window.vegaEmbed=1;"
    assert builds == [VL_VERSION]


def test_nothing_is_shipped_for_another_vega_lite_version() -> None:
    assert bundle.read_shipped("5.20") is None


def test_the_second_load_reads_the_cache(builds: list[str]) -> None:
    first = bundle.load("6.4")
    second = bundle.load("6.4")
    assert first == second
    assert builds == ["6.4"]
    assert bundle.cache_path("6.4").is_file()


def test_the_key_changes_with_the_vega_lite_version(builds: list[str]) -> None:
    bundle.load("6.4")
    bundle.load("5.20")
    assert builds == ["6.4", "5.20"]
    assert bundle.cache_path("6.4") != bundle.cache_path("5.20")


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated by a full disk
        lambda text: text.replace("vegaEmbed", "vegaEmbeb"),  # edited
        lambda text: "",  # empty
        lambda text: text.split("\n", 1)[1],  # header lost
    ],
)
def test_a_damaged_cache_file_is_rebuilt_not_inlined(
    builds: list[str], damage: Callable[[str], str]
) -> None:
    good = bundle.load("6.4")
    path = bundle.cache_path("6.4")
    path.write_text(damage(path.read_text("utf-8")), "utf-8")
    assert bundle.load("6.4") == good
    assert len(builds) == 2
    assert bundle.read_cached(path) == good  # and the file is whole again


def test_an_unwritable_cache_folder_still_gives_the_bundle(
    builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(blocker / "cache"))
    assert "vegaEmbed" in bundle.load("6.4")
    assert "vegaEmbed" in bundle.load("6.4")
    assert len(builds) == 2  # nothing cached, nothing raised
