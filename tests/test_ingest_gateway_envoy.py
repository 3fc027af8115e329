"""Envoy access logs: the default text format, Istio's, a given format string, and the JSON
form's response flags and UPSTREAM_REQUEST_ATTEMPT_COUNT (docs/formats.md).

Published examples: tests/data/published/ (SOURCES.md section 4). No published Envoy line
shows DC, UT, URX or %UPSTREAM_REQUEST_ATTEMPT_COUNT%: the lines for those here are hand-made
from Envoy's documented default format string and flag list, and say so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from relplan.ingest.gateways.envoy_text import ENVOY_DEFAULT
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUB = Path(__file__).resolve().parent / "data" / "published"
ATTEMPTS = (
    "select call_id, attempt, t_sent, t_end, outcome, status, replica, source_row"
    " from attempts order by call_id, attempt"
)
T0 = 1764460800.0  # 2025-11-30T00:00:00Z


def test_envoy_doc_example_of_the_default_format_is_one_delivered_attempt(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "envoy_default_text_doc_example.log")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
        "envoy_text",
        1,
        0,
    )
    start = 1460751420.31  # 2016-04-15T20:17:00.310Z
    assert rows(db, ATTEMPTS) == [
        (
            "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2",
            0,
            pytest.approx(start),
            pytest.approx(start + 0.226),
            "delivered",
            204,
            "tcp://10.0.2.1:80",
            1,
        )
    ]


def test_istio_line_with_via_upstream_is_read_in_istio_format(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "istio_envoy_text_engarde_pr12.log")
    assert rep.sources[0].format == "envoy_text"
    (row,) = rows(db, ATTEMPTS)
    assert row[0] == "24e58e43-e576-9048-829b-02e3f3da16f0"
    assert row[4:7] == ("delivered", 200, "127.0.0.1:80")
    assert row[3] - row[2] == pytest.approx(0.005, abs=1e-6)


def test_istio_line_pasted_without_start_time_is_rejected_with_that_reason(
    tmp_path: Path,
) -> None:
    src = PUB / "istio_envoy_text_issue45802_503_UC.log"
    with pytest.raises(InputError, match=r":1: the line has no \[START_TIME\]"):
        ingest(tmp_path / "w.duckdb", src)
    db = tmp_path / "skip.duckdb"
    rep = ingest(db, src, on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (0, 1)
    assert rows(db, "select line from rejects") == [(1,)]


def test_envoy_json_doc_example_without_the_call_id_is_rejected(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "envoy_json_format_doc_example.jsonl", kind="proxy", on_error="skip")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == ("envoy", 0, 1)
    assert rows(db, "select reason from rejects")[0][0].startswith(
        "x-request-id or request_id is missing"
    )


def test_all_string_envoy_json_with_request_id_and_timestamp_keys_is_one_delivered_attempt(
    tmp_path: Path,
) -> None:
    # Contour's (and, for request_id, Istio's and Higress's) key names, every value a string.
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "envoy_json_all_strings_contour_issue624.jsonl")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == ("envoy", 1, 0)
    got = rows(db, "select call_id, t_sent, t_end - t_sent, status, outcome, replica from attempts")
    assert got[0][0] == "b4ecadf1-8fc0-4e87-89d8-a3aa851196d4"
    assert got[0][1] == pytest.approx(1556173867.162)  # 2019-04-25T06:31:07.162Z
    assert got[0][2] == pytest.approx(0.001, abs=1e-6)  # "duration":"1" ms
    assert got[0][3:] == (200, "delivered", "10.141.181.15:8080")
    assert any("x-request-id or request_id" in n for n in rep.sources[0].notes)


# Higress's documented accessLogFormat (alibaba/higress helm/core/templates/configmap.yaml,
# tests/data/published/SOURCES.md section 4): a JSON object, every value a quoted string.
HIGRESS_KEYS = [
    "authority",
    "bytes_received",
    "bytes_sent",
    "downstream_local_address",
    "downstream_remote_address",
    "duration",
    "istio_policy_status",
    "method",
    "path",
    "protocol",
    "request_id",
    "requested_server_name",
    "response_code",
    "response_flags",
    "route_name",
    "start_time",
    "trace_id",
    "upstream_cluster",
    "upstream_host",
    "upstream_local_address",
    "upstream_service_time",
    "upstream_transport_failure_reason",
    "user_agent",
    "x_forwarded_for",
]


def _higress(**values: str) -> str:
    rec = dict.fromkeys(HIGRESS_KEYS, "-")
    rec.update(values)
    return json.dumps(rec, separators=(",", ":"))


def test_higress_json_with_every_value_a_string(tmp_path: Path) -> None:
    """HAND-MADE with Higress's documented keys (no published Higress line was found): a call
    whose first attempt timed out upstream (504 UT after 30,001 ms) and whose retry with the
    same X-Request-Id was answered in 2,400 ms."""
    cluster = "outbound|8000||vllm.default.svc.cluster.local"
    f = tmp_path / "access.log"
    f.write_text(
        _higress(
            request_id="c1",
            start_time="2025-11-30T00:00:00.000Z",
            duration="30001",
            response_code="504",
            response_flags="UT",
            upstream_cluster=cluster,
            upstream_host="10.0.0.5:8000",
        )
        + "\n"
        + _higress(
            request_id="c1",
            start_time="2025-11-30T00:00:30.500Z",
            duration="2400",
            response_code="200",
            upstream_cluster=cluster,
            upstream_host="10.0.0.6:8000",
            upstream_service_time="2398",
        )
        + "\n"
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f)
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == ("envoy", 2, 0)
    got = rows(
        db,
        "select call_id, attempt, t_sent, t_end - t_sent, status, outcome, replica from attempts"
        " order by attempt",
    )
    t0 = 1764460800.0  # 2025-11-30T00:00:00Z
    assert got == [
        ("c1", 0, t0, pytest.approx(30.001), 504, "error", "10.0.0.5:8000"),
        ("c1", 1, t0 + 30.5, pytest.approx(2.4), 200, "delivered", "10.0.0.6:8000"),
    ]


# Hand-made from the default format plus %UPSTREAM_REQUEST_ATTEMPT_COUNT% (no published line).
FMT = ENVOY_DEFAULT + " %UPSTREAM_REQUEST_ATTEMPT_COUNT%"


def _line(start: str, code: int, flags: str, dur: int, rid: str, host: str, tries: int) -> str:
    return (
        f'[{start}] "POST /v1/chat/completions HTTP/1.1" {code} {flags} 512 0 {dur} - "-"'
        f' "openai-python/1.0" "{rid}" "vllm:8000" "{host}" {tries}'
    )


def test_flags_dc_ut_uc_urx_and_the_attempt_count_give_outcomes_and_hidden_tries(
    tmp_path: Path,
) -> None:
    p = write_lines(
        tmp_path / "access.log",
        [
            _line("2025-11-30T00:00:00.000Z", 0, "DC", 120000, "a", "10.0.0.7:8000", 1),
            _line("2025-11-30T00:00:01.000Z", 504, "UT", 60000, "b", "10.0.0.8:8000", 3),
            _line("2025-11-30T00:00:02.000Z", 503, "UC", 10, "c", "10.0.0.8:8000", 1),
            _line("2025-11-30T00:00:03.000Z", 503, "URX,UC", 30, "d", "10.0.0.9:8000", 2),
            _line("2025-11-30T00:00:04.000Z", 503, "UH", 1, "e", "-", 0),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, p, log_format=FMT)
    assert rows(db, ATTEMPTS) == [
        ("a", 0, T0, T0 + 120, "client_gone", None, "10.0.0.7:8000", 1),
        ("b", 0, T0 + 1, T0 + 1, "error", None, None, 2),
        ("b", 1, T0 + 1, T0 + 1, "error", None, None, 2),
        ("b", 2, T0 + 1, T0 + 61, "error", 504, "10.0.0.8:8000", 2),
        ("c", 0, T0 + 2, T0 + 2.01, "error", 503, "10.0.0.8:8000", 3),
        ("d", 0, T0 + 3, T0 + 3, "error", None, None, 4),
        ("d", 1, T0 + 3, pytest.approx(T0 + 3.03), "error", 503, "10.0.0.9:8000", 4),
        ("e", 0, T0 + 4, T0 + 4.001, "shed", 503, None, 5),
    ]
    notes = " ".join(rep.sources[0].notes)
    assert "3 attempts are known by count only" in notes
    assert "2 entries were retried upstream by Envoy" in notes


def test_an_attempt_count_of_a_billion_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    """Expanding 10^9 tries into rows ran out of memory; now the line is refused."""
    p = write_lines(
        tmp_path / "access.log",
        [_line("2025-11-30T00:00:01.000Z", 504, "UT", 60000, "b", "10.0.0.8:8000", 10**9)],
    )
    with pytest.raises(InputError, match=r"access\.log:1: .* more than 1000 tries for one request"):
        ingest(tmp_path / "w.duckdb", p, log_format=FMT)


def test_call_key_groups_downstream_requests_and_attempt_field_numbers_them(
    tmp_path: Path,
) -> None:
    fmt = ENVOY_DEFAULT + ' "%REQ(IDEMPOTENCY-KEY)%" "%REQ(X-STAINLESS-RETRY-COUNT)%"'
    base = (
        '"POST /v1/completions HTTP/1.1" {code} - 1 2 {dur} - "-" "sdk" "{rid}" "h" "10.0.0.7:80"'
    )
    lines = [
        "[2025-11-30T00:00:00.000Z] " + base.format(code=503, dur=100, rid="r1") + ' "k1" "0"',
        "[2025-11-30T00:00:02.000Z] " + base.format(code=200, dur=900, rid="r2") + ' "k1" "1"',
    ]
    p = write_lines(tmp_path / "access.log", lines)
    db = tmp_path / "w.duckdb"
    ingest(db, p, log_format=fmt, call_key="idempotency-key")
    assert [r[:2] + r[4:5] for r in rows(db, ATTEMPTS)] == [
        ("k1", 0, "error"),
        ("k1", 1, "delivered"),
    ]
    db2 = tmp_path / "w2.duckdb"
    ingest(
        db2, p, log_format=fmt, call_key="idempotency-key", attempt_field="x-stainless-retry-count"
    )
    assert [r[:2] for r in rows(db2, ATTEMPTS)] == [("k1", 0), ("k1", 1)]


def test_a_line_in_no_known_format_names_its_line(tmp_path: Path) -> None:
    good = _line("2025-11-30T00:00:00.000Z", 200, "-", 5, "a", "h:1", 1)
    p = write_lines(tmp_path / "access.log", [good, "[2025-11-30T00:00:01Z] garbage"])
    with pytest.raises(InputError, match=r"access\.log:2: does not match the given format"):
        ingest(tmp_path / "w.duckdb", p, log_format=FMT, kind="proxy")


_OUTCOME_OF = {
    ("delivered", 200, "-"),
    ("client_gone", 0, "DC"),
    ("error", 504, "UT"),
    ("error", 503, "UC"),
    ("shed", 429, "RL"),
}


@pytest.mark.slow
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6),  # start, ms after T0
            st.integers(0, 10**5),  # duration, ms
            st.sampled_from(sorted(_OUTCOME_OF)),
            st.sampled_from(["10.0.0.7:8000", "10.0.0.8:8000"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_canonical_attempts_written_in_the_default_format_read_back_unchanged(
    tmp_path_factory: pytest.TempPathFactory,
    recs: list[tuple[int, int, tuple[str, int, str], str]],
) -> None:
    tmp = tmp_path_factory.mktemp("rt")
    lines = []
    expect = []
    for i, (start_ms, dur_ms, (outcome, code, flags), host) in enumerate(recs):
        start = T0 + start_ms / 1000
        stamp = json.dumps(start)  # epoch seconds, as %START_TIME(%s.%3f)% prints them
        lines.append(_line(stamp, code, flags, dur_ms, f"c{i}", host, 1))
        expect.append(
            (f"c{i}", 0, start, start + dur_ms / 1000, outcome, code or None, host, i + 1)
        )
    p = write_lines(tmp / "a.log", lines)
    db = tmp / "w.duckdb"
    ingest(db, p, log_format=FMT)
    got = rows(db, ATTEMPTS)
    assert [g[:2] + g[4:] for g in got] == sorted(e[:2] + e[4:] for e in expect)
    for g, e in zip(got, sorted(expect), strict=True):
        assert g[2] == pytest.approx(e[2], abs=1e-6)
        assert g[3] == pytest.approx(e[3], abs=1e-6)
