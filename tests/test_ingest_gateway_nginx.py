"""nginx / ingress-nginx access logs with upstream lists (docs/formats.md).

Published example: tests/data/published/nginx_ingress_upstreaminfo_issue4312_499_retries.log
(SOURCES.md section 5: 8 tries, 7 x 504 then the client closed, 499). No published plain-nginx
line mixes `502, 200` or has the ` : ` group separator: those lines are hand-made from the
nginx docs' variable descriptions and say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUB = Path(__file__).resolve().parent / "data" / "published"
ATTEMPTS = (
    "select call_id, attempt, t_sent, t_end, outcome, status, replica, source_row"
    " from attempts order by call_id, attempt"
)
# A plain-nginx format with millisecond times and the caller's headers (hand-made).
FMT = (
    '$remote_addr [$msec] "$request" $status $request_time "$http_idempotency_key"'
    ' "$http_x_stainless_retry_count" $upstream_addr $upstream_status $upstream_response_time'
)


def test_ingress_nginx_line_with_eight_tries_is_one_call_of_eight_attempts(
    tmp_path: Path,
) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "nginx_ingress_upstreaminfo_issue4312_499_retries.log")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
        "nginx",
        8,
        0,
    )
    got = rows(db, ATTEMPTS)
    end = 1562941702.0  # 12/Jul/2019:14:28:22 +0000, the end of the request
    start = end - 426.749
    assert {r[0] for r in got} == {"1411d70d25a94e8a740c2a10XXXX"}
    assert [r[1] for r in got] == list(range(8))
    assert [r[4:7] for r in got] == [("error", 504, "10.1.244.233:80")] * 7 + [
        ("client_gone", None, "10.1.244.233:80")
    ]
    assert got[0][2] == pytest.approx(start)
    assert got[3][2] == pytest.approx(start + 3 * 60.001)
    assert got[7][3] - got[7][2] == pytest.approx(6.740)
    assert all(r[7] == 1 for r in got)
    assert any("whole-second" in n for n in rep.sources[0].notes)


def _line(ms: float, status: int, rt: float, key: str, retry: str, ups: str) -> str:
    return f'10.0.0.1 [{ms:.3f}] "POST /v1/chat/completions HTTP/1.1" {status} {rt:.3f} "{key}" "{retry}" {ups}'


def test_retry_lists_groups_and_a_line_without_upstream(tmp_path: Path) -> None:
    t = 1764460800.0
    p = write_lines(
        tmp_path / "access.log",
        [
            # 502 from the first server, 200 from the second (hand-made).
            _line(t + 2.5, 200, 2.5, "k1", "0", "10.0.0.7:80, 10.0.0.8:80 502, 200 0.500, 2.000"),
            # An internal redirect to a second group (" : "), hand-made.
            _line(t + 9, 200, 3.0, "k2", "0", "10.0.0.7:80 : 10.0.1.1:80 404 : 200 1.000 : 2.000"),
            # nginx answered itself (limit_req): no upstream.
            _line(t + 10, 503, 0.0, "k3", "0", "- - -"),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, p, log_format=FMT)
    a = pytest.approx
    assert rows(db, ATTEMPTS) == [
        ("nginx:1", 0, a(t), a(t + 0.5), "error", 502, "10.0.0.7:80", 1),
        ("nginx:1", 1, a(t + 0.5), a(t + 2.5), "delivered", 200, "10.0.0.8:80", 1),
        ("nginx:2", 0, a(t + 6), a(t + 7), "error", 404, "10.0.0.7:80", 2),
        ("nginx:2", 1, a(t + 7), a(t + 9), "delivered", 200, "10.0.1.1:80", 2),
        ("nginx:3", 0, a(t + 10), a(t + 10), "shed", 503, None, 3),
    ]
    assert any("not measurable" in n for n in rep.sources[0].notes)


def test_call_key_links_client_retries_across_lines(tmp_path: Path) -> None:
    t = 1764460800.0
    p = write_lines(
        tmp_path / "access.log",
        [
            _line(t + 30, 499, 30.0, "k1", "0", "10.0.0.7:80 - 30.000"),
            _line(t + 33, 200, 2.0, "k1", "1", "10.0.0.8:80 200 2.000"),
        ],
    )
    for extra in ({}, {"attempt_field": "$http_x_stainless_retry_count"}):
        db = tmp_path / f"w{len(extra)}.duckdb"
        ingest(db, p, log_format=FMT, call_key="$http_idempotency_key", **extra)
        assert [r[:2] + r[4:6] for r in rows(db, ATTEMPTS)] == [
            ("k1", 0, "client_gone", None),
            ("k1", 1, "delivered", 200),
        ]


def test_lists_of_different_lengths_are_refused_naming_the_line(tmp_path: Path) -> None:
    t = 1764460800.0
    p = write_lines(
        tmp_path / "access.log",
        [
            _line(t + 1, 200, 1.0, "k1", "0", "10.0.0.7:80 200 1.000"),
            _line(t + 2, 200, 1.0, "k2", "0", "10.0.0.7:80, 10.0.0.8:80 200 1.000"),
        ],
    )
    with pytest.raises(InputError, match=r"access\.log:2: \$upstream_addr has 2 entries"):
        ingest(tmp_path / "w.duckdb", p, log_format=FMT)
    rep = ingest(tmp_path / "s.duckdb", p, log_format=FMT, on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (1, 1)


@pytest.mark.slow
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.integers(0, 60_000),  # the try's response time, ms
                st.sampled_from([200, 502, 504]),
                st.sampled_from(["10.0.0.7:80", "10.0.0.8:80"]),
            ),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=5,
    )
)
def test_canonical_tries_written_as_upstream_lists_read_back_unchanged(
    tmp_path_factory: pytest.TempPathFactory, calls: list[list[tuple[int, int, str]]]
) -> None:
    """Attempts placed back to back (as nginx's lists describe them) survive the round trip."""
    tmp = tmp_path_factory.mktemp("rt")
    t0 = 1764460800.0
    lines, expect = [], []
    for c, tries in enumerate(calls):
        start = t0 + 100 * c
        total_ms = sum(ms for ms, _, _ in tries)
        ups = (
            ", ".join(h for _, _, h in tries)
            + " "
            + ", ".join(str(s) for _, s, _ in tries)
            + " "
            + ", ".join(f"{ms / 1000:.3f}" for ms, _, _ in tries)
        )
        lines.append(
            _line(start + total_ms / 1000, tries[-1][1], total_ms / 1000, f"k{c}", "0", ups)
        )
        t = start
        for i, (ms, status, host) in enumerate(tries):
            last = i == len(tries) - 1
            outcome = "delivered" if last and status == 200 else "error"
            expect.append((f"k{c}", i, t, t + ms / 1000, outcome, status, host))
            t += ms / 1000
    p = write_lines(tmp / "a.log", lines)
    db = tmp / "w.duckdb"
    ingest(db, p, log_format=FMT, call_key="http_idempotency_key")
    got = rows(db, "select call_id, attempt, t_sent, t_end, outcome, status, replica from attempts")
    got.sort()
    expect.sort()
    assert [g[:2] + g[4:] for g in got] == [e[:2] + e[4:] for e in expect]
    for g, e in zip(got, expect, strict=True):
        assert g[2] == pytest.approx(e[2], abs=2e-3)
        assert g[3] == pytest.approx(e[3], abs=2e-3)
