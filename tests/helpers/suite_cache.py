"""A test's own cache folder that shares with the suite's what the test is not about.

A test of one cache (the report's page cache, its workspace cache) gives relplan a cache folder
of its own (`RELPLAN_CACHE_DIR`), so it sees only what it wrote there. Its reports still replay
the what-if and inline the Vega bundle, which a fresh folder would compute anew in every test:
about 5 CPU seconds for the sample's 11 replays and 1.5 for the bundle. `share_suite_caches`
links those two into the test's folder from the suite's (tests/conftest.py, one per run,
shared by the workers): the replays are computed once per run, and the bundle is read from
the suite's folder once another test has built it there. Both are keyed on everything that
changes them and written atomically (relplan/caches.py), so sharing them between tests and
workers changes no page.
"""

from __future__ import annotations

import os
from pathlib import Path


def share_suite_caches(own: Path) -> Path:
    """Make `own` (before the test points `RELPLAN_CACHE_DIR` at it) with links to the
    suite's `whatif/` folder and Vega bundle; `own`."""
    own.mkdir(parents=True, exist_ok=True)
    suite = os.environ.get("RELPLAN_CACHE_DIR")
    if not suite or Path(suite).resolve() == own.resolve():
        return own
    from relplan.report import bundle
    from relplan.report.html import VL_VERSION

    replays = Path(suite) / "whatif"
    replays.mkdir(parents=True, exist_ok=True)
    (own / "whatif").symlink_to(replays, target_is_directory=True)
    # the suite's bundle once a test built it there; until then the link leads nowhere, reads
    # as absent, and this test's report builds its own in place of the link (caches.py)
    js = bundle.cache_path(VL_VERSION)
    (own / js.name).symlink_to(js)
    return own
