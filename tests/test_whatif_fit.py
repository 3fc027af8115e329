"""relplan whatif fit on a hand-built incident whose fit can be checked on paper.

The incident (times in seconds from T0; run.json gives C^ = 0.5 calls/s, phases base [0, 20),
pulse [20, 30), hold [30, 60), and no deadline, so D must come from the attempts):

  c1  planned 2.0   a0 sent 2.0, delivered 5.0
  c2  planned 4.5   a0 sent 4.5, client_gone 34.5 (30 s)   a1 sent 35.0 (gap 0.5), delivered 40
  c3  planned 21.0  a0 sent 21.0, client_gone 51.0         a1 sent 53.0 (gap 2.0), shed 53.1
                                                            a2 sent 54.1 (gap 1.0), delivered 58
  c4  planned 22.0  a0 sent 22.0, client_gone 52.0         a1 sent 53.25 (gap 1.25), delivered 59
  c5  planned 25.0  a0 sent 25.0, delivered 29.0
  c6  planned 40.0  a0 sent 40.0, delivered 41.0

So: 6 calls at 2, 4.5, 21, 22, 25, 40 (0, 2.5, 19, 20, 23, 38 s after the first); deadline 30 s
(three attempts cut at exactly 30 s); 2 retries (c3's attempt 2); backoff 0.5-2.0 s (the
gaps 0.5, 2.0, 1.0, 1.25); no engine trace, so no output lengths and the proxy's controls
cannot be observed.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import duckdb
import pytest

from relplan import sql
from relplan.analyses import AnalyzeOptions, resolve_context
from relplan.errors import NoDataError
from relplan.ingest.base import IngestOptions
from relplan.ingest.driver import ingest_files
from relplan.sim import costfit
from relplan.sim.scenario import load_scenario
from relplan.whatif.fit import ClientFlags, _fitted_profile, fit_incident
from relplan.whatif.toml_out import dump_toml
from relplan.workspace import connect
from tests.helpers.lab import lab_ingest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

T0 = 1_764_460_800.0
SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"

# (call, attempt, t_planned, t_sent, t_end, outcome, prompt_tokens)
ATTEMPTS = [
    ("c1", 0, 2.0, 2.0, 5.0, "delivered", 1000),
    ("c2", 0, 4.5, 4.5, 34.5, "client_gone", 1200),
    ("c2", 1, 4.5, 35.0, 40.0, "delivered", 1200),
    ("c3", 0, 21.0, 21.0, 51.0, "client_gone", 900),
    ("c3", 1, 21.0, 53.0, 53.1, "shed", 900),
    ("c3", 2, 21.0, 54.1, 58.0, "delivered", 900),
    ("c4", 0, 22.0, 22.0, 52.0, "client_gone", 1100),
    ("c4", 1, 22.0, 53.25, 59.0, "delivered", 1100),
    ("c5", 0, 25.0, 25.0, 29.0, "delivered", 800),
    ("c6", 0, 40.0, 40.0, 41.0, "delivered", 1000),
]


def _write_incident(
    folder: Path,
    *,
    prompt_of_c5: int | None = 800,
    capacity: bool = True,
    before: list[tuple[str, int, float, float, float, str, int]] | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for call, att, tp, ts, te, outcome, prompt in (before or []) + ATTEMPTS:
        lines.append(
            json.dumps(
                {
                    "call_id": call,
                    "attempt": att,
                    "t_planned": T0 + tp,
                    "t_sent": T0 + ts,
                    "t_end": T0 + te,
                    "outcome": outcome,
                    "attached": False,
                    "status": 503 if outcome == "shed" else None,
                    "prompt_tokens": prompt_of_c5 if call == "c5" else prompt,
                    "max_tokens": 512,
                }
            )
        )
    (folder / "proxy.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {
        "name": "hand-built",
        "t0": T0,
        "overload_phase": "pulse",
        "phases": [
            {"name": "base", "start": 0.0, "end": 20.0},
            {"name": "pulse", "start": 20.0, "end": 30.0},
            {"name": "hold", "start": 30.0, "end": 60.0},
        ],
    }
    if capacity:
        manifest["capacity_calls_per_s"] = 0.5
    (folder / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    db = folder / "incident.duckdb"
    con = duckdb.connect(str(db))
    sql.run(con, "schema")
    ingest_files(con, [folder / "proxy.jsonl", folder / "run.json"], IngestOptions())
    con.close()
    return db


@pytest.fixture
def hand_built(tmp_path: Path) -> Path:
    return _write_incident(tmp_path / "in")


def _fit(db: Path, out: Path, **kw: object):  # type: ignore[no-untyped-def]
    con = duckdb.connect(str(db), read_only=True)
    try:
        return fit_incident(con, out, **kw)  # type: ignore[arg-type]
    finally:
        con.close()


def test_arrivals_are_the_first_attempts_planned_times_from_the_first_call(
    hand_built: Path, tmp_path: Path
) -> None:
    fitted = _fit(hand_built, tmp_path / "fit" / "scenario.toml")
    recs = [json.loads(x) for x in fitted.calls_path.read_text().splitlines()]
    assert [r["timestamp"] for r in recs] == [0.0, 2500.0, 19000.0, 20000.0, 23000.0, 38000.0]
    assert [r["input_length"] for r in recs] == [1000, 1200, 900, 1100, 800, 1000]


def test_deadline_retries_and_backoff_are_recovered_exactly(
    hand_built: Path, tmp_path: Path
) -> None:
    client = _fit(hand_built, tmp_path / "s.toml").client
    assert client["deadline_s"] == 30.0
    assert client["max_retries"] == 2
    assert (client["backoff_min_s"], client["backoff_max_s"]) == (0.5, 2.0)


def test_flags_override_what_the_data_shows(hand_built: Path, tmp_path: Path) -> None:
    flags = ClientFlags(deadline_s=45.0, max_retries=5, backoff_min_s=1.0, backoff_max_s=4.0)
    fitted = _fit(hand_built, tmp_path / "s.toml", flags=flags)
    c = fitted.client
    assert (c["deadline_s"], c["max_retries"], c["backoff_min_s"], c["backoff_max_s"]) == (
        45.0,
        5,
        1.0,
        4.0,
    )
    sources = {p.source for p in fitted.provenance if p.part == "client"}
    assert {"--deadline", "--max-retries", "--backoff"} <= sources


def test_first_phase_is_shortened_by_the_first_calls_offset(
    hand_built: Path, tmp_path: Path
) -> None:
    phases = _fit(hand_built, tmp_path / "s.toml").data["workload"]["phases"]
    assert [(p["name"], p["seconds"]) for p in phases] == [
        ("base", 18.0),
        ("pulse", 10.0),
        ("hold", 30.0),
    ]
    # two calls planned in [0, 20) (c1, c2) -> 2 / 20 s
    assert phases[0]["rate_per_s"] == pytest.approx(2 / 20)


def test_calls_before_the_first_phase_get_a_phase_of_their_own(tmp_path: Path) -> None:
    """A drill's capacity ramp runs before its phases, and the operator's files hold its calls
    when the lab was marked before it (tests/data/lab/fresh/): the replay's time 0 is the first
    call, so without a leading phase every phase of the replay would lie 126 s early there,
    its "hold" on the ramp's calls."""
    ramp = [
        ("r1", 0, -12.0, -12.0, -11.0, "delivered", 500),
        ("r2", 0, -5.0, -5.0, -4.0, "delivered", 500),
    ]
    db = _write_incident(tmp_path / "ramp", before=ramp)
    out = tmp_path / "s.toml"
    phases = _fit(db, out).data["workload"]["phases"]
    assert [(p["name"], p["seconds"]) for p in phases] == [
        ("before", 12.0),
        ("base", 20.0),
        ("pulse", 10.0),
        ("hold", 30.0),
    ]
    assert phases[0]["rate_per_s"] == pytest.approx(2 / 12)
    # in the replay the pulse starts where its calls are: 32 s after the first call
    scn = load_scenario(str(out))
    starts = [sum(p.seconds for p in scn.workload.phases[:i]) for i in range(4)]
    assert starts[2] == pytest.approx(T0 + 20.0 - (T0 - 12.0))


