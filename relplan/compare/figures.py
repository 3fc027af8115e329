"""The figures compare shows, each read from an analysis's model (never computed here), and
for each a resampler for its noise band where the model holds the unit to resample.

A family is either per window (`on_time.hold`: one value per aligned phase, `run` and
`steady`) or whole-run (`capacity`). `FAMILIES` is the catalogue `--list-figures` prints.
The readers run once per run, in relplan/compare/extract.py; the analyses are imported there
only, so that a comparison served from the cache never loads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from relplan.text import compare as words

if TYPE_CHECKING:
    import numpy as np

    from relplan.analyses.result import AnalyzeResult

Sampler = Callable[["np.random.Generator", int], "np.ndarray[Any, Any]"]


@dataclass(frozen=True)
class Measured:
    value: float
    sampler: Sampler | None  # draws resampled values of the figure
    method: str  # what is resampled, or why nothing can be


@dataclass(frozen=True)
class Window:
    name: str  # the run's own name of the window
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Samples:
    """The units to resample that the analyses' models do not keep, read from the workspace by
    compare's own queries (queries/compare/) in relplan/compare/extract.py. Keyed by the
    analyses' window name (`run`, a phase, `steady`)."""

    # (executions a call made, calls that made that many), per window
    executions_by_call: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # (attempts sent by the window's calls, of them with no execution id), per window
    unknown_executions: dict[str, tuple[int, int]] = field(default_factory=dict)
    # per (window, histogram metric): the bucket bounds `le` (ascending, inf last) and, per
    # time bin of the window, the cumulative bucket rises at those bounds
    histogram_bins: dict[tuple[str, str], tuple[list[float], list[list[float]]]] = field(
        default_factory=dict
    )
    histogram_bin_s: dict[str, float] = field(default_factory=dict)


NO_SAMPLES = Samples()

Reader = Callable[["AnalyzeResult", "Window | None", Samples], "Measured | str"]


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    unit: str
    sense: str  # "higher" or "lower" is better
    analysis: str
    per_window: bool
    read: Reader


def _binomial(n: int, p: float, what: str) -> tuple[Sampler, str]:
    def draw(rng: np.random.Generator, b: int) -> np.ndarray[Any, Any]:
        return rng.binomial(n, p, b) / n

    return draw, words.bootstrap(what, n)


def _bins(
    num: list[float], den: list[float], bin_s: float, value: float
) -> tuple[Sampler | None, str]:
    """Resample the time bins of a ratio figure (sum of num over sum of den). The bins only
    approximate the window (a bin belongs to the window it starts in; the analysis weighs
    time exactly), so the draws are shifted by (value - the bins' own ratio): the band is
    the bins' spread around the figure itself (a basic bootstrap interval)."""
    import numpy as np

    pairs = [(a, b) for a, b in zip(num, den, strict=True) if b > 0]
    if len(pairs) < 3:
        return None, words.too_few_bins(len(pairs))
    a = np.array([p[0] for p in pairs], dtype=float)
    d = np.array([p[1] for p in pairs], dtype=float)
    shift = value - float(a.sum() / d.sum())

    def draw(rng: np.random.Generator, b: int) -> np.ndarray[Any, Any]:
        idx = rng.integers(0, len(a), (b, len(a)))
        out: np.ndarray[Any, Any] = a[idx].sum(axis=1) / d[idx].sum(axis=1) + shift
        return out

    return draw, words.time_bins(bin_s, len(pairs))


def _per_call(counts: list[tuple[int, int]], value: float) -> tuple[Sampler, str]:
    """Resample the calls of a window: each call's count of executions, drawn with
    replacement (a multinomial over the counts seen)."""
    import numpy as np

    k = np.array([c[0] for c in counts], dtype=float)
    n = np.array([c[1] for c in counts], dtype=float)
    total = int(n.sum())
    shift = value - float(k @ n / total)  # 0 unless the counts and the analysis disagree

    def draw(rng: np.random.Generator, b: int) -> np.ndarray[Any, Any]:
        out: np.ndarray[Any, Any] = rng.multinomial(total, n / total, size=b) @ k / total + shift
        return out

    return draw, words.bootstrap("calls", total)


