"""docs/development.md's map is the tree: its layout table lists every package and top-level
module of relplan (and nothing absent), and each package's "May import" line covers what it
imports (grimp's graph of relplan, imports under TYPE_CHECKING and inside functions too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "development.md"


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _layout() -> str:
    return _section(DOC.read_text(encoding="utf-8"), "Layout")


def _listed(layout: str) -> set[str]:
    rows = [line for line in layout.splitlines() if line.startswith("| `")]
    return {path for row in rows for path in re.findall(r"`([^`]+)`", row.split("|")[1])}


def _tree() -> set[str]:
    pkg = ROOT / "relplan"
    out = {"queries/"}
    for child in pkg.iterdir():
        if child.is_dir() and (child / "__init__.py").exists():
            out.add(f"relplan/{child.name}/")
        elif child.suffix == ".py":
            out.add(f"relplan/{child.name}")
    return out


def test_the_layout_table_lists_exactly_the_tree() -> None:
    listed, tree = _listed(_layout()), _tree()
    assert not tree - listed, f"missing from docs/development.md's layout: {sorted(tree - listed)}"
    assert not listed - tree, f"listed but absent: {sorted(listed - tree)}"


def test_the_table_check_fails_on_a_missing_or_extra_row() -> None:
    layout = _layout()
    without = "\n".join(x for x in layout.splitlines() if not x.startswith("| `relplan/sim/`"))
    assert "relplan/sim/" in _tree() - _listed(without)
    extra = layout + "\n| `relplan/ghost/` | nothing |\n"
    assert "relplan/ghost/" in _listed(extra) - _tree()


def _may_import(layout: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m in re.finditer(r"^### `relplan/(\w+)/`\n(.*?)(?=^### |\Z)", layout, re.S | re.M):
        line = next(x for x in m.group(2).splitlines() if x.startswith("May import:"))
        out[m.group(1)] = set(re.findall(r"`(\w+)`", line))
    return out


def _imports() -> dict[str, set[str]]:
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (dev extra)")
    graph = grimp.build_graph("relplan", cache_dir=None)

    def top(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else "__init__"

    out: dict[str, set[str]] = {}
    for m in graph.modules:
        if not m.startswith("relplan"):
            continue
        for w in graph.find_modules_directly_imported_by(m):
            if w.startswith("relplan") and top(w) != top(m):
                out.setdefault(top(m), set()).add(top(w))
    return out


def test_every_package_has_a_paragraph_saying_what_it_may_import() -> None:
    declared = _may_import(_layout())
    packages = {p.removeprefix("relplan/").rstrip("/") for p in _tree() if p.endswith("/")}
    packages.discard("queries")
    assert set(declared) == packages
    known = {p.removeprefix("relplan/").removesuffix(".py").rstrip("/") for p in _tree()}
    for pkg, names in declared.items():
        assert names <= known, f"{pkg} names what is not in relplan: {sorted(names - known)}"


def test_no_package_imports_what_its_paragraph_does_not_allow() -> None:
    declared = _may_import(_layout())
    for pkg, used in sorted(_imports().items()):
        if pkg not in declared:
            continue  # a top-level module: the layering contracts cover those
        extra = used - declared[pkg]
        assert not extra, (
            f"relplan/{pkg}/ imports {sorted(extra)}; docs/development.md does not say it may"
        )
