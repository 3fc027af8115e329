"""The report's "What would have helped" section, built from a what-if result handed over by
the caller (the report never runs the simulator itself)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest

from relplan.analyses import AnalyzeOptions
from relplan.errors import NoDataError
from relplan.report.charts import chart_specs
from relplan.report.pipeline import collect_report_data, render_page
from relplan.whatif import for_report
from relplan.whatif.model import (
    ControlOutcome,
    Figures,
    FitCheck,
    Spread,
    WhatIf,
    WindowFigures,
)

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _figures(delivered: float, verdict: str) -> Figures:
    return Figures(
        windows=[
            WindowFigures(
                window="overload+later",
                calls=100,
                delivered_share=delivered,
                on_time_share=delivered,
            )
        ],
        executions_per_call=2.0,
        accepted_x_capacity=2.0,
        completed_x_capacity=0.1,
        recovery_s=None,
        verdict=verdict,
    )


def _control(name: str, delivered: float, verdict: str) -> ControlOutcome:
    s = Spread(median=delivered, low=delivered, high=delivered)
    return ControlOutcome(
        name=name,
        label=name.replace("-", " "),
        sets=[],
        seeds=[1],
        delivered_share=s,
        on_time_share=s,
        recovery_s=Spread(median=30.0, low=30.0, high=30.0),
        executions_per_call=Spread(median=1.0, low=1.0, high=1.0),
        verdicts=[verdict],
        verdict=verdict,
    )


WHATIF = WhatIf(
    name="x",
    capacity_calls_per_s=2.8,
    deadline_s=120.0,
    fit=[],
    check=FitCheck(
        incident=_figures(0.2, "metastable"),
        replay=_figures(0.22, "metastable"),
        replay_seeds=[1],
        error=0.02,
        error_window="overload+later",
        verdict_matches=True,
        trusted=True,
        reason="ok",
    ),
    controls=[
        _control("no-retries", 0.75, "recovered"),
        _control("coalesce-deferred", 1.0, "recovered"),
        ControlOutcome(
            name="magic", label="magic", sets=[], available=False, reason="not modelled"
        ),
    ],
    ranked=["coalesce-deferred", "no-retries"],
    settings=[],
    seeds=1,
    wall_s=1.0,
    replay_cpu_s=1.0,
)


def test_section_shows_the_incident_then_the_controls_best_first(incident_db: Path) -> None:
    con = duckdb.connect(str(incident_db), read_only=True)
    try:
        data = collect_report_data(
            con,
            AnalyzeOptions(),
            fallback_name="x",
            generated_at=WHEN,
            extras={"whatif": lambda c, o: WHATIF},
        )
    finally:
        con.close()
    sec = data.whatif
    assert sec is not None
    assert sec.table is not None
    assert [r[0] for r in sec.table.rows] == [
        "as observed (the incident)",
        "coalesce deferred",
        "no retries",
        "magic",
    ]
    assert sec.table.rows[-1][-1] == "not replayed: not modelled"
    assert "1 seed per control" in sec.finding
    assert "Best: coalesce deferred, 100.0 %" in sec.finding
    assert [b.control for b in sec.bars] == ["coalesce-deferred", "no-retries"]
    assert "whatif" in chart_specs(data)
    page = render_page(data)
    assert '<section id="whatif"' in page
    assert "What would have helped" in page


def test_a_replay_that_cannot_run_is_listed_with_its_reason(incident_db: Path) -> None:
    def refuse(con: duckdb.DuckDBPyConnection, opts: AnalyzeOptions) -> WhatIf:
        raise NoDataError("whatif needs the calls")

    con = duckdb.connect(str(incident_db), read_only=True)
    try:
        data = collect_report_data(
            con, AnalyzeOptions(), fallback_name="x", generated_at=WHEN, extras={"whatif": refuse}
        )
    finally:
        con.close()
    assert data.whatif is None
    items = {(m.section, m.reason) for m in data.missing.items}
    assert ("What would have helped", "Whatif needs the calls.") in items


def test_report_without_extras_has_no_whatif_section(incident_db: Path) -> None:
    con = duckdb.connect(str(incident_db), read_only=True)
    try:
        data = collect_report_data(con, AnalyzeOptions(), fallback_name="x", generated_at=WHEN)
    finally:
        con.close()
    assert data.whatif is None
    assert "whatif" not in chart_specs(data)


@pytest.mark.parametrize("verdict", ["recovered", "insufficient data"])
def test_the_report_replays_nothing_for_an_incident_with_nothing_to_improve(
    monkeypatch: pytest.MonkeyPatch, verdict: str
) -> None:
    import relplan.whatif.figures as figures_mod

    monkeypatch.setattr(figures_mod, "figures", lambda con, opts: _figures(1.0, verdict))
    with pytest.raises(NoDataError, match="not replayed"):
        for_report._start(None, AnalyzeOptions(), None)  # type: ignore[arg-type]


def test_only_a_workspace_file_open_read_only_is_handed_to_the_worker(tmp_path: Path) -> None:
    from relplan import workspace

    db = tmp_path / "w.duckdb"
    with workspace.open_workspace(db) as con:
        assert for_report._read_only_file(con) is None  # another connection may write it
    with workspace.open_workspace(db, read_only=True) as con:
        assert for_report._read_only_file(con) == str(db)
    memory = duckdb.connect()
    try:
        assert for_report._read_only_file(memory) is None
    finally:
        memory.close()


def _whatif_each_way(
    db: Path, monkeypatch: pytest.MonkeyPatch, *workers: int
) -> tuple[WhatIf | str, list[WhatIf | str], int]:
    """The report's what-if of `db` fitted in this process, then fitted by one of a pool's
    workers for each count in `workers` (and how many of those workers' plans ran), the
    what-if cache off; a reason when nothing replays. With workers, a replay in this process
    fails the test: the workers replay every run."""
    from relplan import workspace
    from relplan.whatif import replay
    from relplan.whatif.replay import replay_pool

    monkeypatch.setenv("RELPLAN_WHATIF_CACHE", "0")
    planned: list[object] = []
    begin = for_report._InWorker.__init__

    def spy(self: for_report._InWorker, *args: object) -> None:
        begin(self, *args)  # type: ignore[arg-type]
        planned.append(self)

    monkeypatch.setattr(for_report._InWorker, "__init__", spy)
    run_one, command = replay.run_one, os.getpid()

    def only_in_a_worker(task: replay.Task) -> object:
        assert os.getpid() != command, "the command's process replayed a run"
        return run_one(task)

    out: list[WhatIf | str] = []
    with workspace.open_workspace(db, read_only=True) as con:
        for pool_size in (1, *(n + 1 for n in workers)):
            with replay_pool(pool_size, warm=False) as pool:
                if pool is not None:
                    monkeypatch.setattr(replay, "run_one", only_in_a_worker)
                try:
                    reopen = functools.partial(workspace.connect, read_only=True)
                    whatif = for_report.report_whatif(
                        con, AnalyzeOptions(), pool=pool, reopen=reopen
                    )
                    out.append(whatif())
                except NoDataError as exc:
                    out.append(str(exc))
    return out[0], out[1:], len(planned)


def test_a_reason_found_by_the_worker_reads_as_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_whatif_fit import _write_incident

    here, [worker], planned = _whatif_each_way(_write_incident(tmp_path / "in"), monkeypatch, 1)
    assert planned == 1
    assert isinstance(here, str)
    assert here.startswith("not replayed")
    assert worker == here


@pytest.mark.slow
def test_the_workers_fit_and_replay_as_this_process_does(
    simulated_run: Callable[[str, int], Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One worker, then two, give the what-if this process gives (fitted here once: it was
    fitted again beside each pool size)."""
    from relplan import workspace
    from relplan.ingest.base import IngestOptions
    from relplan.ingest.driver import ingest_files

    db = tmp_path / "incident.duckdb"
    with workspace.open_workspace(db) as con:
        ingest_files(con, [simulated_run("pulse-retry-cancel", 1)], IngestOptions())
    here, workers, planned = _whatif_each_way(db, monkeypatch, 1, 2)
    assert planned == 2
    assert isinstance(here, WhatIf)
    assert len(here.controls) > 1
    timings = {"wall_s", "replay_cpu_s"}
    for n, worker in zip((1, 2), workers, strict=True):
        assert isinstance(worker, WhatIf), n
        assert worker.model_dump(exclude=timings) == here.model_dump(exclude=timings), n


@pytest.mark.slow
def test_ctrl_c_while_the_workers_replay_is_one_line_exit_130_and_no_page_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report interrupted while its command waits for the workers' replays (its thread
    has handed them out): one line, exit 130, no page, and the workers stop with it."""
    from tests.test_faults import _interrupt_inside, _relplan_inside_call

    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out" / "report.html"
    sample = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"
    proc = _relplan_inside_call(
        "relplan.whatif.replay:collect_tasks", "report", str(sample), "--out", str(out)
    )
    err = _interrupt_inside(proc)
    assert proc.returncode == 130, err
    assert err == "relplan: interrupted; nothing stored\n"
    assert not out.exists()
