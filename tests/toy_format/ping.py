"""`ping` logs: one line per HTTP attempt, `PING <epoch s> <call id> <status> <duration>`.

A made-up format (no tool writes it): the smallest adapter, the one docs/development.md walks
through. Each line is one attempt of its call; status 200 is delivered, anything else an
error; the attempt ends <duration> after it was sent, in seconds, or in the unit its own
input option `--ping-unit` names (declared here, offered by every command that reads inputs).
"""

from __future__ import annotations

import duckdb

from relplan.errors import UsageError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example, InputOption
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, faults_for, open_text_lines
from relplan.ingest.gateway_rows import AttemptSink

UNITS = {"s": 1.0, "ms": 0.001}


def _unit(text: str) -> float:
    if text not in UNITS:
        raise UsageError("--ping-unit", f"expected s or ms, got {text!r}")
    return UNITS[text]


UNIT = InputOption[float](
    field="ping_unit",
    type=str,
    default=1.0,
    metavar="s|ms",
    convert=_unit,
    help="ping logs: the unit of the duration field (s or ms; default s).",
)


def recognise(head: sniff.Head, kind: str | None) -> float:
    return sniff.SIGNATURE if head.first.startswith("PING ") else 0.0


def read(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    sink = AttemptSink(con, staged.source_id, "ping", opts.skip, renumber=True)
    unit = UNIT.of(opts)
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 5 or parts[0] != "PING":
                raise ValueError
            t, call, status, seconds = float(parts[1]), parts[2], int(parts[3]), float(parts[4])
        except ValueError:
            sink.reject(n, line, "expected PING <epoch s> <call id> <status> <duration>")
            continue
        outcome = "delivered" if status == 200 else "error"
        sink.call(
            n,
            line,
            [
                {
                    "call_id": call,
                    "t_sent": t,
                    "t_end": t + seconds * unit,
                    "status": status,
                    "outcome": outcome,
                }
            ],
        )
    for n, text, why in faults.drain() if faults is not None else []:
        sink.reject(n, text, why)
    sink.finish(staged.notes)


ADAPTER = Adapter(
    name="ping",
    kinds=("proxy",),
    family="gateways",
    summary="toy `PING <time> <call> <status> <duration>` lines (tests only)",
    tables=("attempts",),
    recognise=recognise,
    read=read,
    options=(UNIT,),
    examples=(
        Example("tests/data/ingest/toy/ping.log", "made up for the recipe (tests/toy_format)"),
    ),
)
