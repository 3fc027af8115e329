"""`whatif` on calls years apart (issue 25): refused up front with the span and the limit
(30 days, the simulator's bound on a phase), before anything is sized by the span. Issue 25 found them out of memory; since simulate
bounds its phases they failed inside a temporary scenario file the user never wrote
(`/tmp/relplan-whatif-*/scenario.toml: invalid scenario: workload.phases.0.seconds`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.ingest import INCIDENT

FIVE_YEARS = 5 * 365 * 86400.0


def _shifted(src: Path, out: Path, tag: str, shift: float) -> Path:
    with out.open("w", encoding="utf-8") as f:
        for line in src.read_text().splitlines():
            r = json.loads(line)
            for k in ("t_planned", "t_sent", "t_end", "t_cancel", "t", "t_issue", "t_done"):
                if r.get(k) is not None:
                    r[k] += shift
            for k in ("call_id", "execution_id"):
                if r.get(k):
                    r[k] = tag + r[k]
            if "call_id" in r:
                r["prompt_tokens"] = r.get("prompt_tokens") or 1000
            f.write(json.dumps(r) + "\n")
    return out


@pytest.mark.slow
def test_whatif_on_calls_five_years_apart_is_refused_with_the_span_and_the_limit(
    tmp_path: Path,
) -> None:
    files = [
        _shifted(INCIDENT / name, tmp_path / f"{tag}-{name}", tag, shift)
        for tag, shift in (("old", -FIVE_YEARS), ("new", 0.0))
        for name in ("proxy.jsonl", "engine.jsonl")
    ]
    db = tmp_path / "w.duckdb"
    done = CliRunner().invoke(app, ["ingest", "--db", str(db), *map(str, files)])
    assert done.exit_code == 0, done.output
    for args in (["whatif"], ["whatif", "fit", "--out", str(tmp_path / "s.toml")]):
        done = CliRunner().invoke(app, [*args, "--db", str(db), "--capacity", "2"])
        err = done.stderr
        assert done.exit_code == 2, done.output
        assert err.startswith("relplan: error: the workspace's calls span 1,825.0 days"), err
        assert "whatif replays at most 30 days" in err
        assert err.count("\n") == 1
        assert "Traceback" not in err
    assert not (tmp_path / "s.toml").exists()
