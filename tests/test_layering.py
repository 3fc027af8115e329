"""The import contracts in pyproject's [tool.importlinter], checked by import-linter.

Only relplan.cli imports typer and rich; ingest never imports the analyses; the analyses never
import the report or the simulator; the report never imports the simulator; no module is in
an import circle (the acyclic_siblings contract, and grimp's graph searched here directly). Skips (with the
reason) where import-linter is not installed, and fails instead under CI=true (.ci/run installs
the dev extra).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports() -> str:
    found = shutil.which("lint-imports") or shutil.which(
        "lint-imports", path=str(Path(sys.executable).parent)
    )
    if found is None:
        reason = "import-linter is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI must run the import contracts")
        pytest.skip(reason)
    return found


def test_the_layering_contracts_hold() -> None:
    done = subprocess.run(
        [_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_contracts_name_the_layering_of_the_issue() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    forbidden = {
        (src, dst)
        for c in config["contracts"]
        if c["type"] == "forbidden"
        for src in c["source_modules"]
        for dst in c["forbidden_modules"]
    }
    assert {
        ("relplan", "typer"),
        ("relplan", "rich"),
        ("relplan.ingest", "relplan.analyses"),
        ("relplan.analyses", "relplan.report"),
        ("relplan.analyses", "relplan.sim"),
        ("relplan.report", "relplan.sim"),
    } <= forbidden


def test_the_contracts_forbid_import_circles_in_the_whole_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    acyclic = [c for c in config["contracts"] if c["type"] == "acyclic_siblings"]
    assert any(c["ancestors"] == ["relplan"] and "depth" not in c for c in acyclic)
    assert not config.get("exclude_type_checking_imports", False)


def _circles(graph: Any) -> list[list[str]]:
    """Modules of relplan that import one another in a circle (strongly connected groups of
    two or more, Tarjan's algorithm), imports under TYPE_CHECKING and inside functions too."""
    mods = sorted(m for m in graph.modules if m.startswith("relplan"))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if not w.startswith("relplan"):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for m in mods:
        if m not in index:
            visit(m)
    return out


def test_no_module_of_relplan_is_in_an_import_circle() -> None:
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (dev extra)")
    graph = grimp.build_graph("relplan", cache_dir=None)
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (dev extra)")
    graph = grimp.ImportGraph()
    for m in ("relplan.a", "relplan.b", "relplan.c"):
        graph.add_module(m)
    graph.add_import(importer="relplan.a", imported="relplan.b")
    graph.add_import(importer="relplan.b", imported="relplan.a")
    graph.add_import(importer="relplan.b", imported="relplan.c")
    assert _circles(graph) == [["relplan.a", "relplan.b"]]
