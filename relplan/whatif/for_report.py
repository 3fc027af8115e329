"""The what-if replay the report shows: one seed per control, to keep `relplan report` quick.

`relplan report` hands `report_whatif` to the report pipeline (the report itself never imports
the simulator); the page says how many seeds were replayed. `relplan whatif --seeds N` is the
full run with the range over seeds.

Nothing is replayed when there is nothing to improve or to compare with: an incident that
recovered, or one without a verdict. Then, and when the replay cannot run (no proxy log, no
Ĉ, a scenario the simulator refuses), the reason is listed under "what the data could not
show" and the rest of the report is unchanged.
"""

from __future__ import annotations

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
    from relplan.whatif.figures import figures
    from relplan.whatif.run import WhatIfOptions, whatif

    verdict = figures(con, opts).verdict
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
        )
    except NoDataError:
        raise
    except RelplanError as exc:
        raise NoDataError(f"not replayed: {exc}") from None
