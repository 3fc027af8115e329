"""Gateway logs, wave 2 (issue 23): nginx JSON access logs read by their nginx variables,
`combined` (+ timings) without a format string, adjacent variables, an nginx.conf as the
format, and the join of gateway attempts to vLLM executions. Published lines are in
tests/data/published (SOURCES.md there names each source); lines HAND-MADE from a published
log_format say so and cite it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUB = Path(__file__).resolve().parent / "data" / "published"
ATTEMPTS = (
    "select call_id, attempt, t_sent, t_end, outcome, status, replica, execution_id"
    " from attempts order by call_id, attempt"
)


def test_openresty_json_with_its_own_key_names(tmp_path: Path) -> None:
    """goaccess issue 2810: `up_addr`, `up_resp_time`, `@timestamp` ($time_iso8601, +03:00),
    `request_time` 0.005: one delivered attempt ending at the log time, starting 5 ms before."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "nginx_json_openresty_goaccess2810.jsonl")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
        "nginx_json",
        1,
        0,
    )
    end = 1742322218.0  # 2025-03-18T21:23:38+03:00
    got = rows(db, ATTEMPTS)
    assert got == [
        (
            "nginx_json:1",
            0,
            pytest.approx(end - 0.005),
            end,
            "delivered",
            200,
            "192.168.192.168:80",
            None,
        )
    ]
    assert "keys read as nginx variables by their names" in rep.sources[0].notes


def test_the_json_log_format_of_an_nginx_conf_names_the_keys(tmp_path: Path) -> None:
    """The same line read with the issue's own `log_format main '{ ' ... ' }';` (an nginx.conf
    excerpt, given to --nginx-format as a path)."""
    db = tmp_path / "w.duckdb"
    rep = ingest(
        db,
        PUB / "nginx_json_openresty_goaccess2810.jsonl",
        log_format=str(PUB / "nginx_json_openresty_goaccess2810.conf"),
    )
    assert rows(db, "select outcome, status, replica from attempts") == [
        ("delivered", 200, "192.168.192.168:80")
    ]
    assert "keys read as nginx variables by the given JSON log_format" in rep.sources[0].notes


def test_camel_case_json_keys(tmp_path: Path) -> None:
    """goaccess issue 2492: `requestTime` "0.000", `timestamp` ISO 8601 +08:00, `status` 200."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "nginx_json_camelcase_goaccess2492.jsonl")
    assert rep.sources[0].format == "nginx_json"
    t = 1678676642.0  # 2023-03-13T11:04:02+08:00
    assert rows(db, "select t_sent, t_end, outcome, status from attempts") == [
        (t, t, "delivered", 200)
    ]


def test_combined_without_a_format_string_is_delivered(tmp_path: Path) -> None:
    """goaccess-for-nginxproxymanager issue 172: four plain `combined` lines (200, 301, 200,
    200). Issue 23: given its format string, relplan stored every 200 as `error`."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "nginx_combined_goaccess_npm172.log")
    assert (rep.sources[0].format, rep.sources[0].rows) == ("nginx", 4)
    assert rows(db, "select outcome, status, t_end - t_sent from attempts order by source_row") == [
        ("delivered", 200, 0.0),
        ("delivered", 301, 0.0),
        ("delivered", 200, 0.0),
        ("delivered", 200, 0.0),
    ]
    notes = rep.sources[0].notes
    assert any(n.startswith("no $request_time logged") for n in notes)
    assert any(n.startswith("no $upstream_* logged") for n in notes)
    again = tmp_path / "x.duckdb"
    ingest(
        again,
        PUB / "nginx_combined_goaccess_npm172.log",
        log_format=(
            '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent'
            ' "$http_referer" "$http_user_agent"'
        ),
    )
    assert rows(again, "select distinct outcome from attempts") == [("delivered",)]


