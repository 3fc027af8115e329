"""`relplan ingest --attach`: engine Parquet read in place through views.

The bundled sample's engine trace, written as Hive partitions by DuckDB's own
`COPY ... (PARTITION_BY ...)`, attached beside the copied proxy log, metrics and run.json,
gives the same analysis as the whole sample copied. Bad files are refused with the file and
row; a window or replica prunes partitions in the query plan."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from relplan.analyses import AnalyzeOptions, analyze
from relplan.cli import app
from relplan.errors import InputError, UsageError
from relplan.ingest import IngestOptions
from relplan.ingest.attach import attach_globs
from relplan.ingest.driver import ingest_files
from relplan.workspace import open_workspace
from relplan.workspace.attached import narrow
from tests.helpers.fast_cli import CliRunner
from tests.helpers.incident_cuts import build_cut

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "pulse-retry-cancel"
T0 = 1764460800.0  # 2025-11-30T00:00:00Z


def _partition(query: str, out: Path, keys: str) -> None:
    con = duckdb.connect()
    con.execute(f"copy ({query}) to '{out}' (format parquet, partition_by ({keys}))")
    con.close()


def _copied(tmp: Path, files: list[Path]) -> Path:
    db = tmp / f"ws{len(list(tmp.glob('ws*.duckdb')))}.duckdb"
    with open_workspace(db) as con:
        ingest_files(con, files, IngestOptions())
    return db


def _analysis(db: Path, opts: AnalyzeOptions | None = None) -> dict[str, object]:
    with open_workspace(db, read_only=True) as con:
        res = analyze(con, opts or AnalyzeOptions())
    data: dict[str, object] = json.loads(res.model_dump_json())
    return data


@pytest.mark.slow
def test_attached_sample_engine_trace_gives_the_analysis_of_the_copied_one(tmp_path: Path) -> None:
    parts = tmp_path / "traces"
    engine = SAMPLE / "engine.parquet"
    _partition(
        "select *, strftime(to_timestamp(coalesce(t, t_issue)), '%Y-%m-%d') as day,"
        " strftime(to_timestamp(coalesce(t, t_issue)), '%H') as hour"
        f" from read_parquet('{engine}')",
        parts,
        "day, hour",
    )
    # the whole sample copied in: the `everything` cut's workspace, ingested once per run
    # (tests/helpers/incident_cuts.py: `ingest_paths` of the folder, as `_copied` does)
    copied = build_cut("everything", tmp_path / "cut")
    db = _copied(
        tmp_path, [SAMPLE / "proxy.parquet", SAMPLE / "metrics.om.txt", SAMPLE / "run.json"]
    )
    rep = attach_globs(db, [f"{parts}/day=*/hour=*/*.parquet"], IngestOptions())
    with duckdb.connect() as con:
        by_type = dict(
            con.execute(
                f"select type, count(*) from read_parquet('{engine}') group by 1"
            ).fetchall()
        )
    assert rep.rows_by_table == {
        "steps": by_type["step"],
        "events": by_type["event"],
        "engine_stats": by_type["stats"],
    }
    (source,) = rep.sources
    assert source.format == "parquet_attached"
    assert "Hive partitions as columns: day, hour" in source.notes
    assert _analysis(db) == _analysis(copied)
    # Provenance: every attached row names its file and its row in that file.
    with open_workspace(db, read_only=True) as con:
        rows = con.execute(
            "select source_id, source_file, source_row, step, execution_id from steps"
            " order by source_file, source_row limit 1"
        ).fetchall()
        ((sid, file, row, step, xid),) = rows
        in_file = con.execute(
            "select step, execution_id from read_parquet($f, file_row_number = true)"
            " where file_row_number = $r - 1",
            {"f": file, "r": row},
        ).fetchall()
    assert sid == source.source_id
    assert file.startswith(str(parts))
    assert in_file == [(step, xid)]
    # The same files again add nothing.
    again = attach_globs(db, [f"{parts}/day=*/hour=*/*.parquet"], IngestOptions())
    assert again.sources == []
    assert "already attached" in again.skipped[0].reason


def _hourly(out: Path, hours: int = 4, replicas: int = 3) -> int:
    """Steps one every 3.6 s over `hours` hours on `replicas` replicas (1000 rows an hour);
    partitioned by day, hour and replica. Returns the file count."""
    n = hours * 1000
    _partition(
        "select 'step' as type, i as step, t as t_issue, t + 0.03 as t_done,"
        " 'x' || i as execution_id, 10::bigint as prompt_computed,"
        " strftime(to_timestamp(t), '%Y-%m-%d') as day, strftime(to_timestamp(t), '%H') as hour,"
        f" 'r' || (i % {replicas}) as replica"
        f" from (select i, {T0} + i * 3.6 as t from range({n}) r(i))",
        out,
        "day, hour, replica",
    )
    return len(list(out.rglob("*.parquet")))


def _files_scanned(con: duckdb.DuckDBPyConnection, query: str) -> tuple[int, int]:
    plan = "\n".join(str(r[1]) for r in con.execute("explain " + query).fetchall())
    found = re.search(r"Scanning Files: (\d+)/(\d+)", plan)
    assert found is not None, plan
    return int(found.group(1)), int(found.group(2))


@pytest.mark.slow
def test_a_window_or_a_replica_prunes_partitions_in_the_query_plan(tmp_path: Path) -> None:
    total = _hourly(tmp_path / "traces")
    assert total == 4 * 3
    db = tmp_path / "ws.duckdb"
    attach_globs(db, [f"{tmp_path}/traces/day=*/hour=*/replica=*/*.parquet"], IngestOptions())
    query = "select sum(prompt_computed) as s from steps"
    with open_workspace(db, read_only=True) as con:
        narrow(con, T0 + 3600 + 10, T0 + 3600 + 1800)  # inside the second hour
        assert _files_scanned(con, query) == (3, total)
        # Seconds from t0 (the earliest source time) work the same way.
        narrow(con, 3600 + 10, 3600 + 1800, replicas=["r1"])
        assert _files_scanned(con, query) == (1, total)
        assert con.execute(query).fetchall() == [
            (sum(10 for i in range(1000, 2000) if i % 3 == 1),)
        ]
        narrow(con, None, None)
        # A filter on the replica column prunes by itself: it is the partition key.
        assert _files_scanned(con, query + " where replica = 'r2'") == (4, total)


@pytest.mark.slow
def test_analyze_with_from_and_to_reads_only_that_hours_files(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces")
    db = tmp_path / "ws.duckdb"
    glob = f"{tmp_path}/traces/day=*/hour=*/replica=*/*.parquet"
    attached = CliRunner().invoke(app, ["ingest", "--attach", glob, "--db", str(db), "--json"])
    assert attached.exit_code == 0, attached.output
    assert json.loads(attached.stdout)["rows_by_table"] == {"steps": 4000}
    done = CliRunner().invoke(
        app,
        ["analyze", "--db", str(db), "--from", "7210", "--to", "9000", "--json"],
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    # Only hour 3's steps were read: t0 is the first step of that hour.
    assert out["context"]["t0"] == pytest.approx(T0 + 7200, abs=3.6)


@pytest.mark.slow
def test_a_refused_record_names_the_file_and_its_row(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces", hours=2, replicas=1)
    bad = tmp_path / "traces" / "day=2025-11-30" / "hour=01" / "replica=r0" / "data_0.parquet"
    con = duckdb.connect()
    con.execute(
        f"copy (select * replace (case when step = 1005 then t_issue - 1 else t_done end as t_done)"
        f" from read_parquet('{bad}', hive_partitioning = false))"
        f" to '{tmp_path}/fixed.parquet' (format parquet)"
    )
    con.close()
    (tmp_path / "fixed.parquet").replace(bad)
    db = tmp_path / "ws.duckdb"
    with pytest.raises(InputError) as err:
        attach_globs(db, [f"{tmp_path}/traces/**/*.parquet"], IngestOptions())
    assert err.value.path == str(bad)
    assert err.value.line == 6  # step 1005 is the 6th row of hour 1 (steps 1000...)
    assert "is before t_issue" in str(err.value)
    assert not db.exists()  # a failed attach into a new path leaves no workspace behind


def test_an_engine_column_of_the_wrong_type_names_the_file(tmp_path: Path) -> None:
    out = tmp_path / "traces" / "replica=r0"
    out.mkdir(parents=True)
    con = duckdb.connect()
    con.execute(
        "copy (select 'step' as type, 1 as step, '1764460800' as t_issue, 1764460800.5 as t_done,"
        f" 'x' as execution_id, 3 as prompt_computed) to '{out}/a.parquet' (format parquet)"
    )
    con.close()
    with pytest.raises(InputError) as err:
        attach_globs(tmp_path / "ws.duckdb", [f"{tmp_path}/traces/*/*.parquet"], IngestOptions())
    assert err.value.path == str(out / "a.parquet")
    assert "column t_issue is stored as BYTE_ARRAY; expected a number" in str(err.value)


def test_a_glob_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no file matches this glob"):
        attach_globs(tmp_path / "ws.duckdb", [f"{tmp_path}/none/*.parquet"], IngestOptions())


def test_attach_and_paths_together_are_refused(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app,
        [
            "ingest",
            str(SAMPLE / "run.json"),
            "--attach",
            "x/*.parquet",
            "--db",
            str(tmp_path / "w"),
        ],
    )
    assert done.exit_code == 2
    assert "give either PATHs, --prometheus-url or --attach" in done.output


def test_a_second_attachment_in_one_workspace_is_refused(tmp_path: Path) -> None:
    _hourly(tmp_path / "a", hours=1, replicas=1)
    _hourly(tmp_path / "b", hours=1, replicas=1)
    db = tmp_path / "ws.duckdb"
    attach_globs(db, [f"{tmp_path}/a/**/*.parquet"], IngestOptions())
    with pytest.raises(UsageError, match="one attachment per workspace"):
        attach_globs(db, [f"{tmp_path}/b/**/*.parquet"], IngestOptions())


def _attach(db: Path, glob: str) -> None:
    attach_globs(db, [glob], IngestOptions())


def _open(db: Path) -> None:
    with open_workspace(db, read_only=True) as con:
        con.execute("select count(*) from steps").fetchall()


@pytest.mark.parametrize("change", ["added", "removed", "rewritten"])
def test_attached_files_changed_since_are_one_clear_error(tmp_path: Path, change: str) -> None:
    _hourly(tmp_path / "traces", hours=2, replicas=1)
    db = tmp_path / "ws.duckdb"
    glob = f"{tmp_path}/traces/**/*.parquet"
    _attach(db, glob)
    _open(db)  # unchanged: reads
    first = sorted((tmp_path / "traces").rglob("*.parquet"))[0]
    if change == "added":
        con = duckdb.connect()
        con.execute(
            f"copy (select * from read_parquet('{first}', hive_partitioning = false))"
            f" to '{first.parent}/data_1.parquet' (format parquet)"
        )
        con.close()
    elif change == "removed":
        first.unlink()
    else:
        data = first.read_bytes()
        first.write_bytes(data + b"")  # same bytes, new modification time
        import os

        st = first.stat()
        os.utime(first, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with pytest.raises(InputError, match=rf"changed since they were attached: 1 {change} \("):
        _open(db)


def test_the_same_records_copied_and_attached_count_once(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces", hours=1, replicas=1)
    (file,) = sorted((tmp_path / "traces").rglob("*.parquet"))
    db = tmp_path / "ws.duckdb"
    with open_workspace(db) as con:
        ingest_files(con, [file], IngestOptions(kind="engine"))
    with pytest.raises(InputError, match=r"already in the workspace as source 1 .* twice"):
        _attach(db, f"{tmp_path}/traces/**/*.parquet")
    # the other way round: attached first, then a copy of the same file adds nothing
    db2 = tmp_path / "ws2.duckdb"
    _attach(db2, f"{tmp_path}/traces/**/*.parquet")
    with open_workspace(db2) as con:
        rep = ingest_files(con, [file], IngestOptions(kind="engine"))
    assert rep.sources == []
    assert "count its rows twice" in rep.skipped[0].reason


def test_a_rewrite_that_puts_size_and_mtime_back_is_caught_by_its_ctime(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces", hours=1, replicas=1)
    (file,) = sorted((tmp_path / "traces").rglob("*.parquet"))
    db = tmp_path / "ws.duckdb"
    _attach(db, f"{tmp_path}/traces/**/*.parquet")
    st = file.stat()
    file.write_bytes(file.read_bytes())  # the same bytes written again: a new ctime only
    os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns))
    _open(db)  # same content: read, its hash compared
    data = bytearray(file.read_bytes())
    data[data.index(b"PAR1") + 64] ^= 0x01  # one byte of the first data page
    file.write_bytes(bytes(data))
    os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (file.stat().st_size, file.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    with pytest.raises(InputError, match=r"changed since they were attached: 1 rewritten \("):
        _open(db)


def test_two_files_with_the_same_bytes_under_one_glob_are_refused(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces", hours=1, replicas=1)
    (file,) = sorted((tmp_path / "traces").rglob("*.parquet"))
    shutil.copy(file, file.with_name("again.parquet"))
    db = tmp_path / "ws.duckdb"
    with pytest.raises(InputError, match=r"the same bytes as .*again\.parquet, which the glob"):
        _attach(db, f"{tmp_path}/traces/**/*.parquet")
    assert not db.exists()


@pytest.mark.slow
def test_the_same_records_in_another_encoding_copied_and_attached_count_once(
    tmp_path: Path,
) -> None:
    """The steps copied from JSON Lines and attached as Parquet (or the other way round) are
    the same records by (execution_id, step, t_issue, t_done): refused either way."""
    _hourly(tmp_path / "traces", hours=1, replicas=1)
    (file,) = sorted((tmp_path / "traces").rglob("*.parquet"))
    lines = tmp_path / "engine.jsonl"
    duckdb.connect().execute(
        f"copy (select * exclude (day, hour) from '{file}') to '{lines}' (format json)"
    )
    db = tmp_path / "ws.duckdb"
    with open_workspace(db) as con:
        ingest_files(con, [lines], IngestOptions())
    with pytest.raises(InputError, match=r"the same step is already in the workspace, copied"):
        _attach(db, f"{tmp_path}/traces/**/*.parquet")
    db2 = tmp_path / "ws2.duckdb"
    _attach(db2, f"{tmp_path}/traces/**/*.parquet")
    same = r"the same step is attached in place \(.*:1\)"
    with pytest.raises(InputError, match=same) as err, open_workspace(db2) as con:
        ingest_files(con, [lines], IngestOptions())
    assert (err.value.line, err.value.path) == (1, str(lines))
    with open_workspace(db2, read_only=True) as con:
        assert con.execute("select count(*) from steps").fetchall() == [(1000,)]


def test_hour_9_is_hour_09_and_hour_24_is_refused(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces", hours=2, replicas=1)
    day = tmp_path / "traces" / "day=2025-11-30"
    (day / "hour=01").rename(day / "hour=1")
    db = tmp_path / "ws.duckdb"
    _attach(db, f"{tmp_path}/traces/**/*.parquet")
    with open_workspace(db, read_only=True) as con:
        narrow(con, T0 + 3600 + 10, T0 + 3600 + 1800)  # inside the second hour: hour=1
        assert con.execute("select count(*) from steps").fetchall() == [(1000,)]
    (day / "hour=1").rename(day / "hour=24")
    with pytest.raises(InputError, match=r"hour=24: expected an hour 0-23"):
        _attach(tmp_path / "ws3.duckdb", f"{tmp_path}/traces/**/*.parquet")


def test_a_partition_key_that_names_a_column_is_refused(tmp_path: Path) -> None:
    _hourly(tmp_path / "traces", hours=1, replicas=1)
    (file,) = sorted((tmp_path / "traces").rglob("*.parquet"))
    con = duckdb.connect()  # the file keeps its own `replica` column beside the partition's
    con.execute(
        f"copy (select *, 'other' as replica from read_parquet('{file}', hive_partitioning = false))"
        f" to '{tmp_path}/x.parquet' (format parquet)"
    )
    con.close()
    (tmp_path / "x.parquet").replace(file)
    with pytest.raises(InputError, match=r"partition key 'replica' .* also names a column") as err:
        _attach(tmp_path / "ws.duckdb", f"{tmp_path}/traces/**/*.parquet")
    assert err.value.path == str(file)


def _drifting(out: Path, second_step: str) -> None:
    """Two hours of steps: hour 0 with BIGINT numbers, hour 1 with step as `second_step`
    (an SQL expression of i), prompt_computed INTEGER and t_issue, t_done DOUBLE."""
    con = duckdb.connect()
    try:
        for hour, step, tokens in ((0, "i::bigint", "bigint"), (1, second_step, "integer")):
            folder = out / "day=2025-11-30" / f"hour={hour:02d}"
            folder.mkdir(parents=True)
            con.execute(
                f"copy (select 'step' as type, {step} as step, t as t_issue, t + 0.03 as t_done,"
                f" 'x' || i as execution_id, 10::{tokens} as prompt_computed"
                f" from (select i, {T0} + {hour} * 3600 + i * 36.0 as t from range(100) r(i)))"
                f" to '{folder}/data_0.parquet' (format parquet)"
            )
    finally:
        con.close()


def test_numbers_of_another_parquet_type_in_one_partition_read_as_the_tables_types(
    tmp_path: Path,
) -> None:
    _drifting(tmp_path / "traces", "(i + 100)::double")
    db = tmp_path / "ws.duckdb"
    attach_globs(db, [f"{tmp_path}/traces/**/*.parquet"], IngestOptions())
    with open_workspace(db, read_only=True) as con:
        got = con.execute(
            "select count(*), sum(step), sum(prompt_computed), any_value(typeof(step)),"
            " any_value(typeof(prompt_computed)) from steps"
        ).fetchone()
    assert got == (200, sum(range(200)), 2000, "BIGINT", "BIGINT")


def test_a_fractional_number_in_one_partition_names_its_file_and_row(tmp_path: Path) -> None:
    _drifting(tmp_path / "traces", "(i + 100.5)::double")
    second = tmp_path / "traces" / "day=2025-11-30" / "hour=01" / "data_0.parquet"
    with pytest.raises(InputError) as err:
        attach_globs(tmp_path / "ws.duckdb", [f"{tmp_path}/traces/**/*.parquet"], IngestOptions())
    assert err.value.path == str(second)
    assert err.value.line == 1
    assert "step 100.5 is not a whole number" in str(err.value)
