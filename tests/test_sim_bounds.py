"""`relplan simulate` refuses up front what would not fit in memory (reliability, second wave):
a phase of 10^9 s or `inf`, a block size of 10^9, phases that plan 200 M calls. Each is one
`relplan: error:` line and exit 2, before any call is drawn or any file written."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("workload.phases=[{name='base',seconds=1e9,rate_x=0.6}]", "less than or equal to 2592000"),
        ("workload.phases=[{name='base',seconds=inf,rate_x=0.6}]", "less than or equal to 2592000"),
        ("engine.block_size=1000000000", "block_size: Input should be less than or equal to 1024"),
        (
            "workload.phases=[{name='base',seconds=2000000,rate_per_s=100}]",
            "plan about 200,000,000 calls, more than the 5,000,000",
        ),
    ],
)
def test_what_would_not_fit_in_memory_is_refused_up_front(
    tmp_path: Path, setting: str, said: str
) -> None:
    out = tmp_path / "out"
    got = CliRunner().invoke(
        app, ["simulate", "run", "pulse-retry-cancel", "--out", str(out), "--set", setting]
    )
    assert got.exit_code == 2, got.output
    assert said in got.stderr
    assert got.stderr.count("\n") == 1
    assert not out.exists()
