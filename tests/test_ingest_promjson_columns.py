"""A query_range response staged as columns (relplan/ingest/metrics/promjson.py): a series
whose pairs are all well formed is taken whole, one with a bad pair goes pair by pair; a
large response goes to DuckDB as one Arrow batch, a small one row by row. Both ways must
store the same rows in the same order, with the same rejects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from relplan.ingest.metrics import promjson
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

T0 = 1796316459.205


def _doc() -> dict[str, Any]:
    """1,500 samples over 15 series (more than SMALL_BATCH), labels differing per series,
    values repeated (counters), NaN and +Inf, a bad pair in three series, a nameless one."""
    result: list[dict[str, Any]] = []
    for k in range(15):
        metric = {"__name__": f"vllm:m{k % 5}_total", "pod": f"p{k}", "job": "vllm"}
        values: list[Any] = [[T0 + i, str((i // 7) * k)] for i in range(100)]
        result.append({"metric": metric, "values": values})
    result[3]["values"][10] = [T0 + 10, "abc"]
    result[6]["values"][0] = ["12", "1"]
    result[9]["values"][99] = [T0 + 99, "1", 3]
    result[11]["values"][5] = [T0 + 5, 5]  # a number, not a string: still read
    result[12]["values"][1:3] = [[T0 + 1, "NaN"], [T0 + 2, "+Inf"]]
    result.append({"metric": {"job": "vllm"}, "values": [[T0, "1"]]})
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


_SAMPLES = "select source_row, t, name, map_entries(labels), value::varchar from metric_samples"
_REJECTS = "select line, raw, reason from rejects"


def _stored(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    return rows(db, _SAMPLES), rows(db, _REJECTS)


def test_large_response_stores_the_rows_the_row_by_row_path_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "range.json"
    f.write_text(json.dumps(_doc()), encoding="utf-8")
    columns = tmp_path / "columns.duckdb"
    rep = ingest(columns, f, on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (1497, 4)
    monkeypatch.setattr(promjson, "SMALL_BATCH", 10**9)
    by_row = tmp_path / "by_row.duckdb"
    ingest(by_row, f, on_error="skip")
    samples, rejects = _stored(columns)
    assert (samples, rejects) == _stored(by_row)
    lns = [r[0] for r in samples]
    assert lns == sorted(set(lns))
    assert [r[0] for r in rejects] == [311, 601, 1000, 1501]
    labels = [{"key": "pod", "value": "p0"}, {"key": "job", "value": "vllm"}]
    assert samples[0] == (1, T0, "vllm:m0_total", labels, "0.0")
    by_ln = {r[0]: r for r in samples}
    assert by_ln[1106][4] == "5.0"  # series 11's number 5, read as "5"
    assert (by_ln[1202][4], by_ln[1203][4]) == ("nan", "inf")
    labels = [{"key": "pod", "value": "p14"}, {"key": "job", "value": "vllm"}]
    assert by_ln[1401][2:4] == ("vllm:m4_total", labels)


def test_large_response_with_a_bad_pair_fails_naming_it(tmp_path: Path) -> None:
    from relplan.errors import InputError

    f = tmp_path / "range.json"
    f.write_text(json.dumps(_doc()), encoding="utf-8")
    with pytest.raises(InputError, match=r"data\.result\[3\]\.values\[10\]: value 'abc'"):
        ingest(tmp_path / "w.duckdb", f)
