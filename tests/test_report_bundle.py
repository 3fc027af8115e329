"""The on-disk cache of the Vega bundle: built once, checked on every read, never required."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from relplan.report import bundle


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Point the cache at a fresh folder and count the (stubbed, fast) builds."""
    calls: list[str] = []

    def fake_build(vl_version: str) -> str:
        calls.append(vl_version)
        return f"/* bundle for {vl_version} */ window.vegaEmbed=1;"

    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bundle, "build", fake_build)
    return calls


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
