"""`run.json` run manifests (docs/formats.md, Run manifest) -> manifests and phases.

The file is validated by `RunManifest` (unknown keys refused; provenance belongs under
"meta"). Errors name the JSON location: `run.json: phases.1.end: ...`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import ValidationError

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, load_document, read_document
from relplan.models import RunManifest

if TYPE_CHECKING:
    import duckdb


def stage_manifest(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    path = str(info.path)
    raw = read_document(info, "a run manifest")
    doc = load_document(raw, path, "a run manifest object")
    try:
        m = RunManifest.model_validate(doc)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise InputError(f"not a valid run manifest: {problems}", path) from exc
    staged.extra_rows = 1 + len(m.phases)
    staged.finish.append(lambda c: _store(c, staged.source_id, m, json.dumps(doc)))


def _store(con: duckdb.DuckDBPyConnection, source_id: int, m: RunManifest, doc: str) -> None:
    sql.run(
        con,
        "ingest/insert_manifest",
        {
            "source_id": source_id,
            "name": m.name,
            "capacity": m.capacity_calls_per_s,
            "deadline": m.deadline_s,
            "window": m.delivery_window_s,
            "overload_phase": m.overload_phase,
            "t0": m.t0,
            "notes": m.notes,
            "manifest": doc,
        },
    )
    for p in m.phases:
        sql.run(
            con,
            "ingest/insert_phase",
            {"source_id": source_id, "name": p.name, "start_s": p.start, "end_s": p.end},
        )


_MANIFEST_KEYS = {
    "capacity_calls_per_s",
    "deadline_s",
    "delivery_window_s",
    "phases",
    "t0",
    "overload_phase",
}


def _recognise(head: sniff.Head, kind: str | None) -> float:
    keys = head.keys
    if "name" in keys and keys & _MANIFEST_KEYS and not keys & {"call_id", "type"}:
        return sniff.SIGNATURE + 0.03
    doc = head.document
    return sniff.LIKELY + 0.15 if isinstance(doc, dict) and "name" in doc else 0.0


ADAPTERS = (
    Adapter(
        name="run_json",
        shape="json",
        kinds=("manifest",),
        family="canonical",
        summary="run.json: phases, capacity, deadline, delivery window",
        tables=("manifests", "phases"),
        recognise=_recognise,
        read=stage_manifest,
        examples=(
            Example(
                "tests/data/ingest/incident/run.json", "relplan's own format (docs/formats.md)"
            ),
        ),
        doc="run-manifest",
        lines=False,
    ),
)
