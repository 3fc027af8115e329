"""The report built from a real workspace through `relplan.analyses.analyze`.

The fixture incident is the analyses' hand-built one (tests/helpers/incident.py: capacity
0.05 calls/s, D = 30 s, phases base [0, 60), pulse [60, 120), hold [120, 240)).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from relplan import workspace
from relplan.analyses import AnalyzeOptions, analyze
from relplan.cli import app
from relplan.report.data import ReportData
from relplan.report.pipeline import collect_report_data, default_out, make_report
from relplan.report.section import report_model
from tests.helpers.fast_cli import CliRunner
from tests.helpers.incident import ATTEMPTS, MANIFEST, T0, build_incident
from tests.helpers.report_samples import HOSTILE

GENERATED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
runner = CliRunner()


def _data(path: Path, opts: AnalyzeOptions | None = None) -> ReportData:
    with workspace.open_workspace(path, read_only=True) as con:
        return collect_report_data(
            con, opts or AnalyzeOptions(), fallback_name=path.stem, generated_at=GENERATED_AT
        )


@pytest.fixture(scope="module")
def incident(incident_db: Path) -> Path:
    """The shared hand-built incident (conftest.py); tests that change it build their own."""
    return incident_db


@pytest.fixture(scope="module")
def incident_data(incident: Path) -> ReportData:
    return _data(incident)


def test_report_data_model_snapshot(incident_data: ReportData, snapshot: SnapshotAssertion) -> None:
    assert incident_data.model_dump(mode="json") == snapshot.use_extension(JSONSnapshotExtension)


def test_load_bins_are_the_analyses_counts_as_rates_of_capacity(incident_data: ReportData) -> None:
    """Bin [0, 30): calls c1 (planned 0) and c2 (planned 10) -> 2 calls / 30 s / 0.05 = 1.33×.
    Bin [60, 90): c3, c4, c5, c6, c7 planned at 60..80 -> 5 / 30 / 0.05 = 3.33×."""
    bins = {b.start_s: b for b in incident_data.amplification.bins}
    assert bins[0.0].calls == pytest.approx(2 / 30 / 0.05)
    assert bins[60.0].calls == pytest.approx(5 / 30 / 0.05)
    assert incident_data.amplification.rate_unit == "x capacity"


def test_figures_come_from_the_analyses_unchanged(
    incident: Path, incident_data: ReportData
) -> None:
    with workspace.open_workspace(incident, read_only=True) as con:
        res = analyze(con, AnalyzeOptions())
    assert res.delivery is not None
    assert res.delivery.recovery is not None
    # too few calls per bin for the recovery rule: the verdict comes from the assessment
    assert res.delivery.recovery.verdict == "insufficient data"
    assert res.verdict is not None
    ladder = [f.value for f in res.verdict.figures if f.status != "not available"]
    assert [f.value for f in incident_data.verdict.figures] == ladder
    assert incident_data.verdict.verdict == res.verdict.verdict
    assert incident_data.delivery.finding == res.delivery.finding
    assert [b.on_time_share for b in incident_data.delivery.bins] == [
        b.on_time_share for b in res.delivery.series
    ]
    assert res.wasted_prefill is not None
    run = res.wasted_prefill.windows[0]
    assert incident_data.wasted_prefill.total_tokens == run.computed_tokens
    assert sum(f.tokens for f in incident_data.wasted_prefill.fates) == run.computed_tokens


def test_without_metrics_the_counter_and_health_sections_say_what_is_missing(
    tmp_path: Path,
) -> None:
    data = _data(build_incident(tmp_path / "nometrics.duckdb", metrics=False))
    assert not data.counters.available
    assert "vllm:prompt_tokens_total" in " ".join(data.counters.missing)
    assert not data.health.available
    assert data.amplification.available
    assert data.wasted_prefill.available
    sections = {m.section for m in data.missing.items}
    assert {"Counters that miss it", "Engine health signals"} <= sections


def test_without_a_proxy_log_the_verdict_is_suspected_from_the_engine_trace(
    tmp_path: Path,
) -> None:
    data = _data(build_incident(tmp_path / "noproxy.duckdb", proxy=False))
    assert data.verdict.verdict != "insufficient data"
    assert data.verdict.headline.startswith("Suspected")
    assert not data.delivery.available
    assert any("gateway log" in r for r in data.verdict.reasons)


@pytest.mark.slow
def test_hostile_run_name_is_kept_as_text_and_never_reaches_a_path(tmp_path: Path) -> None:
    ws = build_incident(tmp_path / "hostile.duckdb")
    con = duckdb.connect(str(ws))
    con.execute("update manifests set name = ?", [HOSTILE])
    con.execute("update attempts set model = ?", [HOSTILE])
    con.close()
    data = _data(ws)
    assert data.run_name == HOSTILE
    out = default_out(data.run_name)
    assert out.parent == Path("reports")
    assert "/" not in out.name
    assert "<" not in out.name
    files = make_report(ws, out=tmp_path / "r.html", generated_at=GENERATED_AT)
    html = files.html.read_text()
    assert HOSTILE not in html
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.slow
def test_report_command_writes_the_page_the_chart_images_and_the_json(
    incident: Path, tmp_path: Path
) -> None:
    out = tmp_path / "page" / "incident.html"
    res = runner.invoke(
        app,
        [
            "report",
            str(incident),
            "--out",
            str(out),
            "--svg",
            str(tmp_path / "svg"),
            "--data-json",
            str(tmp_path / "data.json"),
        ],
    )
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip() == str(out)
    assert "MB" in res.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    charts = {
        "amplification",
        "delivery",
        "wasted_prefill",
        "counters",
        "littles_law",
        "retry_timing",
        "health",
    }
    assert {p.stem for p in (tmp_path / "svg").iterdir()} == charts
    model = report_model().model_validate_json((tmp_path / "data.json").read_text())
    assert model.run_name == "fixture-incident"


@pytest.mark.slow
def test_report_on_a_directory_of_raw_inputs_ingests_them_first(tmp_path: Path) -> None:
    raw = tmp_path / "incident-dir"
    raw.mkdir()
    cols = (
        "call_id",
        "attempt",
        "t_planned",
        "t_sent",
        "t_end",
        "outcome",
        "execution_id",
        "attached",
        "t_cancel",
        "replica",
        "prompt_tokens",
    )
    with (raw / "proxy.jsonl").open("w") as fh:
        for row in ATTEMPTS:
            rec = dict(zip(cols, row, strict=True))
            for key in ("t_planned", "t_sent", "t_end", "t_cancel"):
                if rec[key] is not None:
                    rec[key] = T0 + float(rec[key])  # type: ignore[arg-type]
            fh.write(json.dumps({k: v for k, v in rec.items() if v is not None}) + "\n")
    (raw / "run.json").write_text(json.dumps(MANIFEST))
    out = tmp_path / "raw.html"
    res = runner.invoke(
        app, ["report", str(raw), "--out", str(out), "--data-json", str(tmp_path / "d.json")]
    )
    assert res.exit_code == 0, res.stderr
    data = report_model().model_validate_json((tmp_path / "d.json").read_text())
    assert data.footer.row_counts["attempts"] == len(ATTEMPTS)
    assert [s.name for s in data.footer.sources] == ["proxy.jsonl", "run.json"]
    assert data.delivery.available
    assert not data.wasted_prefill.available  # no engine trace
    written_beside = {p.name for p in raw.iterdir()} - {"proxy.jsonl", "run.json"}
    assert written_beside == set(), "nothing is written beside the inputs"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "no/such/dir"], "no/such/dir: no such file or directory"),
        (["report", "--db", "no-such.duckdb"], "no-such.duckdb: no workspace here"),
    ],
)
def test_report_command_input_errors_are_one_line(args: list[str], message: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: ")
    assert message in res.stderr
    assert "Traceback" not in res.stderr


def test_workspace_path_and_db_together_is_a_usage_error(incident: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(incident), "--db", str(tmp_path / "x.duckdb")])
    assert res.exit_code == 2
    assert "--db" in res.stderr


@pytest.mark.slow
def test_quick_start_report_on_the_bundled_sample_explains_the_incident(tmp_path: Path) -> None:
    """The README's Quick start command: the sample incident is metastable, on a small page."""
    sample = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"
    files = make_report(
        sample,
        out=tmp_path / "sample.html",
        json_path=tmp_path / "sample.json",
        generated_at=GENERATED_AT,
    )
    data = report_model().model_validate_json((tmp_path / "sample.json").read_text())
    assert data.run_name == "pulse-retry-cancel"
    assert data.verdict.verdict == "metastable"
    assert files.html_bytes < 1_500_000
    html = files.html.read_text(encoding="utf-8")
    assert html.count("<script") == 3  # the Vega bundle, the specs, the embedding code
    markup = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.DOTALL)
    assert re.findall(r"<[a-z]+[^>]*\ssrc=", markup) == []  # nothing loaded from anywhere
    assert {h for h in re.findall(r'\shref="([^"]*)"', markup) if not h.startswith("#")} == set()
    assert all(
        getattr(data, name).available
        for name in (
            "amplification",
            "delivery",
            "wasted_prefill",
            "counters",
            "littles_law",
            "retry_timing",
            "health",
        )
    )


def test_out_that_is_a_directory_is_a_usage_error_and_writes_nothing(
    incident: Path, tmp_path: Path
) -> None:
    res = runner.invoke(app, ["report", str(incident), "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: --out: ")
    assert "is a directory" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_png_into_a_file_is_a_usage_error_before_anything_is_written(
    incident: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    res = runner.invoke(
        app, ["report", str(incident), "--out", str(tmp_path / "r.html"), "--png", str(blocker)]
    )
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: --png: {blocker} exists and is not a directory")
    assert not (tmp_path / "r.html").exists()
