"""Restart and probe inputs (issue 17, item 1): the published examples in tests/data/published
(sources in SOURCES.md there) ingest and are queryable with their real label sets.

- Kubernetes events (`kube_events` table): the published core/v1 Event from the Knative docs,
  alone, wrapped in the `List` that `kubectl get events -o json` prints, and renamed to the
  events.k8s.io/v1 field names (the mapping the API documents); a bad event names its line.
- kube-state-metrics restart counter and last-terminated reason, kubelet `prober_probe_total`,
  dcgm-exporter Xid and row-remap gauges: through the metrics adapters, labels intact.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
EVENT = PUBLISHED / "kube_event_v1_started_knative_docs.json"
T0 = 1764460800.0  # 2025-11-30T00:00:00Z, the --at of the timestamp-less scrapes
STARTED = dt.datetime(2019, 5, 10, 23, 27, 6, tzinfo=dt.timezone.utc).timestamp()
COLUMNS = (
    "t_first, t_last, count, reason, type, message, object_kind, namespace, object_name,"
    " container, node, component, source_row"
)
KNATIVE_ROW = (
    STARTED,
    STARTED,
    1,
    "Started",
    "Normal",
    "Started container",
    "Pod",
    "default",
    "busybox",
    "busybox",
    "gke-knative-auto-cluster-default-pool-23c23c4f-xdj0",
    "kubelet",
)


def _events(db: Path) -> list[tuple[object, ...]]:
    return rows(db, f"select {COLUMNS} from kube_events order by source_row")


def test_the_published_event_ingests_with_pod_container_and_node(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    src = ingest(db, EVENT).sources[0]
    assert (src.kind, src.format, src.rows, src.rejected) == ("cluster", "kube_events", 1, 0)
    assert _events(db) == [(*KNATIVE_ROW, 1)]


def test_a_kubectl_list_keeps_the_line_of_each_item(tmp_path: Path) -> None:
    item = json.loads(EVENT.read_text(encoding="utf-8"))
    doc = {"apiVersion": "v1", "items": [item, item | {"count": 3}], "kind": "List"}
    text = json.dumps(doc, indent=4)  # kubectl prints 4-space indented JSON
    path = tmp_path / "events.json"
    path.write_text(text + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    assert ingest(db, path).sources[0].format == "kube_events"
    lines = text.splitlines()
    starts = [i + 1 for i, ln in enumerate(lines) if ln == "        {"]
    got = _events(db)
    assert [r[-1] for r in got] == starts
    assert [r[2] for r in got] == [1, 3]


def test_the_events_k8s_io_shape_reads_the_same(tmp_path: Path) -> None:
    core = json.loads(EVENT.read_text(encoding="utf-8"))
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": core["metadata"],
        "eventTime": None,
        "reason": core["reason"],
        "note": core["message"],
        "regarding": core["involvedObject"],
        "deprecatedSource": core["source"],
        "deprecatedFirstTimestamp": core["firstTimestamp"],
        "deprecatedLastTimestamp": core["lastTimestamp"],
        "deprecatedCount": core["count"],
        "type": core["type"],
    }
    path = tmp_path / "new.json"
    path.write_text(json.dumps(new, indent=2), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    assert _events(db) == [(*KNATIVE_ROW, 1)]


def test_watch_output_objects_one_after_another(tmp_path: Path) -> None:
    text = EVENT.read_text(encoding="utf-8")
    path = tmp_path / "watch.json"
    path.write_text(text + text, encoding="utf-8")
    db = tmp_path / "w.duckdb"
    assert ingest(db, path).sources[0].format == "kube_events"
    n = len(text.splitlines())
    assert [r[-1] for r in _events(db)] == [1, n + 1]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"reason": None}, "without a reason"),
        ({"involvedObject": None}, "without involvedObject"),
        ({"firstTimestamp": "yesterday"}, "firstTimestamp: expected an RFC 3339 time"),
        ({"count": 0}, "count: expected a whole number"),
        ({"count": 2**40}, "count: expected a whole number from 1 to 2147483647"),
        (
            {"firstTimestamp": "9999-12-31T23:59:59Z"},
            "firstTimestamp: '9999-12-31T23:59:59Z' is no",
        ),
    ],
)
def test_a_bad_event_is_refused_with_its_line(
    tmp_path: Path, change: dict[str, object], said: str
) -> None:
    good = json.loads(EVENT.read_text(encoding="utf-8"))
    bad = {k: v for k, v in (good | change).items() if v is not None}
    doc = {"apiVersion": "v1", "items": [good, bad], "kind": "List"}
    text = json.dumps(doc, indent=4)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    second = [i + 1 for i, ln in enumerate(text.splitlines()) if ln == "        {"][1]
    with pytest.raises(InputError, match=re.escape(said)) as err:
        ingest(tmp_path / "w.duckdb", path)
    assert err.value.line == second
    assert str(path) in str(err.value.path)


def test_ksm_restart_counter_and_last_terminated_reason_keep_their_labels(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, PUBLISHED / "ksm_restarts_last_terminated_pod_test.prom", at=T0)
    assert rows(
        db,
        "select labels['pod'], labels['container'], value from metric_samples"
        " where name = 'kube_pod_container_status_restarts_total' order by 2",
    ) == [("pod2", "container2", 0.0), ("pod2", "container3", 1.0)]
    assert rows(
        db,
        "select labels['pod'], labels['reason'], value from metric_samples"
        " where name = 'kube_pod_container_status_last_terminated_reason'",
    ) == [("pod6", "OOMKilled", 1.0)]
    assert rows(
        db, "select type from metric_meta where name = 'kube_pod_container_status_restarts_total'"
    ) == [("counter",)]


def test_prober_probe_total_console_lines_ingest_as_a_scrape(tmp_path: Path) -> None:
    """The published lines are Prometheus console output (series, then its value on the next
    line); joined pairwise they are exposition samples."""
    lines = (
        (PUBLISHED / "prober_probe_total_prometheus_console_kube_prometheus_notes.txt")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    pairs = [f"{s} {v}" for s, v in zip(lines[0::2], lines[1::2], strict=True)]
    path = tmp_path / "probes.prom"
    path.write_text("\n".join(pairs) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    ingest(db, path, at=T0)
    assert rows(
        db,
        "select labels['pod'], labels['probe_type'], labels['result'], labels['node'], value"
        " from metric_samples where name = 'prober_probe_total' order by 1, 2",
    ) == [
        ("prometheus-0", "Liveness", "successful", "k8s-node01", 148299.0),
        ("prometheus-0", "Readiness", "successful", "k8s-node01", 148300.0),
        ("prometheus-k8s-0", "Readiness", "successful", "k8s-node01", 3084.0),
        ("prometheus-k8s-1", "Readiness", "successful", "k8s-node01", 3083.0),
    ]


def test_dcgm_xid_and_row_remap_keep_node_pod_and_error_code(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, PUBLISHED / "dcgm_exporter_k8s_mode_lke_ai_conformance.prom", at=T0)
    assert rows(
        db,
        "select name, labels['Hostname'], labels['pod'], labels['err_code'], value"
        " from metric_samples where name in"
        " ('DCGM_FI_DEV_XID_ERRORS', 'DCGM_FI_DEV_ROW_REMAP_FAILURE') order by name",
    ) == [
        (
            "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "lke529760-766837-0a634ab30000",
            "cuda-75454ffb9f-8ljq7",
            None,
            0.0,
        ),
        (
            "DCGM_FI_DEV_XID_ERRORS",
            "lke529760-766837-0a634ab30000",
            "cuda-75454ffb9f-8ljq7",
            "0",
            0.0,
        ),
    ]
    assert rows(db, "select type from metric_meta where name = 'DCGM_FI_DEV_XID_ERRORS'") == [
        ("gauge",)
    ]


def test_a_version_1_workspace_reads_kube_events_as_empty_and_migrates_on_write(
    tmp_path: Path,
) -> None:
    import duckdb

    from relplan import workspace

    db = tmp_path / "old.duckdb"
    ingest(db, PUBLISHED / "ksm_restarts_last_terminated_pod_test.prom", at=T0)
    con = duckdb.connect(str(db))
    con.execute("drop table kube_events")
    con.execute("update relplan_meta set value = '1'")
    con.close()
    with workspace.open_workspace(db, read_only=True) as ro:
        assert ro.execute("select count(*) from kube_events").fetchone() == (0,)
    ingest(db, EVENT)
    assert _events(db) == [(*KNATIVE_ROW, 1)]
    assert rows(db, "select value from relplan_meta") == [(str(workspace.SCHEMA_VERSION),)]


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.sampled_from(["", "Pod", "x", "2019-05-10T23:27:06Z"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "kind",
                    "items",
                    "reason",
                    "involvedObject",
                    "regarding",
                    "firstTimestamp",
                    "count",
                    "name",
                    "series",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(doc=_JSON)
def test_any_json_either_parses_or_is_refused_with_a_line(doc: object) -> None:
    from relplan.ingest.cluster.kube_events import parse_events

    text = json.dumps(doc, indent=2)
    line: int | None = -1
    events = []
    try:
        events = list(parse_events(text, "e.json"))
    except InputError as exc:
        line = exc.line
    if line != -1:
        assert line is not None
        assert 1 <= line <= text.count("\n") + 1
    for e in events:
        assert e.count >= 1
        assert e.t_last >= e.t_first


def test_json_lines_of_events_ingest_one_row_per_line(tmp_path: Path) -> None:
    line = json.dumps(json.loads(EVENT.read_text(encoding="utf-8")))
    path = tmp_path / "events.jsonl"
    path.write_text(line + "\n" + line + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    src = ingest(db, path).sources[0]
    assert (src.kind, src.format, src.rows) == ("cluster", "kube_events", 2)
    assert [r[-1] for r in _events(db)] == [1, 2]


def test_gos_zero_time_is_no_time(tmp_path: Path) -> None:
    """Kubernetes writes an unset time as Go's zero time: read as absent, never as year 1."""
    event = json.loads(EVENT.read_text(encoding="utf-8"))
    event["lastTimestamp"] = "0001-01-01T00:00:00Z"
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    assert _events(db) == [(*KNATIVE_ROW, 1)]  # t_last falls back to t_first


def test_ten_thousand_events_keep_their_lines(tmp_path: Path) -> None:
    """Line numbers come from one index of the file's newlines (counting them from the start
    for each event was quadratic: 40,000 events took over 300 s, 1.9 s to parse now); all go
    in one insert."""
    item = json.loads(EVENT.read_text(encoding="utf-8"))
    doc = {"apiVersion": "v1", "items": [item] * 10_000, "kind": "List"}
    text = json.dumps(doc, indent=4)
    path = tmp_path / "events.json"
    path.write_text(text, encoding="utf-8")
    db = tmp_path / "w.duckdb"
    assert ingest(db, path).sources[0].rows == 10_000
    starts = [i + 1 for i, ln in enumerate(text.splitlines()) if ln == "        {"]
    got = rows(db, "select source_row from kube_events order by source_row")
    assert [r[0] for r in got] == starts