def _quantiles(cum: np.ndarray[Any, Any], les: np.ndarray[Any, Any], q: float) -> Any:
    """histogram_quantile of each row of cumulative bucket counts `cum` (bounds `les`,
    ascending, inf last), as relplan/analyses/histograms.py estimates it: linear inside the
    bucket the rank falls in, the lower bound in the +Inf bucket; nan where a row is empty."""
    import numpy as np

    total = cum[:, -1]
    rank = q * total
    idx = (cum >= rank[:, None]).argmax(axis=1)
    rows = np.arange(len(cum))
    lo_le = np.where(idx > 0, les[np.maximum(idx - 1, 0)], 0.0)
    lo_c = np.where(idx > 0, cum[rows, np.maximum(idx - 1, 0)], 0.0)
    inside = cum[rows, idx] - lo_c
    frac = np.where(inside > 0, (rank - lo_c) / np.where(inside > 0, inside, 1.0), 1.0)
    hi_le = les[idx]
    with np.errstate(invalid="ignore"):
        val = np.where(np.isinf(hi_le), lo_le, lo_le + (hi_le - lo_le) * frac)
    return np.where(total > 0, val, np.nan)


def _histogram_bins(
    bins: tuple[list[float], list[list[float]]] | None, bin_s: float, q: float, value: float
) -> tuple[Sampler | None, str]:
    """Resample the time bins of a window's histogram: the bins' bucket rises drawn with
    replacement and added up, the quantile estimated again; shifted by (value - the bins' own
    estimate), as for the other time-bin bands."""
    none = "none: a histogram estimate within its bucket, fewer than 3 time bins with requests"
    if bins is None:
        return None, none
    import numpy as np

    les = np.array(bins[0], dtype=float)
    mat = np.array([b for b in bins[1] if b and b[-1] > 0], dtype=float)
    if len(mat) < 3:
        return None, none
    shift = value - float(_quantiles(mat.sum(axis=0, keepdims=True), les, q)[0])

    def draw(rng: np.random.Generator, b: int) -> np.ndarray[Any, Any]:
        idx = rng.integers(0, len(mat), (b, len(mat)))
        out: np.ndarray[Any, Any] = _quantiles(mat[idx].sum(axis=1), les, q) + shift
        return out

    return draw, words.histogram_time_bins(bin_s, len(mat))


def _in(w: Window | None, t: float) -> bool:
    return w is None or w.start_s <= t < w.end_s


def _window(rows: list[Any], w: Window | None) -> Any | None:
    name = "run" if w is None else w.name
    return next((r for r in rows if r.window == name and getattr(r, "replica", None) is None), None)


def _need(res: AnalyzeResult, analysis: str) -> Any:
    model = getattr(res, analysis, None)
    if model is None:
        skipped = next((s.reason for s in res.skipped if s.analysis == analysis), None)
        return words.did_not_run(analysis, skipped)
    return model


