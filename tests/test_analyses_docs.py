"""docs/analyses.md documents every --json key of `relplan analyze`."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from relplan.analyses import registry

DOC = Path(__file__).resolve().parent.parent / "docs" / "analyses.md"


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    seen.add(model)
    for field in model.model_fields.values():
        for arg in _walk(field.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in seen:
                _models(arg, seen)
    return seen


def _walk(tp: object) -> list[object]:
    out = [tp]
    for arg in getattr(tp, "__args__", ()):
        out += _walk(arg)
    return out


def test_every_json_key_is_documented() -> None:
    sections = {
        part.split("\n", 1)[0].strip(): part
        for part in DOC.read_text(encoding="utf-8").split("\n#### ")[1:]
    }
    missing = [
        f"{m.__name__}.{name}"
        for m in _models(registry.result_model(), set())
        if m.__name__ != "StrictModel"
        for name in m.model_fields
        if f"| `{name}` |" not in sections.get(m.__name__, "")
    ]
    assert missing == []
