"""One analysed run into what compare needs of it (`RunFigures`): its windows and verdict,
every family's value in each of its windows with the run's own noise band (a bootstrap where
the analysis gives the unit to resample, relplan/compare/noise.py), and the charts' series.

This is the one place the analyses' models are read; what it returns is plain data, kept in
compare's cache (relplan/compare/cache.py), so that a cached run costs neither an analysis
nor an import of the analyses.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from relplan.compare import figures as F
from relplan.compare import noise
from relplan.compare.model import RunFigures, RunPoint, RunValue, RunWindow

if TYPE_CHECKING:
    import duckdb

    from relplan.analyses.result import AnalyzeResult

# Time bins of a window's latency histograms, for their bands: about this many per window,
# never shorter than the scrape interval (a bin with no pair of scrapes has no rise).
HISTOGRAM_BINS_PER_WINDOW = 12


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


def samples(con: duckdb.DuckDBPyConnection, res: AnalyzeResult) -> F.Samples:
    """What the bands need beyond the analyses' models, from compare's queries
    (queries/compare/): each call's executions per window (when the amplification analysis
    counted calls) and the latency histograms' bucket rises per time bin of each window."""
    from relplan import sql
    from relplan.analyses.windows import Window, window_params

    windows = res.context.phase_windows()
    by_call: dict[str, list[tuple[int, int]]] = {}
    unknown: dict[str, tuple[int, int]] = {}
    amp = res.amplification
    if amp is not None and any(r.calls for r in amp.windows):
        params = window_params(windows)
        for r in sql.rows(con, "compare/call_executions_by_window", params):
            by_call.setdefault(str(r["win_name"]), []).append(
                (int(r["executions"]), int(r["calls"]))
            )
        for r in sql.rows(con, "compare/attempts_without_execution_id_by_window", params):
            unknown[str(r["win_name"])] = (int(r["sent"] or 0), int(r["unknown"] or 0))
    present = [h for h in (res.verdict.latency if res.verdict else []) if h.present]
    if not present:
        return F.Samples(executions_by_call=by_call, unknown_executions=unknown)
    # the scrape interval: the metrics' own span (it can outlast the analysis window) over
    # the histograms' scrapes
    ctx = res.context
    metrics = next((s for s in ctx.sources if s.kind == "metrics"), None)
    span = ctx.window_end - ctx.window_start
    if metrics is not None and metrics.start_s is not None and metrics.end_s is not None:
        span = max(span, metrics.end_s - metrics.start_s)
    step = max(span / max(1, h.scrapes - 1) for h in present)
    bins: list[Window] = []
    width: dict[str, float] = {}
    for w in windows:
        n = max(1, min(HISTOGRAM_BINS_PER_WINDOW, math.floor((w.b - w.a) / step)))
        width[w.name] = (w.b - w.a) / n
        bins += [
            Window(
                f"{w.name}\x1f{i}", w.a + i * width[w.name], w.a + (i + 1) * width[w.name], False
            )
            for i in range(n)
        ]
    params = window_params(bins) | {"bases": [h.metric for h in present], "by_end": True}
    rises: dict[tuple[str, str], dict[int, dict[float, float]]] = {}
    for r in sql.rows(con, "analyses/histogram_rises_by_window", params):
        if r["part"] != "bucket" or r["le"] is None:
            continue
        win, i = str(r["win_name"]).split("\x1f")
        le = math.inf if str(r["le"]) in ("+Inf", "Inf", "inf") else float(r["le"])
        per = rises.setdefault((win, str(r["base"])), {}).setdefault(int(i), {})
        per[le] = per.get(le, 0.0) + float(r["rise"])
    hist: dict[tuple[str, str], tuple[list[float], list[list[float]]]] = {}
    for key_, per_bin in rises.items():
        les = sorted({le for b in per_bin.values() for le in b})
        hist[key_] = (les, [[b.get(le, 0.0) for le in les] for b in per_bin.values()])
    return F.Samples(
        executions_by_call=by_call,
        unknown_executions=unknown,
        histogram_bins=hist,
        histogram_bin_s=width,
    )


def extract(res: AnalyzeResult, samples: F.Samples = F.NO_SAMPLES) -> RunFigures:
    ctx = res.context
    phases = [RunWindow(name=p.name, start_s=p.start_s, end_s=p.end_s) for p in ctx.phases]
    st = ctx.steady
    steady = None if st is None else RunWindow(name=st.name, start_s=st.start_s, end_s=st.end_s)
    windows: list[F.Window | None] = [None]
    windows += [F.Window(w.name, w.start_s, w.end_s) for w in [*phases, steady] if w is not None]
    values: dict[str, RunValue | str] = {}
    for fam in F.FAMILIES:
        for w in windows if fam.per_window else [None]:
            m = fam.read(res, w, samples)
            values[key(fam, w.name if w else None)] = m if isinstance(m, str) else noise.run_band(m)
    return RunFigures(
        phases=phases,
        steady=steady,
        overload_phase=ctx.overload_phase,
        verdict=res.verdict.verdict if res.verdict is not None else None,
        figures=values,
        series=_series(res),
    )