def _share(field: str, count: str) -> Reader:
    def read(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
        d = _need(res, "delivery")
        if isinstance(d, str):
            return d
        row = _window(d.windows, w)
        if row is None or row.calls == 0:
            return "no calls arrived in the window"
        share = getattr(row, field)
        if share is None:
            return row.null_reasons.get(field) or words.null_in_window(field)
        draw, method = _binomial(row.calls, share, "calls")
        return Measured(share, draw, method)

    del count
    return read


def _executions_per_call(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    a = _need(res, "amplification")
    if isinstance(a, str):
        return a
    row = _window(a.windows, w)
    if row is None or not row.calls or row.executions_per_call is None:
        why = row.null_reasons.get("executions_per_call") if row is not None else None
        return why or "no calls or no executions seen in the window"
    value = float(row.executions_per_call)
    sent, unknown = samples.unknown_executions.get("run" if w is None else w.name, (0, 0))
    if unknown > UNKNOWN_EXECUTIONS_SHARE * sent:
        return words.unknown_executions(unknown, sent)
    counts = samples.executions_by_call.get("run" if w is None else w.name)
    if not counts:  # read without the workspace (relplan/compare/extract.py, samples)
        return Measured(value, None, "none: each call's executions were not read")
    draw, method = _per_call(counts, value)
    if unknown:
        method += words.unknown_left_out(unknown)
    return Measured(value, draw, method)


# Above this share of attempts sent with no execution id, executions per call is not shown.
UNKNOWN_EXECUTIONS_SHARE = 0.01


def _retry_share(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    a = _need(res, "amplification")
    if isinstance(a, str):
        return a
    row = _window(a.windows, w)
    if row is None or row.retry_share is None or not row.executions_created:
        return "no executions created in the window"
    draw, method = _binomial(int(row.executions_created), row.retry_share, "executions")
    return Measured(float(row.retry_share), draw, method)


def _wasted(fate: str) -> Reader:
    def read(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
        wp = _need(res, "wasted_prefill")
        if isinstance(wp, str):
            return wp
        row = _window(wp.windows, w)
        if row is None or row.share_by_fate is None:
            return "no prefill computed in the window"
        value = row.share_by_fate.get(fate)
        if value is None:
            return "no prefill computed in the window"
        return Measured(
            float(value), None, "none: the analysis gives token totals only (no unit to resample)"
        )

    return read


def _shortfall(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    c = _need(res, "counters")
    if isinstance(c, str):
        return c
    row = _window(c.windows, w)
    if row is None or row.shortfall is None:
        return "no prefix-cache queries counted in the window"
    every = max(1, round(c.rolling_window_s / c.rolling_step_s))  # non-overlapping windows
    ev = [s for s in c.series if s.replica is None and _in(w, s.t_s)][::every]
    draw, method = _bins(
        [float(s.query_rise - s.prompt_rise) for s in ev if s.query_rise is not None],
        [float(s.query_rise) for s in ev if s.query_rise is not None],
        c.rolling_window_s,
        float(row.shortfall),
    )
    return Measured(float(row.shortfall), draw, method)


def _queue_wait(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    ll = _need(res, "littles_law")
    if isinstance(ll, str):
        return ll
    row = _window(ll.windows, w)
    if row is None or row.wq_s is None:
        why = row.null_reasons.get("wq_s") if row is not None else None
        return why or "no arrivals at the waiting queue in the window"
    bins = [b for b in ll.series if _in(w, b.start_s) and b.waiting_l is not None]
    draw, method = _bins(
        [float(b.waiting_l) for b in bins],
        [float(b.lambda_per_s or 0) for b in bins],
        ll.series_bin_s,
        float(row.wq_s),
    )
    return Measured(float(row.wq_s), draw, method)


def _capacity(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    ctx = res.context
    if ctx.capacity is None:
        return "Ĉ unknown (no run.json capacity, no --capacity, no calibration)"
    return Measured(float(ctx.capacity), None, words.not_measured(ctx.capacity_source))


def _recovery(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    d = _need(res, "delivery")
    if isinstance(d, str):
        return d
    rec = d.recovery
    if rec is None:
        return d.recovery_null_reason or "no overload phase"
    if rec.recovery_s is None:
        return words.did_not_recover(rec.verdict)
    return Measured(
        float(rec.recovery_s), None, "none: one crossing time per run (needs several runs)"
    )


def _verdict_figure(key: str, metric: str) -> Reader:
    def read(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
        v = res.verdict
        fig = next((f for f in v.figures if f.key == key), None) if v is not None else None
        if fig is None:
            return words.no_metric(metric) if res.context.has_metrics else "no metrics"
        if fig.value is None:
            if fig.needs:
                return words.needs(fig.needs)
            return fig.note or words.status_of(fig.status, metric)
        return Measured(float(fig.value), None, "none: a metrics figure over the window")

    return read


def _drain(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
    v = res.verdict
    if v is None:
        return "no verdict"
    dr = v.drain
    if dr is None:
        return "no overload phase: nothing to drain"
    if dr.drained_after_s is None:
        return dr.null_reason or "not drained"
    return Measured(
        float(dr.drained_after_s), None, "none: one crossing time per run (needs several runs)"
    )


# vLLM's latency histograms compare reads (relplan.analyses.histograms.BASES keys).
HISTOGRAMS: tuple[tuple[str, str, str], ...] = (
    ("ttft", "time to first token", "vllm:time_to_first_token_seconds"),
    ("queue", "queue time", "vllm:request_queue_time_seconds"),
    ("e2e", "end-to-end latency", "vllm:e2e_request_latency_seconds"),
)
QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99)


def _latency(key: str, metric: str, q: float) -> Reader:
    def read(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
        v = res.verdict
        h = next((h for h in v.latency if h.key == key), None) if v is not None else None
        if h is None:
            return words.no_histogram(metric)
        name = "run" if w is None else w.name
        row = next((x for x in h.windows if x.window == name), None)
        p = next((p for p in row.percentiles if p.q == q), None) if row is not None else None
        if row is None or not row.requests or p is None:
            return h.null_reason or "no request finished in the window (the histogram did not rise)"
        if p.high is None:  # in the +Inf bucket: the estimate is the largest finite bound
            return Measured(
                p.value, None, "none: above the largest bucket bound (the estimate is that bound)"
            )
        draw, method = _histogram_bins(
            samples.histogram_bins.get((name, metric)),
            samples.histogram_bin_s.get(name, 0.0),
            q,
            p.value,
        )
        return Measured(p.value, draw, method)

    return read


def _restarts(field: str, why_none: str = "") -> Reader:
    def read(res: AnalyzeResult, w: Window | None, samples: Samples) -> Measured | str:
        r = _need(res, "restarts")
        if isinstance(r, str):
            return r
        value = getattr(r, field)
        if value is None:
            return why_none
        return Measured(
            float(value), None, "none: counts of restarts over the window (needs several runs)"
        )

    return read


FAMILIES: tuple[Family, ...] = (
    Family(
        "delivered",
        "delivered share of calls",
        "share",
        "higher",
        "delivery",
        True,
        _share("delivered_share", "calls"),
    ),
    Family(
        "on_time",
        "on-time share of calls",
        "share",
        "higher",
        "delivery",
        True,
        _share("on_time_share", "calls"),
    ),
    Family(
        "executions_per_call",
        "executions per call",
        "ratio",
        "lower",
        "amplification",
        True,
        _executions_per_call,
    ),
    Family(
        "retry_share",
        "share of executions created by retries",
        "share",
        "lower",
        "amplification",
        True,
        _retry_share,
    ),
    Family(
        "wasted_prefill.aborted",
        "prefill share computed for aborted executions",
        "share",
        "lower",
        "wasted_prefill",
        True,
        _wasted("aborted"),
    ),
    Family(
        "wasted_prefill.finished_for_nobody",
        "prefill share finished for nobody",
        "share",
        "lower",
        "wasted_prefill",
        True,
        _wasted("finished_for_nobody"),
    ),
    Family(
        "counter_shortfall",
        "prompt-token counter shortfall",
        "share",
        "lower",
        "counters",
        True,
        _shortfall,
    ),
    Family(
        "queue_wait",
        "mean wait in the queue (Little's law)",
        "s",
        "lower",
        "littles_law",
        True,
        _queue_wait,
    ),
    Family(
        "capacity",
        "Ĉ, calls per second the service sustains",
        "per_s",
        "higher",
        "context",
        False,
        _capacity,
    ),
    Family(
        "recovery_s", "recovery time after the overload", "s", "lower", "delivery", False, _recovery
    ),
    Family(
        "ttft_mean",
        "mean time to first token (metrics)",
        "s",
        "lower",
        "verdict",
        False,
        _verdict_figure("ttft_mean", "vllm:time_to_first_token_seconds"),
    ),
    Family(
        "preemptions",
        "preemptions (metrics)",
        "count",
        "lower",
        "verdict",
        False,
        _verdict_figure("preemptions", "vllm:num_preemptions_total"),
    ),
    Family(
        "drain_s",
        "drained after: backlog back to its pre-pulse level",
        "s",
        "lower",
        "verdict",
        False,
        _drain,
    ),
    *(
        Family(
            f"{key}_p{round(q * 100)}",
            f"{label}, p{round(q * 100)} (estimate from {metric})",
            "s",
            "lower",
            "verdict",
            True,
            _latency(key, metric, q),
        )
        for key, label, metric in HISTOGRAMS
        for q in QUANTILES
    ),
    Family(
        "crashes_per_30d",
        "crashes per replica per 30 days (the error budget's C; burn grows with it)",
        "count",
        "lower",
        "restarts",
        False,
        _restarts("crashes_per_replica_per_30d"),
    ),
    Family(
        "planned_restarts_per_30d",
        "planned restarts per replica per 30 days (the error budget's P)",
        "count",
        "lower",
        "restarts",
        False,
        _restarts("planned_per_replica_per_30d"),
    ),
    Family(
        "streams_killed_per_crash",
        "streams a crash killed (gateway log)",
        "ratio",
        "lower",
        "restarts",
        False,
        _restarts(
            "streams_killed_per_crash", "no crash, or no gateway log to see the streams it cut"
        ),
    ),
    Family(
        "break_even_stream_s",
        "longest stream a 99.9 % budget over 30 days survives on crashes alone",
        "s",
        "higher",
        "restarts",
        False,
        _restarts("break_even_stream_s", "no crash in the window"),
    ),
)

# Asked for, but no analysis reports them: listed, never computed here.
NOT_IN_ANALYSES: tuple[tuple[str, str], ...] = (
    (
        "error_budget_burn",
        "the restarts analysis gives the budget's inputs, not a burn (that needs the stream"
        " duration d): compare crashes_per_30d and break_even_stream_s; streams of d seconds"
        " burn d / break_even_stream_s of a 99.9 % budget on crashes alone (relplan budget)",
    ),
)


def by_name(name: str) -> Family | None:
    return next((f for f in FAMILIES if f.name == name), None)
