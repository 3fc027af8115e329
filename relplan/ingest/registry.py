"""Every input format relplan reads, found from the declarations of the family packages.

A module of relplan/ingest/<family>/ that defines `ADAPTERS` (a tuple of
relplan/ingest/adapter.Adapter) is an input format; nothing else lists it. Detection
(detect.py), the `--format` and `--kind` help, the catch-all "cannot tell what this file holds"
message, `relplan inspect` and the index of docs/formats.md all read `adapters()`.
`register` adds one at run time (a plugin, or the toy format of tests/test_ingest_recipe.py).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from relplan.ingest.adapter import FAMILIES, Adapter, InputOption

if TYPE_CHECKING:
    from relplan.ingest.base import IngestOptions

# Kinds in the order the help names them.
KIND_ORDER = ("proxy", "engine", "metrics", "manifest", "cluster")

_FOUND: dict[str, Adapter] | None = None
_EXTRA: dict[str, Adapter] = {}


def _discover() -> dict[str, Adapter]:
    found: dict[str, Adapter] = {}
    for family in FAMILIES:
        pkg = importlib.import_module(f"relplan.ingest.{family}")
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{pkg.__name__}.{info.name}")
            for adapter in getattr(module, "ADAPTERS", ()):
                if adapter.name in found:
                    raise ValueError(f"input format {adapter.name!r} is declared twice")
                if adapter.family != family:
                    raise ValueError(
                        f"{adapter.name} declares family {adapter.family}, not {family}"
                    )
                found[adapter.name] = adapter
    return found


def adapters() -> dict[str, Adapter]:
    """Every registered format by name: the family packages' in family order, then any
    registered at run time."""
    global _FOUND
    if _FOUND is None:
        _FOUND = _discover()
    return {**_FOUND, **_EXTRA}


def register(adapter: Adapter) -> None:
    if adapter.name in adapters():
        raise ValueError(f"input format {adapter.name!r} is already registered")
    if adapter.family not in FAMILIES:
        raise ValueError(
            f"unknown family {adapter.family!r}; expected one of {', '.join(FAMILIES)}"
        )
    _EXTRA[adapter.name] = adapter


def unregister(name: str) -> None:
    _EXTRA.pop(name, None)


@contextmanager
def registered(adapter: Adapter) -> Iterator[Adapter]:
    """The adapter is registered inside the block only."""
    register(adapter)
    try:
        yield adapter
    finally:
        unregister(adapter.name)


# IngestOptions' own fields and the flags of every command that reads inputs: no format may
# declare an option by these names.
GENERAL_FIELDS = ("kind", "fmt", "on_error", "timeout", "exact")
GENERAL_FLAGS = ("--kind", "--format", "--on-error", "--timeout")


def input_options() -> dict[str, InputOption[Any]]:
    """Every input option the registered formats declare, by field, in registry order. An
    option several formats read is one declaration they share; two declarations of one field
    or flag are an error."""
    found: dict[str, InputOption[Any]] = {}
    owner: dict[str, str] = {}
    for a in adapters().values():
        for o in a.options:
            if o.field in GENERAL_FIELDS or set(o.names) & set(GENERAL_FLAGS):
                raise ValueError(f"{a.name} declares {o.flag}, a general input option")
            have = found.get(o.field)
            if have is not None and have is not o:
                raise ValueError(
                    f"input option {o.field!r} is declared by {owner[o.field]} and again by"
                    f" {a.name}; declare it once and name that declaration in both"
                )
            if have is None:
                clash = [f for f in o.names for other in found.values() if f in other.names]
                if clash:
                    raise ValueError(f"{a.name} declares the flag {clash[0]} a second time")
                found[o.field] = o
                owner[o.field] = a.name
    return found


def check_options(opts: IngestOptions) -> None:
    """Refuse an option no registered format declares (a misspelt keyword from Python)."""
    known = input_options()
    unknown = sorted(set(opts.given) - set(known))
    if unknown:
        raise TypeError(
            f"IngestOptions: no input option {', '.join(unknown)};"
            f" the formats declare {', '.join(known)}"
        )


def chosen_by(opts: IngestOptions) -> str | None:
    """The format the options name (`--format`, else a format whose own options choose it,
    as `--map` does `mapped`), None to detect it from the content."""
    if opts.fmt:
        return opts.fmt
    named = [a for a in adapters().values() if a.chosen is not None and a.chosen(opts)]
    if len(named) > 1:
        from relplan.errors import UsageError

        raise UsageError(
            "--format",
            f"the input options name more than one format ({', '.join(a.name for a in named)});"
            " say which with --format",
        )
    return named[0].name if named else None


def kinds() -> tuple[str, ...]:
    have = {k for a in adapters().values() for k in a.kinds}
    return tuple(k for k in KIND_ORDER if k in have) + tuple(sorted(have - set(KIND_ORDER)))


def formats() -> dict[str, tuple[str, ...]]:
    """Format name -> the kinds its records are."""
    return {name: a.kinds for name, a in adapters().items()}


def format_names() -> str:
    return ", ".join(adapters())


def kind_names() -> str:
    return ", ".join(kinds())


def docs_index() -> str:
    """The index table of docs/formats.md (tests/test_ingest_registry.py keeps them equal)."""
    rows = [
        "| format (`--format`) | kind | family | what | tables | options |",
        "|---|---|---|---|---|---|",
    ]
    for a in adapters().values():
        name = f"[`{a.name}`](#{a.doc})" if a.doc else f"`{a.name}`"
        opts = ", ".join(f"`{o.flag}`" for o in a.options) or "—"
        rows.append(
            f"| {name} | {'/'.join(a.kinds)} | {FAMILIES[a.family]} | {a.summary} |"
            f" {', '.join(f'`{t}`' for t in a.tables) or '—'} | {opts} |"
        )
    return "\n".join(rows) + "\n"


INDEX_START = "<!-- formats index: python -m relplan.ingest.registry --write -->"
INDEX_END = "<!-- end of formats index -->"


def docs_with_index(text: str) -> str:
    """docs/formats.md's text with its index replaced by docs_index()."""
    start = text.index(INDEX_START) + len(INDEX_START)
    end = text.index(INDEX_END)
    return text[:start] + "\n\n" + docs_index() + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    path = Path(__file__).resolve().parents[2] / "docs" / "formats.md"
    if args == ["--write"]:
        path.write_text(docs_with_index(path.read_text()))
        return 0
    sys.stdout.write(docs_index())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
