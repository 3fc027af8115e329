"""What keeps `chart_specs` cheap (docs/benchmarks.md, the computed report's fourth wave):
every channel is an Altair object, never a shorthand string or a dict, and Altair's debug
mode (a schema check of each object made) is off while the command draws, restored after."""

from __future__ import annotations

from typing import Any

import pytest
from altair.utils import schemapi

from relplan.report.charts import chart_specs
from tests.helpers.report_samples import HOSTILE, sample_report


def test_no_chart_builds_a_channel_from_a_shorthand_or_a_dict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Altair turns a string or a dict into a channel through from_dict, which hashes the
    # schema of its ~570 classes on every call (about 2.6 ms each).
    made: list[type[Any]] = []
    original = schemapi.SchemaBase.from_dict.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Any], dct: dict[str, Any], validate: bool = True) -> Any:
        made.append(cls)
        return original(cls, dct, validate)

    monkeypatch.setattr(schemapi.SchemaBase, "from_dict", classmethod(spy))
    specs = chart_specs(sample_report(HOSTILE))
    assert len(specs) >= 8
    assert made == []


@pytest.mark.parametrize("before", [True, False])
def test_debug_mode_is_off_while_drawing_and_restored_after(before: bool) -> None:
    seen: list[bool] = []
    with schemapi.debug_mode(before):
        from relplan.report import charts

        report = sample_report(HOSTILE)
        original = charts._spec

        def spy(*args: Any) -> Any:
            seen.append(schemapi.DEBUG_MODE)
            return original(*args)

        charts._spec = spy
        try:
            chart_specs(report)
            chart_specs(report, validate=True)
        finally:
            charts._spec = original
        assert schemapi.DEBUG_MODE is before
    n = len(seen) // 2
    assert seen == [False] * n + [True] * n
