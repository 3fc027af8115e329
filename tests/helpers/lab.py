"""The lab's recorded incidents (tests/data/lab/README.md): what an operator has of one,
ingested through the CLI as a user would, once per test run (tests/helpers/templates.py):
each caller gets a copy of that workspace."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.templates import from_template

LAB = Path(__file__).resolve().parent.parent / "data" / "lab"
OPERATOR_FILES = ("vllm.log.gz", "access.json.gz", "prometheus.query_range.json.gz")
# the engine's files of an incident, in the order they are ingested together
ENGINE_FILES = ("vllm.log.gz", "prometheus.query_range.json.gz")
# The per-call key and retry-count headers relplan drill sends, as the lab's nginx logs them.
CALL_FLAGS = ["--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt"]


def _cli_ingest(db: Path, paths: Sequence[Path], flags: Sequence[str]) -> None:
    got = CliRunner().invoke(app, ["ingest", *map(str, paths), "--db", str(db), *flags])
    assert got.exit_code == 0, got.output


def lab_ingest(db: Path, paths: Sequence[Path], flags: Sequence[str] = ()) -> Path:
    """`db` holding `relplan ingest PATHS --db DB FLAGS` (paths in the repository, read
    in place): ingested once per run, copied per call.

    An incident's engine files (ENGINE_FILES: the vLLM log and the Prometheus export, whose
    parse is most of an ingest's cost) with a gateway log beside them, no flags: the engine
    files' own workspace (built once per run, as `lab_ingest` of those two gives it) copied,
    then the gateway log ingested into the copy. Its analyses are those of the one ingest of
    the three files (tests/test_lab_incidents.py checks it on one incident); the engine files
    are parsed once per run instead of once for each gateway log beside them."""
    paths = [Path(p) for p in paths]
    key = "lab " + repr(([str(p.resolve()) for p in paths], list(flags)))
    engine = [p for p in paths if p.name in ENGINE_FILES]
    rest = [p for p in paths if p.name not in ENGINE_FILES]
    if flags or not rest or [p.name for p in engine] != list(ENGINE_FILES):
        return from_template(db, key, lambda t: _cli_ingest(t, paths, flags))

    def layered(t: Path) -> None:
        lab_ingest(t, engine)
        _cli_ingest(t, rest, flags)

    return from_template(db, key, layered)


def ingest_operator(
    folder: Path, tmp: Path, db_name: str = "op.duckdb", flags: Sequence[str] = CALL_FLAGS
) -> Path:
    """The operator's files of a recorded incident (vLLM log, nginx JSON log, Prometheus
    export) copied into `tmp` and a workspace of them ingested with `flags` (the drill's call
    key unless told otherwise); the workspace path. Built once per run as `lab_ingest` builds
    an incident's files: the engine files' workspace (ENGINE_FILES, read in place, parsed
    once per run for every caller) copied, then a copy of the nginx log (in the template's
    folder) ingested into it with `flags`, which name the gateway log's call key and attempt
    header (the engine files' formats read neither)."""
    op = folder / "operator"
    for f in OPERATOR_FILES:
        shutil.copy(op / f, tmp / f)

    def build(db: Path) -> None:
        lab_ingest(db, [op / f for f in ENGINE_FILES])
        gateway = [f for f in OPERATOR_FILES if f not in ENGINE_FILES]
        _cli_ingest(db, [Path(shutil.copy(op / f, db.parent / f)) for f in gateway], flags)

    key = "operator " + repr((str(op.resolve()), list(flags)))
    return from_template(tmp / db_name, key, build)
