"""The bundled incident (sample_data/pulse-retry-cancel) cut down to one input combination,
ingested into a fresh workspace: what a user has after a real incident.

Cuts:
- `metrics`: metrics.om.txt alone (vLLM's /metrics scraped every 5 s);
- `engine`: engine.parquet's lifecycle events and stats samples, without step records (what
  a vLLM log gives: request lines and the stats line);
- `gateway`: proxy.parquet alone (the gateway's access log);
- `gateway_metrics`: proxy.parquet and metrics.om.txt;
- `everything`: the whole directory, run.json included.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from tests.helpers.ingest import ingest
from tests.helpers.templates import from_template

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "pulse-retry-cancel"
CUTS = ("metrics", "engine", "gateway", "gateway_metrics", "everything")


def _engine_events(folder: Path) -> Path:
    table = pq.read_table(SAMPLE / "engine.parquet")
    keep = table.filter(
        pc.is_in(table["type"], value_set=pc.cast(["event", "stats"], "large_string"))
    )
    out = folder / "engine-events.parquet"
    pq.write_table(keep, out)
    return out


def build_cut(cut: str, folder: Path) -> Path:
    """A workspace in `folder` holding the incident's `cut` inputs; returns its path. The
    ingest runs once per test run; each call copies its result (tests/helpers/templates.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    return from_template(folder / f"{cut}.duckdb", f"cut {cut}", lambda db: _ingest_cut(cut, db))


def _ingest_cut(cut: str, db: Path) -> None:
    files = {
        "metrics": lambda: [SAMPLE / "metrics.om.txt"],
        "engine": lambda: [_engine_events(db.parent)],
        "gateway": lambda: [SAMPLE / "proxy.parquet"],
        "gateway_metrics": lambda: [SAMPLE / "proxy.parquet", SAMPLE / "metrics.om.txt"],
        "everything": lambda: [SAMPLE],
    }[cut]()
    ingest(db, *files)
