"""One analysed run into what compare needs of it (`RunFigures`): its windows and verdict,
every family's value in each of its windows with the run's own noise band (a bootstrap where
the analysis gives the unit to resample, relplan/compare/noise.py), and the charts' series.

This is the one place the analyses' models are read; what it returns is plain data, kept in
compare's cache (relplan/compare/cache.py), so that a cached run costs neither an analysis
nor an import of the analyses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relplan.compare import figures as F
from relplan.compare import noise
from relplan.compare.model import RunFigures, RunPoint, RunValue, RunWindow

if TYPE_CHECKING:
    from relplan.analyses.result import AnalyzeResult


def key(family: F.Family, window: str | None) -> str:
    """A figure's key in RunFigures.figures: the family, or FAMILY.WINDOW (the run's name)."""
    return f"{family.name}.{window or 'run'}" if family.per_window else family.name


def _series(res: AnalyzeResult) -> list[RunPoint]:
    out: list[RunPoint] = []
    amp, ll = res.amplification, res.littles_law
    if amp is not None:
        for b in amp.series:
            done = b.completed_for_waiting
            out.append(
                RunPoint(
                    measure="delivered_per_s",
                    t_s=b.start_s,
                    value=None if done is None else done / amp.series_bin_s,
                )
            )
            epc = (
                b.executions_accepted / b.calls
                if b.calls and b.executions_accepted is not None
                else None
            )
            out.append(RunPoint(measure="executions_per_call", t_s=b.start_s, value=epc))
    if ll is not None:
        out += [RunPoint(measure="waiting", t_s=b.start_s, value=b.waiting_l) for b in ll.series]
    return out


def extract(res: AnalyzeResult) -> RunFigures:
    ctx = res.context
    phases = [RunWindow(name=p.name, start_s=p.start_s, end_s=p.end_s) for p in ctx.phases]
    st = ctx.steady
    steady = None if st is None else RunWindow(name=st.name, start_s=st.start_s, end_s=st.end_s)
    windows: list[F.Window | None] = [None]
    windows += [F.Window(w.name, w.start_s, w.end_s) for w in [*phases, steady] if w is not None]
    values: dict[str, RunValue | str] = {}
    for fam in F.FAMILIES:
        for w in windows if fam.per_window else [None]:
            m = fam.read(res, w)
            values[key(fam, w.name if w else None)] = m if isinstance(m, str) else noise.run_band(m)
    return RunFigures(
        phases=phases,
        steady=steady,
        overload_phase=ctx.overload_phase,
        verdict=res.verdict.verdict if res.verdict is not None else None,
        figures=values,
        series=_series(res),
    )
