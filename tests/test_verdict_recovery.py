"""Recovery, two ways, wherever recovery is reported (issue 24, Build 6 and Done when), and
the figures around it saying no more than their evidence (Build 1, 3, 5).

"recovered after" (the first planned-arrival bin after the overload from which calls are
on time again) and "drained after" (the engine's backlog back to its pre-pulse level) are
different figures (docs/analyses.md, "Recovery, two ways"): `relplan pulse`, `analyze`,
`report`, `simulate` and `whatif` each show both.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from relplan import workspace
from relplan.analyses import AnalyzeOptions, analyze
from relplan.analyses.assessment import DOWN, contradictions
from relplan.analyses.evidence import Figure
from relplan.cli import app
from relplan.text.verdict import figure_line, recovery_lines, render_verdict
from relplan.text.whatif import render_check
from relplan.whatif.model import Figures, FitCheck, WhatIf, WindowFigures
from tests.helpers.fast_cli import CliRunner
from tests.helpers.incident import build_incident
from tests.helpers.incident_cuts import build_cut

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


def test_pulse_gives_both_figures() -> None:
    """The pulse arithmetic of tests/test_verdict_honesty.py (154.75 s and 454.75 s) on the
    command line, in its table and its verdict sentence."""
    out = CliRunner().invoke(
        app,
        [
            "pulse",
            "--capacity",
            "2.85",
            "--base",
            "0.6",
            "--pulse",
            "2.7",
            "--pulse-seconds",
            "107",
            "--deadline",
            "120",
            "--retries",
            "0",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "recovered after (no retries): a new call's wait back to D  154.8 s" in out.stdout
    assert "drained after (no retries): the backlog gone               454.8 s" in out.stdout
    assert "455 s (drained after)" in out.stdout
    assert "155 s (recovered after)" in out.stdout


@pytest.mark.slow
def test_simulate_summary_gives_both_figures() -> None:
    """The simulator's summary of sample_data/pulse-retry-coalesce (docs/analyses.md's table:
    recovered after 270 s, drained after 442 s)."""
    from relplan.sim.summary import render_summary, summarize

    s = summarize(SAMPLE / "pulse-retry-coalesce")
    assert s.recovered_after_pulse_s == pytest.approx(270.0)
    assert s.drained_after_pulse_s is not None
    assert round(s.drained_after_pulse_s) == 442
    assert "recovered 270 s after the overload, drained after 442 s" in render_summary(s)


def _figures(verdict: str, rec: float | None, drained: float | None) -> Figures:
    return Figures(
        windows=[WindowFigures(window="hold", calls=10, delivered_share=1.0, on_time_share=0.9)],
        executions_per_call=1.0,
        accepted_x_capacity=0.6,
        completed_x_capacity=0.6,
        recovery_s=rec,
        drained_s=drained,
        verdict=verdict,
    )


def test_whatif_fit_check_gives_both_figures_of_the_incident_and_the_replay() -> None:
    check = FitCheck(
        incident=_figures("recovered", 270.0, 442.2),
        replay=_figures("recovered", 300.0, None),
        replay_seeds=[1],
        error=0.01,
        error_window=None,
        verdict_matches=True,
        trusted=True,
        reason="within 5 points",
    )
    text = render_check(WhatIf.model_construct(check=check))
    assert "recovered after 270 s (replay 300 s), drained after 442 s (replay -)" in text


@pytest.mark.slow
def test_analyze_and_report_give_both_figures_with_their_definitions(tmp_path: Path) -> None:
    from relplan.report.pipeline import collect_report_data

    db = build_incident(tmp_path / "inc.duckdb")
    with workspace.open_workspace(db, read_only=True) as con:
        res = analyze(con, AnalyzeOptions())
        data = collect_report_data(
            con,
            AnalyzeOptions(),
            fallback_name="incident",
            generated_at=datetime(2026, 1, 2, tzinfo=UTC),
        )
    a = res.verdict
    assert a is not None
    text = render_verdict(a, res.context.t0)
    assert "Recovery, two ways:" in text
    assert "drained after 20 s" in text  # tests/test_verdict_honesty.py computes it by hand
    assert "definitions: recovered after: seconds from the end of the overload" in text
    page = " ".join(data.verdict.reasons)
    assert "Recovery, two ways: " in page
    labels = {f.label: f.text for f in data.verdict.figures}
    drained = next(t for k, t in labels.items() if k.startswith("drained after"))
    assert drained == "20 s"
    # the verdict is not "down", so the report never says "not recovered" beside it
    assert a.verdict not in DOWN
    assert all(t != "not recovered" for t in labels.values())
    assert contradictions(a) == []


@pytest.mark.slow
def test_a_down_run_with_a_gateway_log_did_not_recover_and_asks_for_nothing_held(
    tmp_path: Path,
) -> None:
    """The bundled incident's gateway log alone (metastable, measured): "recovered after" is
    a finding, not a gap; it said "not recovered, or not measured: no on-time signal ... (a
    gateway log, ...)" with the gateway log ingested and 1 % of the hold on time."""
    db = build_cut("gateway", tmp_path)
    with workspace.open_workspace(db, read_only=True) as con:
        res = analyze(con, AnalyzeOptions())
    a = res.verdict
    assert a is not None
    assert a.verdict == "metastable"
    rec = next(f for f in a.figures if f.key == "recovered_after")
    assert (rec.status, rec.value) == ("measured", None)
    assert rec.note == "not recovered by the end of the data (the verdict: metastable)"
    assert recovery_lines(a)[0] == f"recovered after: {rec.note}"
    assert "gateway log" not in render_verdict(a).split("Not available:")[-1]
    assert contradictions(a) == []


