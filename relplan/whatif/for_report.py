"""The what-if replay the report shows: one seed per control, to keep `relplan report` quick.

`relplan report` hands `report_whatif` to the report pipeline (the report itself never imports
the simulator); the page says how many seeds were replayed. `relplan whatif --seeds N` is the
full run with the range over seeds.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import duckdb

from relplan.analyses import AnalyzeOptions
from relplan.whatif.model import WhatIf

REPORT_SEEDS = 1


def report_whatif(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    progress: Callable[[int, int], None] | None = None,
) -> WhatIf:
    from relplan.whatif.run import WhatIfOptions, whatif

    jobs = max(1, min(2, os.cpu_count() or 1))
    return whatif(
        con,
        WhatIfOptions(seeds=REPORT_SEEDS, jobs=jobs, capacity=opts.capacity),
        progress=progress,
        analyze_opts=opts,
    )
