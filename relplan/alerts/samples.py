"""The workspace's metric samples as SeriesStores: all at once (`load_store`) or a few shards
at a time (`stream_stores`, relplan/alerts/shards.py says when that gives the same results).

Times become whole milliseconds, int64(t * 1000) truncated, as Prometheus's OpenMetrics
parser stores a timestamp; two samples of one series at the same millisecond keep the first
stored (by source, then row).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb
import numpy as np

from relplan import sql
from relplan.alerts import shards as shards_mod
from relplan.alerts.promql_series import SeriesStore, make_labels

if TYPE_CHECKING:
    import pyarrow as pa

# Samples per batch of the streaming evaluator: about 16 bytes a sample in the store plus
# the Arrow result it is built from (32 bytes a sample) and DuckDB's grouping buffers;
# 1M samples keep a batch near 100 MB whatever the fleet's size.
BATCH_SAMPLES = 1_000_000
# DuckDB's memory limit while batches stream: each batch re-reads the samples table, and
# DuckDB keeps the blocks it read cached up to its limit (1 GB by default), which would let
# the process grow with the table; a batch's own grouping needs well under this.
STREAM_MEMORY_LIMIT = "256MB"


def store_from_table(table: pa.Table) -> SeriesStore:
    """A SeriesStore from rows of (name, label_keys, label_values, samples list)."""
    store = SeriesStore()
    if table.num_rows == 0:
        return store
    samples = table.column("samples").combine_chunks()
    # The list's offsets index its values array; StructArray.flatten gives each field of
    # those values (ListArray.flatten would import pyarrow.compute: 0.04-0.07 s).
    values = samples.values
    fields = dict(zip((f.name for f in values.type), values.flatten(), strict=True))
    t_all = (fields["t"].to_numpy(zero_copy_only=False) * 1000).astype(np.int64)
    v_all = fields["v"].to_numpy(zero_copy_only=False).astype(np.float64)
    s_all = fields["s"].to_numpy(zero_copy_only=False).astype(np.int64)
    r_all = fields["r"].to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = samples.offsets.to_numpy()
    names_col = table.column("name").to_pylist()
    keys_col = table.column("label_keys").to_pylist()
    values_col = table.column("label_values").to_pylist()
    for i, name in enumerate(names_col):
        labels = make_labels(name, dict(zip(keys_col[i], values_col[i], strict=True)))
        a, b = int(offsets[i]), int(offsets[i + 1])
        order = np.lexsort((r_all[a:b], s_all[a:b], t_all[a:b]))
        store.add_arrays(labels, t_all[a:b][order], v_all[a:b][order])
    return store


def load_store(
    con: duckdb.DuckDBPyConnection, names: Sequence[str], t_from: float, t_to: float
) -> SeriesStore:
    """Samples of `names` with t_from <= t <= t_to from metric_samples, times in whole ms."""
    table = sql.arrow(
        con, "alerts/metric_series", {"names": list(names), "t_from": t_from, "t_to": t_to}
    )
    return store_from_table(table)


def stream_stores(
    con: duckdb.DuckDBPyConnection,
    names: Sequence[str],
    t_from: float,
    t_to: float,
    label: str | None,
    budget: int | None = BATCH_SAMPLES,
) -> Iterator[SeriesStore]:
    """The samples of `names` in [t_from, t_to], one store per batch of whole shards of
    `label` (at most `budget` samples a batch, a larger shard alone); `label` None or
    `budget` None: one store with everything, as load_store."""
    if label is None or budget is None:
        yield load_store(con, names, t_from, t_to)
        return
    base = {"names": list(names), "t_from": t_from, "t_to": t_to, "label": label}
    sizes = sql.rows(con, "alerts/metric_shard_sizes", base)
    found = shards_mod.shards((str(r["shard"]), int(r["samples"])) for r in sizes)
    planned = shards_mod.batches(found, budget)
    if len(planned) <= 1:
        yield load_store(con, names, t_from, t_to)
        return
    with _memory_limit(con, STREAM_MEMORY_LIMIT):
        for batch in planned:
            table = sql.arrow(con, "alerts/metric_series_shard", {**base, "shards": batch})
            yield store_from_table(table)
            del table


@contextmanager
def _memory_limit(con: duckdb.DuckDBPyConnection, limit: str) -> Iterator[None]:
    """DuckDB's memory_limit set to `limit` while the block runs, restored afterwards."""
    row = sql.one(con, "alerts/memory_limit", {})
    before = str(row["memory_limit"]) if row else None
    sql.run(con, "alerts/set_memory_limit", {"limit": limit})
    try:
        yield
    finally:
        if before is not None:
            sql.run(con, "alerts/set_memory_limit", {"limit": before})


def label_values(
    con: duckdb.DuckDBPyConnection, names: Sequence[str], t_from: float, t_to: float, label: str
) -> list[str]:
    """Values of `label` on the vLLM series among `names` in [t_from, t_to]."""
    rows = sql.rows(
        con,
        "alerts/metric_label_values",
        {"names": list(names), "t_from": t_from, "t_to": t_to, "label": label},
    )
    return [str(r["value"]) for r in rows]
