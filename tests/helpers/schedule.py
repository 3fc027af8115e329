"""The order test files start in: the costliest first.

The README's command runs the suite on pytest-xdist's workers with `--dist loadfile`
(pyproject.toml): each file runs whole on one worker, so a module-scoped fixture (a lab
incident's workspace and its analyses, a what-if replay) is built once per run instead of
once per worker, and again after every switch of a parametrised one. Files are handed out in
the order of the collection (`--no-loadscope-reorder`); this plugin puts the files that cost
the most first, so the last file to start on a worker is a short one and the workers finish
together. The ranks are the files' summed test durations in a whole-suite run on the shared
2-core machine (`pytest -n auto --durations=0`, 2026-12-07, branch u27slow at 582e355); a
file not named here keeps its place after them. A wrong rank costs time, never a result.
"""

from __future__ import annotations

import pytest

COSTLIEST_FIRST = (
    "tests/test_lab_incidents.py",
    "tests/test_compare_lab.py",
    "tests/test_whatif_real.py",
    "tests/test_bench_speed.py",
    "tests/test_failed_ingest_stores_nothing.py",
    "tests/test_ingest_contract.py",
    "tests/test_sim_scenarios.py",
    "tests/test_whatif_real_fresh.py",
    "tests/test_compare_page.py",
    "tests/test_faults.py",
    "tests/test_fuzz_inputs.py",
    "tests/test_ingest_fuzz.py",
    "tests/test_report_workspace_cache.py",
    "tests/test_report_browser.py",
    "tests/test_workspace_damaged.py",
    "tests/test_drill_cli.py",
    "tests/test_report_cache.py",
    "tests/test_sim_snapshots.py",
    "tests/test_sim_cli.py",
    "tests/test_ingest_errors.py",
    "tests/test_ingest_otel.py",
    "tests/test_cli_inputs.py",
    "tests/test_verdict_table.py",
    "tests/test_ingest_unreadable.py",
    "tests/test_drill_client.py",
    "tests/test_alerts_promtool.py",
    "tests/test_compare_real.py",
)
_RANK = {path: i for i, path in enumerate(COSTLIEST_FIRST)}


class CostliestFirst:
    """Registered by tests/conftest.py. Runs after every other collection hook (the
    markers, `-m` and pytest's grouping of tests by fixture), and moves whole files only: the
    order of the tests inside a file is pytest's."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        last = len(_RANK)
        items.sort(key=lambda item: _RANK.get(item.nodeid.split("::", 1)[0], last))