def test_combined_with_timings_after_it(tmp_path: Path) -> None:
    """intershop-pwa PR 1086: its `main` is combined + `"$http_x_forwarded_for"` + a bare
    request time (1.886) + a cache status: the start is 1.886 s before the logged end."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "nginx_main_rt_cache_intershop1086.log")
    end = 1648459728.0  # 28/Mar/2022:09:28:48 +0000
    assert rows(db, "select t_sent, t_end, outcome, status from attempts") == [
        (pytest.approx(end - 1.886), end, "delivered", 200)
    ]
    assert any("1 lines are `combined` with more fields" in n for n in rep.sources[0].notes)


def test_nginx_docs_upstream_time_format_is_recognised(tmp_path: Path) -> None:
    """HAND-MADE in the `upstream_time` format of nginx's docs (rt= uct= uht= urt=), with
    two upstream tries (a 502 then a 200)."""
    line = (
        '10.0.0.1 - - [30/Nov/2025:00:00:10 +0000] "POST /v1/completions HTTP/1.1" 200 612 "-"'
        ' "python-httpx/0.27" rt=2.500 uct="0.000, 0.001" uht="-, 0.300" urt="0.400, 2.000"'
    )
    f = write_lines(tmp_path / "a.log", [line])
    db = tmp_path / "w.duckdb"
    ingest(db, f)
    end = 1764460810.0
    got = rows(db, "select attempt, t_sent, t_end, outcome, status from attempts order by attempt")
    assert [g[0] for g in got] == [0, 1]
    assert got[0][1] == pytest.approx(end - 2.5)
    assert got[0][2] == pytest.approx(end - 2.1)
    assert [g[3:] for g in got] == [("error", None), ("delivered", 200)]


def test_upstreaminfo_lists_of_ipv6_upstreams_and_a_unix_socket(tmp_path: Path) -> None:
    """Filebeat's ingress-nginx fixture (elastic/beats, SOURCES.md says which lines and why
    only those): bracketed IPv6 upstreams in a two-try list are two attempts (502, 502), a unix
    socket upstream one delivered attempt; detected as upstreaminfo with no format string."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "nginx_ingress_upstreaminfo_ipv6_unix_beats_fixture.log")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
        "nginx",
        3,
        0,
    )
    got = rows(db, ATTEMPTS)
    assert [(g[0], g[1], g[4], g[5], g[6]) for g in got] == [
        ("0f76ea730f282d5759018eb756b23b14", 0, "delivered", 200, "unix:/var/run/php-fpm.sock"),
        ("3db73c6c673c4256ade033a6ce08c2ab", 0, "error", 502, "[2a02:cf40::7]:5000"),
        ("3db73c6c673c4256ade033a6ce08c2ab", 1, "error", 502, "[2a02:cf40::4e36]:5000"),
    ]


def test_an_operators_own_log_format_from_its_nginx_conf(tmp_path: Path) -> None:
    """goaccess issue 637: a real line of a `main` format that opens with $request_time and
    $upstream_response_time and leaves $request unquoted, read through the reporter's own
    log_format line given as an nginx.conf (--log-format FILE) or as the string. Without it
    the line is refused, naming the flag. One delivered attempt (304) ending at $time_local
    (12:06:22Z), 1 ms long."""
    log = PUB / "nginx_main_request_time_first_goaccess637.log"
    conf = PUB / "nginx_main_request_time_first_goaccess637.conf"
    end = 1485173182.0  # 23/Jan/2017:04:06:22 -0800
    line = conf.read_text()
    fmt = line[line.index("'") + 1 : line.rindex("'")]
    for n, given in enumerate((str(conf), fmt)):
        db = tmp_path / f"w{n}.duckdb"
        rep = ingest(db, log, log_format=given)
        assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
            "nginx",
            1,
            0,
        )
        got = rows(db, ATTEMPTS)
        assert [(g[1], g[4], g[5], g[6]) for g in got] == [(0, "delivered", 304, "10.x.x.x")]
        assert got[0][3] == pytest.approx(end)
        assert got[0][3] - got[0][2] == pytest.approx(0.001, abs=1e-6)
    with pytest.raises(InputError, match=r":1: does not match .*--nginx-format"):
        ingest(tmp_path / "none.duckdb", log)


def test_nginx_proxy_json_with_upstream_lists_is_one_attempt_per_try(tmp_path: Path) -> None:
    """HAND-MADE from nginx-proxy's LOG_JSON template (nginx-proxy PR 2197: every value a
    string, the key `time_local` holding $time_iso8601): `upstream_addr` "a, b" and
    `upstream_response_time` "0.400, 2.000" are two tries; the start is end - request_time."""
    rec = {
        "time_local": "2025-11-30T00:00:10+00:00",
        "client_ip": "-",
        "remote_addr": "10.0.0.1",
        "request": "POST /v1/completions HTTP/1.1",
        "status": "200",
        "body_bytes_sent": "512",
        "request_time": "2.500",
        "upstream_response_time": "0.400, 2.000",
        "upstream_addr": "127.0.0.1:8001, 127.0.0.1:8000",
        "http_referrer": "",
        "http_user_agent": "curl/8.5.0",
        "request_id": "9f1c",
    }
    f = write_lines(tmp_path / "a.jsonl", [json.dumps(rec)])
    db = tmp_path / "w.duckdb"
    ingest(db, f)
    end = 1764460810.0
    got = rows(db, ATTEMPTS)
    assert [(g[0], g[1], g[4], g[5], g[6]) for g in got] == [
        ("9f1c", 0, "error", None, "127.0.0.1:8001"),
        ("9f1c", 1, "delivered", 200, "127.0.0.1:8000"),
    ]
    assert got[0][2] == pytest.approx(end - 2.5)
    assert got[1][2] == pytest.approx(end - 2.1)
    assert got[1][3] == pytest.approx(end - 0.1)


