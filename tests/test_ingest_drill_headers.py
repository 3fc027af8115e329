"""nginx logs that carry relplan drill's call-key headers link attempts into calls without
--call-key (docs/formats.md, calls and attempts): the lab's nginx JSON log
(tests/data/ingest/lab/nginx-access-head60.json, recorded on the lab) and a real incident's
(tests/data/lab/retries-cancel/operator/access.json.gz, 797 attempts of 237 calls)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

DATA = Path(__file__).resolve().parent / "data"


def test_the_drill_headers_link_attempts_without_call_key(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    src = ingest(db, DATA / "lab" / "retries-cancel" / "operator" / "access.json.gz").sources[0]
    assert any(n.startswith("calls linked by http_x_relplan_call") for n in src.notes)
    # the drill's 237 calls, plus its two probes (no call key: a call each)
    assert rows(db, "select count(distinct call_id), count(*) from attempts") == [(239, 799)]
    assert rows(db, "select max(attempt) from attempts") == [(3,)]


def test_a_given_call_key_wins_over_the_drill_headers(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    got = ingest(db, DATA / "ingest" / "lab" / "nginx-access-head60.json", call_key="X-Request-Id")
    assert not any(n.startswith("calls linked by") for n in got.sources[0].notes)
    # X-Request-Id is <call>-<attempt>: every attempt its own call
    assert rows(db, "select max(attempt) from attempts") == [(0,)]
