"""The summary `relplan simulate` prints, computed from the files the run WROTE.

This is a stand-in: the definitions are those of analyses.md (sections A-E), and `relplan
analyze` (being written separately) will compute the same figures from a workspace and
replace this module. Until then every summary figure is computed here and only here, with
DuckDB over `proxy.parquet`, `engine.parquet`, `metrics.om.txt` and `run.json`, using the
`queries/summary_*.sql` files; nothing comes from the simulator's memory, so the summary of a
run is what an analysis of its files would say.

Keys (all in `SimSummary`; documented in the README):
- `capacity_calls_per_s`: C^ from run.json;
- `phases.<name>`: `calls` (planned in the phase), `delivered_share` (delivered within the
  delivery window W of the planned arrival), `on_time_share` (within the deadline D),
  `accepted_rate_x_capacity` (engine `arrived` events, refusals excluded, per second / C^),
  `completed_rate_x_capacity` (`finished` events per second / C^);
- `recovered_after_pulse_s`: seconds from the end of the overload phase to the start of the
  first 30 s bin (by planned arrival, aligned on that end) with >= 5 calls and an on-time
  share >= 0.9 such that every later bin with >= 5 calls meets it too; null if none;
- `verdict`: `recovered`, `metastable` (not recovered; calls arrived at or below C^ while
  executions were accepted above it, mean rates over [end of overload, T]), `draining` (not
  recovered; accepted at or below C^), `overloaded` (calls kept arriving above C^),
  `insufficient data` (no bin of >= 5 calls after the overload, or no capacity);
  `after_overload` holds the figures behind it;
- `retry_share_of_executions`: executions created by retries / all executions created;
- `prefill.aborted_share`: computed prompt tokens of aborted executions / all computed prompt
  tokens; `prefill.in_flight_share_of_aborted`: of the aborted executions' computed prompt
  tokens, those in steps in flight at the abort (t_issue < t_abort <= t_done);
  `prefill.before_first_token_share`: computed tokens of executions aborted before their
  first output token / all computed tokens (the prefill vLLM's prompt counter never sees);
- `littles_law` (hold phase): `l_waiting`, `lambda_per_s`, `wq_s`, `consistency` = L/(lambda
  Wq), `deadline_saturation` = L/(lambda D);
- `counter_shortfall_hold`: 1 - rise(vllm:prompt_tokens_total) /
  rise(vllm:prefix_cache_queries_total) over the hold phase, counter-reset rule applied.
T, the end of the data, is the later of the last phase end and the last proxy or engine
timestamp. The hold phase is the phase named `hold`, else the phase after the overload.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import Field, ValidationError

from relplan import sql
from relplan.errors import InputError
from relplan.models import RunManifest, StrictModel

BIN_S = 30.0
MIN_BIN_CALLS = 5
ON_TIME_THRESHOLD = 0.9


class PhaseFigures(StrictModel):
    start_s: float
    end_s: float
    calls: int
    delivered_share: float | None
    on_time_share: float | None
    accepted_rate_x_capacity: float | None
    completed_rate_x_capacity: float | None


class PrefillFigures(StrictModel):
    computed_tokens: int
    aborted_share: float | None
    in_flight_share_of_aborted: float | None
    before_first_token_share: float | None


class LittlesLaw(StrictModel):
    phase: str | None
    l_waiting: float | None
    lambda_per_s: float | None
    wq_s: float | None
    consistency: float | None
    deadline_saturation: float | None


class AfterOverload(StrictModel):
    from_s: float | None
    to_s: float
    arrival_rate_x_capacity: float | None
    accepted_rate_x_capacity: float | None
    bins_with_calls: int


class SimSummary(StrictModel):
    name: str
    seed: int | None = None
    capacity_calls_per_s: float | None
    deadline_s: float | None
    delivery_window_s: float | None
    phases: dict[str, PhaseFigures]
    recovered_after_pulse_s: float | None
    verdict: str = Field(
        description="recovered | metastable | draining | overloaded | insufficient data"
    )
    after_overload: AfterOverload
    retry_share_of_executions: float | None
    prefill: PrefillFigures
    littles_law: LittlesLaw
    counter_shortfall_hold: float | None


_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)\s+(\S+)\s*$")


def read_openmetrics(path: Path) -> pa.Table:
    """Samples of an OpenMetrics text file as (t, name, series, value)."""
    ts: list[float] = []
    names: list[str] = []
    series: list[str] = []
    values: list[float] = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            m = _SAMPLE.match(line)
            if m is None:
                raise InputError("expected `name{labels} value timestamp`", str(path), line_no)
            names.append(m.group(1))
            series.append(m.group(2) or "")
            values.append(float(m.group(3)))
            ts.append(float(m.group(4)))
    return pa.table({"t": ts, "name": names, "series": series, "value": values})


def _one(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> tuple[Any, ...]:
    q = sql.load(name)
    row = con.execute(q.text, q.bind(params)).fetchone()
    assert row is not None
    return tuple(row)


def _share(part: float | None, whole: float | None) -> float | None:
    if part is None or not whole:
        return None
    return float(part) / float(whole)


def summarize(out: Path, seed: int | None = None) -> SimSummary:
    """Figures of a run from the four files in `out`."""
    try:
        man = RunManifest.model_validate_json((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise InputError(f"cannot read run manifest: {exc}", str(out / "run.json")) from None
    t0 = man.t0 or 0.0
    cap = man.capacity_calls_per_s
    deadline = man.deadline_s
    window = man.delivery_window_s
    con = duckdb.connect()
    try:
        for name, file in (
            ("summary_load_proxy", "proxy.parquet"),
            ("summary_load_events", "engine.parquet"),
            ("summary_load_steps", "engine.parquet"),
        ):
            q = sql.load(name)
            con.execute(q.text, q.bind({"path": str(out / file)}))
        con.register("summary_metrics", read_openmetrics(out / "metrics.om.txt"))

        phase_end = max((p.end for p in man.phases), default=0.0)
        t_last = _one(con, "summary_data_end", {})[0]
        t_end = max(t0 + phase_end, t_last if t_last is not None else t0)

        big = 1e300  # deadline/window when the run has none: every delivery counts
        phases: dict[str, PhaseFigures] = {}
        for p in man.phases:
            calls, deliv, ontime, acc, comp = _one(
                con,
                "summary_window_figures",
                {
                    "t_from": t0 + p.start,
                    "t_to": t0 + p.end,
                    "deadline": deadline if deadline is not None else big,
                    "window": window if window is not None else big,
                    "capacity": cap,
                },
            )
            phases[p.name] = PhaseFigures(
                start_s=p.start,
                end_s=p.end,
                calls=int(calls),
                delivered_share=deliv,
                on_time_share=ontime,
                accepted_rate_x_capacity=acc,
                completed_rate_x_capacity=comp,
            )

        # the overload phase and what came after it
        overload = next((p for p in man.phases if p.name == man.overload_phase), None)
        if overload is None:
            overload = next((p for p in man.phases if p.name == "pulse"), None)
        if overload is None and man.phases:
            overload = max(
                man.phases, key=lambda p: phases[p.name].calls / max(p.end - p.start, 1e-9)
            )
        recovered: float | None = None
        verdict = "insufficient data"
        after = AfterOverload(
            from_s=None,
            to_s=t_end - t0,
            arrival_rate_x_capacity=None,
            accepted_rate_x_capacity=None,
            bins_with_calls=0,
        )
        if overload is not None:
            a = t0 + overload.end
            q = sql.load("summary_recovery_bins")
            bins = con.execute(
                q.text,
                q.bind(
                    {
                        "t_from": a,
                        "t_to": t_end,
                        "deadline": deadline if deadline is not None else big,
                        "bin_s": BIN_S,
                    }
                ),
            ).fetchall()
            full = [(int(b), int(n), int(ok)) for b, n, ok in bins if n >= MIN_BIN_CALLS]
            good = [ok / n >= ON_TIME_THRESHOLD for _, n, ok in full]
            for i in range(len(full)):
                if all(good[i:]):
                    recovered = full[i][0] * BIN_S
                    break
            fig = _one(
                con,
                "summary_window_figures",
                {
                    "t_from": a,
                    "t_to": t_end,
                    "deadline": deadline if deadline is not None else big,
                    "window": window if window is not None else big,
                    "capacity": cap,
                },
            )
            arr_x = None if cap is None else fig[0] / (t_end - a) / cap
            acc_x = fig[3]
            after = AfterOverload(
                from_s=overload.end,
                to_s=t_end - t0,
                arrival_rate_x_capacity=arr_x,
                accepted_rate_x_capacity=acc_x,
                bins_with_calls=len(full),
            )
            if not full:
                verdict = "insufficient data"
            elif recovered is not None:
                verdict = "recovered"
            elif arr_x is None or acc_x is None:
                verdict = "insufficient data"
            elif arr_x > 1.0:
                verdict = "overloaded"
            elif acc_x > 1.0:
                verdict = "metastable"
            else:
                verdict = "draining"

        retry_share = _one(con, "summary_retry_share", {})[0]
        computed, aborted, in_flight, before_first = _one(con, "summary_wasted_prefill", {})
        prefill = PrefillFigures(
            computed_tokens=int(computed),
            aborted_share=_share(aborted, computed),
            in_flight_share_of_aborted=_share(in_flight, aborted),
            before_first_token_share=_share(before_first, computed),
        )

        hold = next((p for p in man.phases if p.name == "hold"), None)
        if hold is None and overload is not None:
            later = [p for p in man.phases if p.start >= overload.end]
            hold = later[0] if later else None
        littles = LittlesLaw(
            phase=None,
            l_waiting=None,
            lambda_per_s=None,
            wq_s=None,
            consistency=None,
            deadline_saturation=None,
        )
        shortfall: float | None = None
        if hold is not None:
            h_from, h_to = t0 + hold.start, t0 + hold.end
            lw, lam, wq = _one(
                con, "summary_littles_law", {"t_from": h_from, "t_to": h_to, "t_end": t_end}
            )
            littles = LittlesLaw(
                phase=hold.name,
                l_waiting=lw,
                lambda_per_s=lam,
                wq_s=wq,
                consistency=_share(lw, (lam or 0) * (wq or 0)),
                deadline_saturation=(
                    _share(lw, (lam or 0) * deadline) if deadline is not None else None
                ),
            )
            q = sql.load("summary_counter_rise")
            rises = dict(con.execute(q.text, q.bind({"t_from": h_from, "t_to": h_to})).fetchall())
            prompt = rises.get("vllm:prompt_tokens_total", rises.get("vllm:prompt_tokens"))
            queries = rises.get(
                "vllm:prefix_cache_queries_total", rises.get("vllm:prefix_cache_queries")
            )
            if prompt is not None and queries:
                shortfall = 1.0 - float(prompt) / float(queries)
    finally:
        con.close()

    return SimSummary(
        name=man.name,
        seed=seed if seed is not None else man.meta.get("seed"),
        capacity_calls_per_s=cap,
        deadline_s=deadline,
        delivery_window_s=window,
        phases=phases,
        recovered_after_pulse_s=recovered,
        verdict=verdict,
        after_overload=after,
        retry_share_of_executions=retry_share,
        prefill=prefill,
        littles_law=littles,
        counter_shortfall_hold=shortfall,
    )


def render_summary(s: SimSummary) -> str:
    """The one-screen human summary."""
    from relplan.tables import format_table, num, pct

    rows = []
    for name, p in s.phases.items():
        rows.append(
            [
                name,
                f"{p.start_s:g}-{p.end_s:g} s",
                num(p.calls),
                pct(p.delivered_share),
                pct(p.on_time_share),
                num(p.accepted_rate_x_capacity, 2),
                num(p.completed_rate_x_capacity, 2),
            ]
        )
    table = format_table(
        ["phase", "window", "calls", "delivered", "on time", "accepted xC", "completed xC"],
        rows,
        left=(0, 1),
    )
    rec = (
        f"recovered {s.recovered_after_pulse_s:g} s after the overload"
        if s.recovered_after_pulse_s is not None
        else "not recovered"
    )
    ao = s.after_overload
    lines = [
        f"{s.name} (seed {s.seed}): capacity C^ = {num(s.capacity_calls_per_s, 2)} calls/s",
        "",
        table,
        "",
        f"verdict: {s.verdict} ({rec}; after the overload calls arrived at "
        f"{num(ao.arrival_rate_x_capacity, 2)} x C^, executions accepted at "
        f"{num(ao.accepted_rate_x_capacity, 2)} x C^)",
        f"executions created by retries: {pct(s.retry_share_of_executions)}",
        f"prefill: aborted {pct(s.prefill.aborted_share)} of computed prompt tokens; "
        f"{pct(s.prefill.in_flight_share_of_aborted)} of that in flight at the abort; "
        f"{pct(s.prefill.before_first_token_share)} aborted before the first token",
        f"hold: deadline saturation L/(lambda D) = {num(s.littles_law.deadline_saturation, 2)}; "
        f"prompt-token counter shortfall = {pct(s.counter_shortfall_hold)}",
    ]
    return "\n".join(lines)


def summary_json(s: SimSummary) -> str:
    return json.dumps(s.model_dump(mode="json"), indent=2)