def test_apisix_json_with_two_upstream_tries_is_two_attempts(tmp_path: Path) -> None:
    """apache/apisix issue 8436, a real record (pretty-printed there; APISIX writes one line,
    so it is re-serialised with json.dumps, whitespace only): the key `upstream` holds
    $upstream_addr "192.168.84.159:80, 192.168.84.163:80", `upstream_status` "504, 502",
    `upstream_response_time` "30.001, 3.092"; `msec` is the END, the call started
    `request_time` 33.093 s before it. Two attempts, both errors, back to back."""
    published = PUB / "apisix_json_issue8436_two_tries.json"
    f = write_lines(tmp_path / "access.log", [json.dumps(json.loads(published.read_text()))])
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f)
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
        "nginx_json",
        2,
        0,
    )
    got = rows(db, ATTEMPTS)
    assert [(g[0], g[1], g[4], g[5], g[6]) for g in got] == [
        ("b2334ca98e7bd7016caf79d9d606f0fe", 0, "error", 504, "192.168.84.159:80"),
        ("b2334ca98e7bd7016caf79d9d606f0fe", 1, "error", 502, "192.168.84.163:80"),
    ]
    end = 1669861681.376  # "msec"; "time_iso8601" 2022-12-01T10:28:01+08:00 is the same second
    assert got[0][2] == pytest.approx(end - 33.093)
    assert got[0][3] - got[0][2] == pytest.approx(30.001)
    assert got[1][2] == pytest.approx(got[0][3])
    assert got[1][3] == pytest.approx(end)
    assert "keys read as nginx variables by their names" in rep.sources[0].notes


def test_the_pretty_printed_apisix_record_names_its_line(tmp_path: Path) -> None:
    """The same record as the issue shows it, over 34 lines, is an nginx JSON log that is not
    one record a line: refused at line 1, saying what was expected."""
    with pytest.raises(InputError, match=r":1: .*expected one nginx JSON record a line"):
        ingest(tmp_path / "w.duckdb", PUB / "apisix_json_issue8436_two_tries.json")


def test_ingress_nginx_json_with_numbers(tmp_path: Path) -> None:
    """HAND-MADE from the ingress-nginx `log-format-upstream` JSON of ingress-nginx issue
    9819 (`"time": "$time_iso8601"`, `"request_id": "$req_id"`, numbers unquoted), plus the
    upstream variables of the JSON in ingress-nginx PR 836, with a ` : ` group separator. The
    separator as real nginx writes it (an error_page redirect to a second upstream block) is
    recorded on the lab: tests/test_ingest_lab_issue23.py."""
    rec = {
        "time": "2025-11-30T00:00:10+00:00",
        "remote_addr": "10.0.0.1",
        "request_id": "5b2f",
        "bytes_sent": 512,
        "request_time": 3.0,
        "status": 200,
        "upstream_addr": "10.1.0.5:8000, 10.1.0.6:8000 : 10.1.0.7:8000",
        "upstream_status": "502, 502 : 200",
        "upstream_response_time": "0.500, 0.500 : 2.000",
    }
    f = write_lines(tmp_path / "a.jsonl", [json.dumps(rec)])
    db = tmp_path / "w.duckdb"
    ingest(db, f)
    got = rows(db, ATTEMPTS)
    assert [(g[1], g[4], g[5], g[6], g[7]) for g in got] == [
        (0, "error", 502, "10.1.0.5:8000", None),
        (1, "error", 502, "10.1.0.6:8000", None),
        (2, "delivered", 200, "10.1.0.7:8000", None),
    ]
    # The key `request_id` could be nginx's own $request_id, which vLLM never sees: it is the
    # call id, not the execution's (the log_format, given, would say $req_id).
    assert {g[0] for g in got} == {"5b2f"}


LAB_KEYS = {
    "msec": "1764460810.250",
    "time_iso8601": "2025-11-30T00:00:10+00:00",
    "remote_addr": "127.0.0.1",
    "request": "POST /v1/completions HTTP/1.1",
    "status": 200,
    "request_time": 1.250,
    "upstream_addr": "127.0.0.1:8000",
    "upstream_status": "200",
    "upstream_response_time": "1.249",
}


