"""What every analysis receives: the connection, the run context, the flags, the metrics present.

An analysis module exposes `missing(inputs) -> str | None` (the input it lacks, as one
sentence, or None when it can run) and `run(inputs) -> Model`; its registry row
(relplan/analyses/registry.py) names both.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from relplan.analyses.context import RunContext
from relplan.analyses.options import AnalyzeOptions


@dataclass(frozen=True)
class Inputs:
    con: duckdb.DuckDBPyConnection
    ctx: RunContext
    opts: AnalyzeOptions
    metric_names: frozenset[str]  # metric names present in the workspace
    # False: only the run-wide figures (windows, series; what `relplan compare` and the
    # verdict read): no per-replica breakdowns, no engine-trace cross-checks of the counters
    detail: bool = True