def test_contradictions_catch_a_held_input_asked_for_in_a_note() -> None:
    """The check itself: a not-available figure's note naming a held input is flagged, as a
    'not recovered' beside a verdict of recovered is."""
    from relplan.analyses.assessment import Assessment

    def assessment(verdict: str, fig: Figure) -> Assessment:
        return Assessment.model_validate(
            {
                "verdict": verdict,
                "suspected": False,
                "basis": "b",
                "evidence": "e",
                "reasons": [],
                "figures": [fig.model_dump()],
                "present": ["gateway"],
                "settle": [],
            }
        )

    asks = Figure(
        key="recovered_after",
        label="recovered after",
        value=None,
        unit="s",
        status="not available",
        inputs=[],
        note="no on-time signal (a gateway log, or the e2e histogram and D)",
    )
    assert contradictions(assessment("metastable", asks))
    said = Figure(
        key="recovered_after",
        label="recovered after",
        value=None,
        unit="s",
        status="measured",
        inputs=[],
        note="not recovered by the end of the data",
    )
    assert contradictions(assessment("recovered", said))
    assert contradictions(assessment("metastable", said)) == []


def test_an_estimate_shows_its_spread_method_and_bucket_bounds() -> None:
    cap = Figure(
        key="capacity",
        label="Ĉ, calls per second",
        value=2.2,
        low=2.0,
        high=3.93,
        unit="per_s",
        status="estimated",
        inputs=["delivered attempts"],
        note="method: median completion rate over 8 bins",
    )
    assert figure_line(cap) == (
        "  Ĉ, calls per second: 2.2/s (2–3.93/s) [estimated: delivered attempts];"
        " method: median completion rate over 8 bins"
    )
    p90 = Figure(
        key="ttft_p90",
        label="time to first token, p90 (histogram estimate)",
        value=424.928,
        low=160.0,
        high=640.0,
        unit="s",
        status="estimated",
        inputs=["vllm:time_to_first_token_seconds"],
        note="bucket 160–640 s; p90 1.98 s before",
    )
    assert figure_line(p90) == (
        "  time to first token, p90 (histogram estimate): 425 s (bucket 160–640 s)"
        " [estimated: vllm:time_to_first_token_seconds]; p90 1.98 s before"
    )


@pytest.mark.slow
def test_draining_says_when_the_backlog_emptied_only_once_the_load_stopped(
    tmp_path: Path,
) -> None:
    """The lab's retries-no-cancel from the vLLM log and Prometheus, no D (client truth:
    metastable): the rates say draining; its backlog of 553 reached the pre-pulse level in
    the data's last second, after the drill had stopped sending. Both are said, and that the
    drain says nothing of service under load."""
    op = Path(__file__).resolve().parent / "data" / "lab" / "retries-no-cancel" / "operator"
    db = tmp_path / "w.duckdb"
    files = [str(op / f) for f in ("vllm.log.gz", "prometheus.query_range.json.gz")]
    got = CliRunner().invoke(app, ["ingest", *files, "--db", str(db)])
    assert got.exit_code == 0, got.output
    with workspace.open_workspace(db, read_only=True) as con:
        res = analyze(con, AnalyzeOptions())
    a = res.verdict
    assert a is not None
    assert (a.verdict, a.suspected) == ("draining", True)
    assert a.drain is not None
    assert a.drain.after_load_ended
    assert a.drain.peak == 553
    assert any("only once the load had stopped" in r for r in a.reasons)
    assert "not recovered by the end of the data" in recovery_lines(a)[0]
    assert contradictions(a) == []
