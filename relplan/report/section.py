"""A report section: how one analysis's model becomes part of the page.

Each registry row (relplan/analyses/registry.py) with a `section` names a `Section` object,
one per module in relplan/report/sections/. A section has:
- `title`, `question`: its heading and the question it answers, in plain words;
- `model`: its data model (a `SectionBase`: what `--json` writes and the page shows);
- `build(result, ctx)`: the analysis's model and the run context -> the section's model
  (choose, order, word and format; compute no figure);
- `chart(section, data)`: an Altair chart, or None when there is nothing to draw (optional);
- `missing(result, ctx)`: items for "what the data could not show" (optional).

`report_sections()` resolves them in registry order; `report_model()` is the `ReportData`
class with one field per section, named after its analysis.

`EXTRA_SECTIONS` are sections whose result is not an analysis's: a caller above the report
computes it (the `relplan report` command runs `relplan whatif`, which needs the simulator
the report never imports) and hands it to the builder. Their fields are optional (null when
not computed) and come after the analyses' sections.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, create_model

from relplan.analyses import registry
from relplan.analyses.context import RunContext
from relplan.report.data import Footer, MissingItem, MissingSection, ReportData, SectionBase

R = TypeVar("R", bound=BaseModel)  # the analysis's model
S = TypeVar("S", bound=SectionBase)  # the section's model


@dataclass(frozen=True)
class Section(Generic[R, S]):
    title: str
    question: str
    model: type[S]
    build: Callable[[R, RunContext], S]
    chart: Callable[[S, ReportData], Any] | None = None
    missing: Callable[[R, RunContext], list[MissingItem]] | None = None

    def unavailable(self, reasons: list[str]) -> S:
        """The section of an analysis that did not run: its title, question and reasons."""
        return self.model(
            title=self.title,
            question=self.question,
            available=False,
            missing=reasons or ["the input this analysis needs"],
        )


EXTRA_SECTIONS: dict[str, str] = {
    "whatif": "relplan.report.sections.what_would_have_helped:SECTION",
}


def extra_sections() -> list[tuple[str, Section[Any, Any]]]:
    """The extra sections (name, Section), in page order."""
    out: list[tuple[str, Section[Any, Any]]] = []
    for name, ref in EXTRA_SECTIONS.items():
        section = registry.resolve(ref)
        if not isinstance(section, Section):
            raise TypeError(f"{ref} is not a relplan.report.section.Section")
        out.append((name, section))
    return out


def report_sections() -> list[tuple[registry.Analysis[Any], Section[Any, Any]]]:
    """Every registered analysis that has a report section, with it, in registry order."""
    out: list[tuple[registry.Analysis[Any], Section[Any, Any]]] = []
    for a in registry.analyses():
        if a.section is not None:
            section = registry.resolve(a.section)
            if not isinstance(section, Section):
                raise TypeError(f"{a.section} is not a relplan.report.section.Section")
            out.append((a, section))
    return out


def section_title(analysis: str) -> str:
    """How the page names an analysis: its section's title, else the registry's title."""
    for a in registry.analyses():
        if a.name == analysis:
            if a.section is not None:
                title: str = registry.resolve(a.section).title
                return title
            return a.title
    return analysis


def report_model() -> type[ReportData]:
    """The `ReportData` class for the registered sections."""
    return _report_model(
        tuple((a.name, s.model) for a, s in report_sections()),
        tuple((name, s.model) for name, s in extra_sections()),
    )


@cache
def _report_model(
    fields: tuple[tuple[str, type[SectionBase]], ...],
    extras: tuple[tuple[str, type[SectionBase]], ...] = (),
) -> type[ReportData]:
    spec: dict[str, Any] = {name: (model, ...) for name, model in fields}
    for name, extra in extras:
        spec[name] = (extra | None, Field(default=None))
    spec["missing"] = (MissingSection, ...)
    spec["footer"] = (Footer, Field(description="sources, row counts, version, time"))
    model: type[ReportData] = create_model(
        "ReportData", __base__=ReportData, __module__=ReportData.__module__, **spec
    )
    return model
