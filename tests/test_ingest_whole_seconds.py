"""Whole-second times lose to finer ones (issue 23 part 5; docs/formats.md, "Whole-second
times"), on a real lab incident (tests/data/lab/README.md, `retries-cancel`): vLLM's log
writes `MM-DD HH:MM:SS`, nginx's JSON log `$msec`. An `arrived` or `aborted` event of the
vLLM log whose joined gateway attempt starts (ends) inside the logged second takes the
attempt's time; one outside it keeps its logged second."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

OP = Path(__file__).resolve().parent / "data" / "lab" / "retries-cancel" / "operator"
KEYS = {"call_key": "http_x_relplan_call", "attempt_field": "http_x_relplan_attempt"}
EVENTS = "select execution_id, event, t from events order by 1, 2, 3"
PAIRS = (
    "select e.event, e.t, a.t_sent, a.t_end from events e join attempts a using (execution_id)"
    " order by a.t_sent, e.event"
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], float]:
    """The times the vLLM log alone gives (whole seconds)."""
    db = tmp_path_factory.mktemp("log") / "w.duckdb"
    ingest(db, OP / "vllm.log.gz")
    return {(x, ev): t for x, ev, t in rows(db, EVENTS)}


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("both") / "w.duckdb"
    ingest(db, OP / "vllm.log.gz")
    rep = ingest(db, OP / "access.json.gz", **KEYS)
    notes = rep.sources[0].notes
    assert any(
        n.startswith("1522 whole-second event times of source 1 set to the finer times")
        for n in notes
    ), notes
    return db


def test_the_vllm_log_alone_has_whole_seconds(logged: dict[tuple[str, str], float]) -> None:
    assert len(logged) == 798 + 726
    assert all(t == int(t) for t in logged.values())


def test_a_finer_time_inside_the_logged_second_wins(
    both: Path, logged: dict[tuple[str, str], float]
) -> None:
    refined = {"arrived": 0, "aborted": 0}
    for event, t, t_sent, t_end in rows(both, PAIRS):
        finer = t_sent if event == "arrived" else t_end
        s = next(v for (x, ev), v in logged.items() if ev == event and v <= t < v + 1)
        if s <= finer < s + 1:
            assert t == finer
            refined[event] += 1
        else:  # the gateway's time lies outside the second vLLM logged: not the same instant
            assert t == int(t)
    # The lab run: 797 of 798 arrivals started at nginx inside vLLM's logged second (one 3 ms
    # before it), 725 of 726 aborts ended there (one a hair before).
    assert refined == {"arrived": 797, "aborted": 725}


def test_every_stored_time_stays_inside_its_logged_second(
    both: Path, logged: dict[tuple[str, str], float]
) -> None:
    got = {(x, ev): t for x, ev, t in rows(both, EVENTS)}
    assert got.keys() == logged.keys()
    assert all(logged[k] <= t < logged[k] + 1 for k, t in got.items())


def test_no_abort_precedes_the_gateway_end_once_refined(
    both: Path, tmp_path: Path, logged: dict[tuple[str, str], float]
) -> None:
    """Whole seconds put almost every abort before nginx closed the request (the floor of the
    second); with the finer times, an abort is never before the end that caused it."""
    early = (
        "select count(*) from events e join attempts a using (execution_id)"
        " where e.event = 'aborted' and e.t < a.t_end - 0.0005"
    )
    assert rows(both, early) == [(0,)]
    ends = dict(rows(both, "select execution_id, t_end from attempts"))
    floored = sum(1 for (x, ev), t in logged.items() if ev == "aborted" and t < ends[x] - 0.0005)
    assert floored == 725  # all but the one that ended a hair before its logged second


def test_the_order_of_the_files_does_not_matter(both: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, OP / "access.json.gz", **KEYS)
    rep = ingest(db, OP / "vllm.log.gz")
    assert any("1522 whole-second event times" in n for n in rep.sources[0].notes)
    assert rows(db, EVENTS) == rows(both, EVENTS)
    ingest(db, OP / "prometheus.query_range.json.gz")  # a later source changes nothing
    assert rows(db, EVENTS) == rows(both, EVENTS)


def test_one_ingest_of_both_files_into_a_new_workspace_refines_as_two(
    both: Path, tmp_path: Path
) -> None:
    # A new workspace's sources are all the ingest's own (driver.Session.fresh): the whole
    # seconds are looked for among them without asking the workspace, with the same result.
    db = tmp_path / "w.duckdb"
    rep = ingest(db, OP / "vllm.log.gz", OP / "access.json.gz", **KEYS)
    assert any("1522 whole-second event times" in n for s in rep.sources for n in s.notes)
    assert rows(db, EVENTS) == rows(both, EVENTS)


def test_an_engine_source_with_finer_times_wins_over_the_gateway(tmp_path: Path) -> None:
    """The same events from a sub-second engine record (relplan's canonical engine JSONL,
    docs/formats.md; written here for three of the lab log's own executions, 0.25 s into
    the logged second) win over the joined gateway attempts' times."""
    db = tmp_path / "w.duckdb"
    ingest(db, OP / "vllm.log.gz")
    arrivals = "select execution_id, t from events where event = 'arrived' and source_id = 1"
    picked = rows(db, arrivals + " order by 2, 1")[10:13]
    trace = tmp_path / "engine.jsonl"
    trace.write_text(
        "".join(
            json.dumps(
                {
                    "type": "event",
                    "t": t + 0.25,
                    "execution_id": x,
                    "event": "arrived",
                    "prompt_tokens": 500,
                }  # the drill's --prompt-tokens (tests/data/lab/README.md)
            )
            + "\n"
            for x, t in picked
        )
    )
    rep = ingest(db, trace, OP / "access.json.gz", **KEYS)
    notes = [n for s in rep.sources for n in s.notes if "whole-second event times" in n]
    assert sorted(n.split(" whole-second")[0] for n in notes) == ["1519", "3"]
    assert any("from the engine events" in n for n in notes)
    got = dict(rows(db, arrivals))
    assert [got[x] for x, _ in picked] == [t + 0.25 for _, t in picked]