def test_written_scenario_is_a_valid_simulator_scenario_that_says_where_parts_came_from(
    hand_built: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.toml"
    _fit(hand_built, out)
    scn = load_scenario(str(out))
    assert scn.client.max_retries == 2
    assert scn.capacity_calls_per_s == 0.5
    assert scn.workload.trace is not None
    assert scn.workload.trace.format == "mooncake"
    text = out.read_text()
    assert "# client: deadline 30 s" in text
    assert "# proxy: no cancellation, no coalescing (needs a proxy log and an engine trace" in text


def test_calls_without_an_engine_trace_get_lengths_drawn_and_say_so(
    hand_built: Path, tmp_path: Path
) -> None:
    fitted = _fit(hand_built, tmp_path / "s.toml")
    lengths = next(p for p in fitted.provenance if p.part == "lengths")
    assert "0 output lengths" in lengths.value
    assert "6 others drawn" in lengths.source
    outs = [json.loads(x)["output_length"] for x in fitted.calls_path.read_text().splitlines()]
    assert all(1 <= o <= 512 for o in outs)


def test_no_capacity_is_refused_with_what_to_give(tmp_path: Path) -> None:
    db = _write_incident(tmp_path / "nocap", capacity=False)
    with pytest.raises(NoDataError, match="--capacity"):
        _fit(db, tmp_path / "s.toml")
    fitted = _fit(db, tmp_path / "s2.toml", capacity=0.7)
    assert fitted.data["capacity_calls_per_s"] == 0.7


def test_a_first_attempt_without_prompt_tokens_names_its_row(tmp_path: Path) -> None:
    db = _write_incident(tmp_path / "noprompt", prompt_of_c5=None)
    with pytest.raises(NoDataError, match=r"'c5'.*row 9.*prompt_tokens"):
        _fit(db, tmp_path / "s.toml")


def test_toml_writer_round_trips_what_the_fit_writes() -> None:
    data = {
        "name": "x",
        "seed": 1,
        "capacity_calls_per_s": 2.8,
        "workload": {
            "phases": [{"name": "a", "seconds": 1.5, "rate_per_s": 0.1}],
            "trace": {"path": "/tmp/x.jsonl", "format": "mooncake"},
        },
        "client": {"deadline_s": float("inf"), "max_retries": 3, "stable": True},
        "proxy": {"cancellation": 'deferred(4) "quoted"'},
    }
    assert tomllib.loads(dump_toml(data)) == data


def test_a_drawn_length_is_longer_than_what_the_call_generated_and_within_max_tokens() -> None:
    import random

    from relplan.whatif.fit import draw_output

    rng = random.Random(1)
    mu = math.log(300)
    draws = [draw_output(rng, mu, 0.44, 400, 2048) for _ in range(200)]
    assert all(400 < d <= 2048 for d in draws)
    assert draw_output(rng, mu, 0.44, 3000, 2048) == 2048  # generated past max_tokens: capped
    assert draw_output(rng, mu, 0.01, 1500, 2048) == 1501  # nothing left above: just past it


@pytest.mark.slow  # an ingest of the sample (once per run)
def test_with_the_capacity_known_step_records_are_not_cost_fitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Ĉ known, `_fitted_profile` fits no step records: on a workspace that has them it
    says None, so `fit_incident` does not run the cost fit there (its queries and numpy's
    import, most of the report's fitting worker's CPU on the sample) and names the profile
    the capacity sizes."""
    db = lab_ingest(tmp_path / "sample.duckdb", [SAMPLE])
    with connect(db, read_only=True) as con:
        ctx = resolve_context(con, AnalyzeOptions())
        assert ctx.capacity is not None
        assert ctx.has_steps
        assert _fitted_profile(con, tmp_path, "probe", [], steps_too=False) is None

        def no_fit(*args: object, **kw: object) -> None:
            raise AssertionError("the cost fit ran")

        monkeypatch.setattr(costfit, "fit_engine", no_fit)
        fitted = fit_incident(con, tmp_path / "fit" / "scenario.toml")
    assert fitted.profile_path is None
    assert fitted.data["capacity_calls_per_s"] == ctx.capacity
