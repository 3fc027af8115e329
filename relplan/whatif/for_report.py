"""The what-if replay the report shows: one seed per control, to keep `relplan report` quick.

`relplan report` hands `report_whatif` to the report pipeline (the report itself never imports
the simulator); the page says how many seeds were replayed. `relplan whatif --seeds N` is the
full run with the range over seeds.

Nothing is replayed when there is nothing to improve or to compare with: an incident that
recovered, or one without a verdict. Then, and when the replay cannot run (no proxy log, no
Ĉ, a scenario the simulator refuses), the reason is listed under "what the data could not
show" and the rest of the report is unchanged.

The result (or the reason nothing was replayed) is cached per workspace fingerprint
(relplan/whatif/cache.py, docs/whatif.md "The report's cache"): a second report of the same
inputs reads it instead of replaying.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import duckdb

from relplan.analyses import AnalyzeOptions
from relplan.errors import NoDataError, RelplanError
from relplan.whatif.model import WhatIf

REPORT_SEEDS = 1


def report_whatif(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    progress: Callable[[int, int], None] | None = None,
) -> WhatIf:
    """The replay, from the cache when this workspace was replayed before with the same
    options and code (relplan/whatif/cache.py), else run and stored."""
    from relplan.whatif import cache

    key = cache.fingerprint(con, opts, f"seeds={REPORT_SEEDS}")
    hit = cache.load(key)
    if hit is not None:
        cached = json.loads(hit)
        if "not_replayed" in cached:
            raise NoDataError(str(cached["not_replayed"]))
        return WhatIf.model_validate(cached["whatif"])
    try:
        result = _replay(con, opts, progress)
    except NoDataError as exc:
        cache.store(key, json.dumps({"not_replayed": str(exc)}))
        raise
    cache.store(key, json.dumps({"whatif": result.model_dump(mode="json")}))
    return result


def _replay(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    progress: Callable[[int, int], None] | None,
) -> WhatIf:
    from relplan.whatif.figures import figures
    from relplan.whatif.run import WhatIfOptions, whatif

    incident = figures(con, opts)
    verdict = incident.verdict
    if verdict == "recovered":
        raise NoDataError("not replayed: the incident recovered by itself, no control is needed")
    if verdict == "insufficient data":
        raise NoDataError("not replayed: the incident has no verdict to compare the replays with")
    jobs = max(1, min(2, os.cpu_count() or 1))
    try:
        return whatif(
            con,
            WhatIfOptions(seeds=REPORT_SEEDS, jobs=jobs, capacity=opts.capacity),
            progress=progress,
            analyze_opts=opts,
            incident=incident,
        )
    except NoDataError:
        raise
    except RelplanError as exc:
        raise NoDataError(f"not replayed: {exc}") from None