def _lab_line(call: str, attempt: int, status: int, end: float) -> str:
    """HAND-MADE in the shape of the lab's nginx JSON log (headers X-Request-Id, X-Relplan-Call,
    X-Relplan-Attempt; the drill sends X-Request-Id: <call_id>-<attempt>)."""
    rec = dict(LAB_KEYS)
    rec.update(
        msec=f"{end:.3f}",
        status=status,
        upstream_status=str(status),
        http_x_request_id=f"{call}-{attempt}",
        http_x_relplan_call=call,
        http_x_relplan_attempt=str(attempt),
    )
    return json.dumps(rec)


def _vllm_log(tmp_path: Path) -> Path:
    """0.32 templates: `Added request %s.` (internal id `cmpl-<X-Request-Id>-0-<8 hex>`) and
    `Finished request`-less V1 ends (`Request %s aborted.`)."""
    p = "(APIServer pid=1) INFO 11-30 00:00:{:02d} [async_llm.py:578] "
    return write_lines(
        tmp_path / "vllm.log",
        [
            p.format(9) + "Added request cmpl-c1-0-0-a0586fd3.",
            p.format(10) + "Added request cmpl-c1-1-0-1b2c3d4e.",
            p.format(11) + "Aborted request(s) cmpl-c1-0-0-a0586fd3.",
        ],
    )


@pytest.mark.parametrize("vllm_first", [False, True])
def test_call_key_attempt_field_and_the_join_to_vllm_executions(
    tmp_path: Path, vllm_first: bool
) -> None:
    gw = write_lines(
        tmp_path / "nginx.jsonl",
        [_lab_line("c1", 0, 504, 1764460811.0), _lab_line("c1", 1, 200, 1764460812.0)],
    )
    db = tmp_path / "w.duckdb"
    if vllm_first:
        ingest(db, _vllm_log(tmp_path), year=2025)
    ingest(db, gw, call_key="X-Relplan-Call", attempt_field="X-Relplan-Attempt")
    if not vllm_first:
        ingest(db, _vllm_log(tmp_path), year=2025)
    got = rows(db, ATTEMPTS)
    assert [(g[0], g[1], g[4], g[7]) for g in got] == [
        ("c1", 0, "error", "cmpl-c1-0-0-a0586fd3"),
        ("c1", 1, "delivered", "cmpl-c1-1-0-1b2c3d4e"),
    ]
    assert rows(
        db,
        "select count(*) from attempts a join events e using (execution_id)"
        " where e.event = 'arrived'",
    ) == [(2,)]


LAB = Path(__file__).resolve().parent / "data" / "ingest" / "lab"


def test_lab_nginx_json_joins_the_lab_vllm_log(tmp_path: Path) -> None:
    """The lab's own files (tests/data/ingest/lab/README.md): 60 nginx JSON lines, 58 of
    them drill completions whose X-Request-Id vLLM turned into `cmpl-<id>-0-<8 hex>`."""
    db = tmp_path / "w.duckdb"
    gw = ingest(
        db,
        LAB / "nginx-access-head60.json",
        call_key="X-Relplan-Call",
        attempt_field="X-Relplan-Attempt",
    )
    src = gw.sources[0]
    assert (src.format, src.rows, src.rejected) == ("nginx_json", 60, 0)
    assert any(n.startswith("3 lines without the call key X-Relplan-Call") for n in src.notes)
    eng = ingest(db, LAB / "vllm-head.log", year=2026)
    # events, request ids, engine_stats rows, 5 samples of each of the 3 iteration lines
    # (elapsed time, context/generation requests and tokens), 2 stats lines x 6 gauges
    assert eng.sources[0].rows == 58 + 58 + 3 + 3 * 5 + 2 * 6
    assert rows(db, "select outcome, count(*) from attempts group by 1") == [("delivered", 60)]
    assert rows(
        db,
        "select count(*) from attempts a join events e"
        " on e.execution_id = a.execution_id and e.event = 'arrived'",
    ) == [(58,)]
    one = rows(
        db,
        "select a.call_id, a.attempt, a.execution_id, r.client_id from attempts a"
        " join request_ids r using (execution_id) order by a.t_sent limit 1",
    )[0]
    assert one[2].startswith("cmpl-" + one[3] + "-0-")
    assert one[3] == f"{one[0]}-{one[1]}" or one[3] == "drill-probe"
    assert rows(db, "select count(*) from engine_stats") == [(3,)]
