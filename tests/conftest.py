"""Shared fixtures and markers.

Markers (pyproject.toml): `chromium` and `prometheus` tests need Debian's tools, `slow` ones
are left out of the fast loop, `python -m pytest -m "not slow"`. A test that takes a tool's
fixture below (directly or through another fixture) gets the tool's marker, and both tool
markers imply `slow`, so such tests need no marks of their own.

The expensive shared things are built once per session and are read-only: a test that
needs to change one builds its own with the helpers in tests/helpers/.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers.bytecode import keep_out_of_tree
from tests.helpers.tools import require_tool

# Bytecode out of the tree when the environment forbids it there (tests/helpers/bytecode.py):
# here, before collection and before pytest-xdist starts its workers.
keep_out_of_tree()

if TYPE_CHECKING:
    from tests.helpers.browser import Browser
    from tests.helpers.prometheus import PrometheusServers
    from tests.helpers.report_samples import RenderedReport

# fixture -> the marker every test using it gets
TOOL_MARKERS = {
    "chromium_bin": "chromium",
    "browser": "chromium",
    "prometheus_bin": "prometheus",
    "promtool_bin": "prometheus",
    "prometheus_server": "prometheus",
}


def pytest_configure(config: pytest.Config) -> None:
    """The suite keeps its caches (relplan/caches.py: the Vega bundle, what-if replays,
    compare's results) in a folder of its own, never the user's ~/.cache, and its template
    workspaces (tests/helpers/templates.py) in another: both set here, in the controlling
    process, before pytest-xdist starts its workers, so they and every relplan process a test
    starts share them; removed at exit. A test of a cache sets its own folder. In every
    process: the costliest test files first (tests/helpers/schedule.py)."""
    from tests.helpers.schedule import CostliestFirst

    config.pluginmanager.register(CostliestFirst(), "relplan-costliest-first")
    if "PYTEST_XDIST_WORKER" in os.environ:
        return
    from tests.helpers.templates import ENV as TEMPLATES

    for name, prefix in (
        ("RELPLAN_CACHE_DIR", "relplan-test-cache-"),
        (TEMPLATES, "relplan-test-templates-"),
    ):
        if not os.environ.get(name):
            folder = tempfile.mkdtemp(prefix=prefix)
            os.environ[name] = folder
            atexit.register(shutil.rmtree, folder, True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        for fixture, marker in TOOL_MARKERS.items():
            if fixture in names and item.get_closest_marker(marker) is None:
                item.add_marker(marker)
        if item.get_closest_marker("slow") is None and (
            item.get_closest_marker("chromium") or item.get_closest_marker("prometheus")
        ):
            item.add_marker("slow")


@pytest.fixture(autouse=True)
def _no_report_page_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test computes its reports (relplan/report/cache.py is off, in this process and
    the processes it starts): a page kept by an earlier test would hide what a test changed.
    tests/test_report_cache.py turns it back on. Likewise the report's workspace cache
    (relplan/report/workspace_cache.py; tests/test_report_workspace_cache.py)."""
    monkeypatch.setenv("RELPLAN_REPORT_CACHE", "0")
    monkeypatch.setenv("RELPLAN_WORKSPACE_CACHE", "0")


# Outside tools: skip without them on a user's machine, fail under CI=true.


@pytest.fixture(scope="session")
def chromium_bin() -> str:
    return require_tool("chromium")


@pytest.fixture(scope="session")
def prometheus_bin() -> str:
    return require_tool("prometheus")


@pytest.fixture(scope="session")
def promtool_bin() -> str:
    return require_tool("promtool")


@pytest.fixture
def browser(chromium_bin: str, tmp_path: Path) -> Browser:
    """Headless Chromium with a fresh profile: `browser(page, "--dump-dom")`."""
    from tests.helpers.browser import Browser

    return Browser(chromium_bin, tmp_path / "chromium-profile")


@pytest.fixture(scope="session")
def prometheus_server(
    prometheus_bin: str, promtool_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PrometheusServers]:
    """`prometheus_server.serve(om_file)` is the URL of a Prometheus backfilled with that
    file; every server stops at the end of the session."""
    from tests.helpers.prometheus import PrometheusServers

    servers = PrometheusServers(prometheus_bin, promtool_bin, tmp_path_factory)
    yield servers
    servers.close()


# Shared data, built once.


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def incident_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The hand-built incident of tests/helpers/incident.py with every part (proxy log,
    engine trace, metrics, run.json). Open it read-only; the session fails if it changed."""
    from tests.helpers.incident import build_incident

    path = build_incident(tmp_path_factory.mktemp("incident") / "incident.duckdb")
    before = _digest(path)
    yield path
    assert _digest(path) == before, f"a test wrote to the shared incident workspace {path}"


@pytest.fixture(scope="session")
def hostile_sample_page() -> RenderedReport:
    """The sample report of tests/helpers/report_samples.py with a hostile label in every
    data string, its charts and its rendered page."""
    from tests.helpers.report_samples import HOSTILE, render_sample

    return render_sample(HOSTILE)


@pytest.fixture(scope="session")
def simulated_run() -> Callable[[str, int], Path]:
    """`simulated_run(scenario, seed)` is the output folder of that seeded built-in run,
    simulated once per test run for every worker (tests/helpers/sim_runs.py; read-only)."""
    from tests.helpers.sim_runs import simulated

    def run(scenario: str, seed: int) -> Path:
        return simulated(scenario, seed)[0]

    return run
