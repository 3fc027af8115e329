"""The lab's recorded incidents (tests/data/lab/README.md): what an operator has of one,
ingested through the CLI as a user would."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from typer.testing import CliRunner

from relplan.cli import app

LAB = Path(__file__).resolve().parent.parent / "data" / "lab"
OPERATOR_FILES = ("vllm.log.gz", "access.json.gz", "prometheus.query_range.json.gz")
# The per-call key and retry-count headers relplan drill sends, as the lab's nginx logs them.
CALL_FLAGS = ["--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt"]


def ingest_operator(
    folder: Path, tmp: Path, db_name: str = "op.duckdb", flags: Sequence[str] = CALL_FLAGS
) -> Path:
    """The operator's files of a recorded incident (vLLM log, nginx JSON log, Prometheus
    export) copied into `tmp` and ingested with `flags` (the drill's call key unless told
    otherwise); the workspace path."""
    op = folder / "operator"
    files = [shutil.copy(op / f, tmp / f) for f in OPERATOR_FILES]
    db = tmp / db_name
    got = CliRunner().invoke(app, ["ingest", *map(str, files), "--db", str(db), *flags])
    assert got.exit_code == 0, got.output
    return db
