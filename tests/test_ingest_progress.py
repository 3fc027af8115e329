"""Within-file progress: while a large file is read, the callback hears bytes read inside
it (DuckDB's query progress, polled), never going backwards, before the file is done."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from relplan.ingest import IngestOptions, driver
from relplan.workspace import open_workspace

T0 = 1764460800.0


@pytest.mark.slow
def test_a_large_jsonl_file_reports_progress_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "engine.jsonl"
    con = duckdb.connect()
    con.execute(
        "copy (select 'step' as type, i as step, $t0 + i * 0.03 as t_issue,"
        " $t0 + i * 0.03 + 0.02 as t_done, 'x' || (i // 100) as execution_id,"
        " 10 as prompt_computed from range(300000) r(i))"
        f" to '{trace}' (format json)",
        {"t0": T0},
    )
    con.close()
    size = trace.stat().st_size
    monkeypatch.setattr(driver, "POLL_S", 0.01)
    calls: list[tuple[int, int, str]] = []
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        rep = driver.ingest_files(
            ws, [trace], IngestOptions(), lambda d, t, p: calls.append((d, t, p))
        )
    assert rep.rows_by_table["steps"] == 300000
    inside = [d for d, t, p in calls if p == str(trace) and 0 < d < size]
    assert inside, calls
    assert inside == sorted(inside)
    assert all(t == size for _, t, _ in calls)
    assert (size, size, "") in calls