LOG = "select source_id, format, rows from sources order by source_id"


def test_the_combined_log_beside_the_msec_json_log_is_counted_once(tmp_path: Path) -> None:
    """The lab's nginx writes every request to `access.json` ($msec) and to `access.log`
    (`combined`, $time_local): ingesting the operator folder keeps the finer log's 799
    attempts and none of the combined log's (798 of its 799 pair by end second and status)."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, OP)
    by_format = {s.format: s for s in rep.sources}
    assert by_format["nginx"].rows == 0
    assert any(
        n.startswith("its 799 attempts are the requests of source")
        for n in by_format["nginx"].notes
    )
    assert rep.rows_by_table["attempts"] == 799
    assert rows(
        db, "select s.format, count(*) from attempts join sources s using (source_id) group by 1"
    ) == [("nginx_json", 799)]


def test_the_twin_is_found_in_either_order(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, OP / "access.log.gz")
    assert rows(db, "select count(*) from attempts") == [(799,)]
    rep = ingest(db, OP / "access.json.gz")
    assert any(
        "source 1 tells the same requests in whole seconds" in n for n in rep.sources[0].notes
    )
    assert rows(db, LOG) == [(1, "nginx", 0), (2, "nginx_json", 799)]
    assert rows(db, "select distinct source_id from attempts") == [(2,)]


def test_part_of_the_requests_is_no_twin(tmp_path: Path) -> None:
    """The first 400 lines of the combined log are not the same requests as the JSON log's
    799: both are kept."""
    part = tmp_path / "access-part.log"
    part.write_text(
        "".join(
            gzip.decompress((OP / "access.log.gz").read_bytes())
            .decode()
            .splitlines(keepends=True)[:400]
        )
    )
    db = tmp_path / "w.duckdb"
    ingest(db, part, OP / "access.json.gz")
    assert rows(db, "select count(*) from attempts") == [(1199,)]
