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

The replay starts before the report's analyses: the incident is fitted and its runs handed to
the worker, which replays while the command's process runs the analyses, then takes its share
of what is left (relplan/report/pipeline.py, `collect_report_data`). The command forks its
worker before it imports duckdb (`relplan.whatif.replay.replay_pool`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING

import duckdb

from relplan.analyses import AnalyzeOptions
from relplan.errors import NoDataError, RelplanError
from relplan.whatif.model import WhatIf

if TYPE_CHECKING:
    from relplan.whatif.run import Pending

REPORT_SEEDS = 1


def report_whatif(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    progress: Callable[[int, int], None] | None = None,
    *,
    pool: ProcessPoolExecutor | None = None,
) -> Callable[[], WhatIf]:
    """Start the replay and return what finishes it: from the cache when this workspace was
    replayed before with the same options and code (relplan/whatif/cache.py), else fitted
    now and handed to the workers (`pool`, else started here), which replay while the caller
    runs the analyses; calling the result runs the rest here, stores and returns it. Raises
    NoDataError (now, or when called) when nothing is replayed."""
    from relplan.whatif import cache

    key = cache.fingerprint(con, opts, f"seeds={REPORT_SEEDS}")
    hit = cache.load(key)
    if hit is not None:
        cached = json.loads(hit)
        if "not_replayed" in cached:
            raise NoDataError(str(cached["not_replayed"]))
        result = WhatIf.model_validate(cached["whatif"])
        return lambda: result
    try:
        pending = _start(con, opts, pool)
    except NoDataError as exc:
        cache.store(key, json.dumps({"not_replayed": str(exc)}))
        raise

    def finish() -> WhatIf:
        try:
            result = pending.result(progress)
        except NoDataError as exc:
            cache.store(key, json.dumps({"not_replayed": str(exc)}))
            raise
        except RelplanError as exc:
            cache.store(key, json.dumps({"not_replayed": f"not replayed: {exc}"}))
            raise NoDataError(f"not replayed: {exc}") from None
        cache.store(key, json.dumps({"whatif": result.model_dump(mode="json")}))
        return result

    return finish


def _start(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    pool: ProcessPoolExecutor | None,
) -> Pending:
    from relplan.whatif.figures import figures
    from relplan.whatif.replay import report_jobs
    from relplan.whatif.run import WhatIfOptions, start_whatif

    incident = figures(con, opts)
    verdict = incident.verdict
    if verdict == "recovered":
        raise NoDataError("not replayed: the incident recovered by itself, no control is needed")
    if verdict == "insufficient data":
        raise NoDataError("not replayed: the incident has no verdict to compare the replays with")
    try:
        return start_whatif(
            con,
            WhatIfOptions(seeds=REPORT_SEEDS, jobs=report_jobs(), capacity=opts.capacity),
            analyze_opts=opts,
            incident=incident,
            pool=pool,
        )
    except NoDataError:
        raise
    except RelplanError as exc:
        raise NoDataError(f"not replayed: {exc}") from None
