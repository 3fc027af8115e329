"""whatif's and the simulator's words live in relplan/text/ (issue 29): the fit's provenance,
the check's reasons, the controls' labels and the settings to deploy in relplan/text/whatif.py;
a simulated run's summary, a calibration and the step-cost fit in relplan/text/sim.py.

Each moved module names a sentence by a code (its `Said`) with its numbers and builds none
(counted as tests/test_text_room.py counts them); its text module words every code and no
other; relplan/text/sim.py reads the simulator's results by their shape (protocols), since the
text package never imports the simulator. The words no other test reaches are pinned here as
the modules built them before they moved (relplan/whatif/*.py and relplan/sim/*.py at main
522a6f4).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from relplan.analyses import wording
from relplan.sim import calibrate, costfit, summary
from relplan.text import sim as sim_words
from relplan.text import whatif as whatif_words
from relplan.whatif import check, controls, fit, fit_lengths, fit_observed, settings
from relplan.whatif.model import Provenance
from tests.test_text_room import sentence_lines

ROOT = Path(__file__).resolve().parent.parent

WHATIF = [check, controls, fit, fit_lengths, fit_observed, settings]
SIM = [calibrate, costfit, summary]


def _path(module: ModuleType) -> Path:
    return ROOT / Path(*module.__name__.split(".")).with_suffix(".py")


@pytest.mark.parametrize("module", WHATIF + SIM, ids=lambda m: m.__name__)
def test_a_moved_module_builds_no_sentence(module: ModuleType) -> None:
    assert sentence_lines(_path(module).read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("modules", "words"),
    [(WHATIF, "relplan.text.whatif"), (SIM, "relplan.text.sim")],
    ids=["whatif", "sim"],
)
def test_the_text_module_words_every_code_and_no_other(
    modules: list[ModuleType], words: str
) -> None:
    codes: set[str] = set()
    for m in modules:
        said = set(get_args(m.Said))
        assert said, m.__name__
        assert not said & codes, m.__name__  # one code, one sentence
        codes |= said
        # each module reaches its words by the name of its text module
        assert words in _path(m).read_text(encoding="utf-8"), m.__name__
    assert set(wording.table(words)) == codes


# relplan/text/sim.py's protocols -> the simulator's models they describe
SHAPES: list[tuple[type[Any], type[BaseModel]]] = [
    (sim_words.SummaryLike, summary.SimSummary),
    (sim_words.PhaseLike, summary.PhaseFigures),
    (sim_words.AfterOverloadLike, summary.AfterOverload),
    (sim_words.PrefillLike, summary.PrefillFigures),
    (sim_words.HoldQueueLike, summary.HoldQueueFigures),
    (sim_words.CalibrationLike, calibrate.CalibrationResult),
    (sim_words.SeedLike, calibrate.SeedResult),
    (sim_words.StageLike, calibrate.StageResult),
    (sim_words.EngineFitLike, costfit.EngineFit),
    (sim_words.CoefficientLike, costfit.FittedCoefficient),
]


@pytest.mark.parametrize(("shape", "model"), SHAPES, ids=lambda x: x.__name__)
def test_each_field_the_words_read_is_a_field_of_the_simulators_model(
    shape: type[Any], model: type[BaseModel]
) -> None:
    read = {n for n, v in vars(shape).items() if isinstance(v, property)}
    assert read
    assert read <= set(model.model_fields), read - set(model.model_fields)


def test_the_check_sees_a_protocol_field_the_model_lacks() -> None:
    read = {n for n, v in vars(sim_words.PhaseLike).items() if isinstance(v, property)}
    assert not read <= set(summary.PrefillFigures.model_fields)


def test_the_simulators_text_is_worded_from_its_result() -> None:
    fit_result = costfit.EngineFit(
        source="steps",
        steps_used=1234,
        coefficients=[
            costfit.FittedCoefficient(name="a_ms", value_ms=12.3456789, constrained=True),
            costfit.FittedCoefficient(
                name="b_ms_per_token", value_ms=-0.5, constrained=False, note="negative"
            ),
            costfit.FittedCoefficient(name="b_ms_per_decode_seq", value_ms=None, constrained=False),
        ],
        median_abs_error_pct=3.21,
        p90_abs_error_pct=9.87,
        max_batch_seen=64,
        max_tokens_seen=2048,
        kv_capacity_tokens=None,
        notes=["n1"],
    )
    assert costfit.render_fit(fit_result) == "\n".join(
        [
            "Engine step-cost fit from steps (1,234 steps)",
            "  a_ms                   12.3457 ms",
            "  b_ms_per_token         -0.5 ms (not constrained: negative)",
            "  b_ms_per_decode_seq    not constrained",
            "  error: median 3.2 %, p90 9.9 %",
            "  largest batch seen: 64 (lower bound of --max-num-seqs)",
            "  most tokens in a step: 2048 (lower bound of --max-num-batched-tokens)",
            "  note: n1",
        ]
    )


# (text module, code, values, the words as the module built them before they moved)
UNREACHED: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "whatif",
        "check_verdict_differs",
        {"replayed": ["metastable", "recovered"], "incident": "draining"},
        "the as-observed replay reached metastable, recovered where the incident was draining:"
        " the fitted scenario does not reproduce the incident, so its controls' outcomes would"
        " not say what the incident would have done; check the fit's parts (docs/whatif.md,"
        " The fit) and give the flags that fix them",
    ),
    (
        "whatif",
        "check_error_too_large",
        {"error": 0.234, "window": "hold", "most": 0.1},
        "the as-observed replay differs by 23% of calls in hold (more than 10%): the controls'"
        " figures would carry that error",
    ),
    (
        "whatif",
        "check_trusted",
        {"verdict": "recovered", "error": None, "window": None},
        "every as-observed seed reached the incident's verdict (recovered)",
    ),
    ("whatif", "deadline_given", {"source": "--deadline"}, "D from --deadline"),
    (
        "whatif",
        "cancellation_rare",
        {"aborted": 3, "gone": 10},
        "only 3 of 10 executions whose client left were aborted",
    ),
    (
        "whatif",
        "refusals_seen",
        {"refused": 7},
        "7 attempts were refused (shed or error): which limit refused them is not in the data",
    ),
    ("whatif", "proxy_unobserved", {}, "needs a proxy log and an engine trace: assumed"),
    (
        "whatif",
        "histogram",
        {
            "metric": "vllm:request_prompt_tokens",
            "requests": 811.0,
            "mean": 499.37,
            "share": 1.0,
            "low": 200.0,
            "high": float("inf"),
        },
        "vllm:request_prompt_tokens histogram: 811 finished requests, mean 499.4, 100% in"
        " (200, +Inf]",
    ),
    (
        "whatif",
        "prompts_from",
        {"proxy": 0, "engine": 12, "drawn": 3, "histogram": "H"},
        "12 from the engine trace's arrivals; 3 drawn from the H",
    ),
    (
        "whatif",
        "prompts_from_arrivals",
        {"drawn": 4, "histogram": "H"},
        "prompt_tokens of the arrivals; 4 drawn from the H",
    ),
    (
        "whatif",
        "prompts_from_arrivals",
        {"drawn": 0, "histogram": None},
        "prompt_tokens of the arrivals",
    ),
    (
        "whatif",
        "calls_source",
        {"proxy": False},
        "executions' `arrived` events in the engine trace",
    ),
    (
        "whatif",
        "steps_not_fitted",
        {"source": "steps", "unconstrained": [("a_ms", None), ("b_ms_per_token", "negative")]},
        "steps: a_ms not constrained; b_ms_per_token negative",
    ),
    (
        "whatif",
        "batch_assumed",
        {"source": "engine trace"},
        "assumed: the largest batch in the engine trace (a lower bound: the data never held it"
        " at a limit)",
    ),
    (
        "whatif",
        "profile_scaled_from",
        {"label": "h100-7b (H100)", "base": 2.85, "capacity": 1.5},
        "h100-7b (H100) scaled so that its C^ 2.85 becomes the incident's 1.5 calls/s",
    ),
    (
        "whatif",
        "profile_scaled",
        {"name": "h100-7b", "speed": 0.5263},
        "profile h100-7b at speed 0.5263",
    ),
    (
        "whatif",
        "speed_provenance",
        {"speed": 1.0, "base": 2.85, "capacity": 1.5},
        "relplan whatif fit: 1 x 2.85 / 1.5 (the profile's calibrated C^ over the C^ of the"
        " incident)",
    ),
    ("whatif", "profile_chosen", {"given": True, "base": None}, "--profile"),
    (
        "whatif",
        "prefix_cached",
        {"cached": 9, "executions": 10, "steps": False},
        "cached tokens of 9 of 10 executions' ends (cached_tokens)",
    ),
    (
        "whatif",
        "prefix_counters",
        {
            "metric": "vllm:prefix_cache_hits_total",
            "retried": False,
            "share": 0.5,
            "prompt_tokens": 1000.0,
        },
        "vllm:prefix_cache_hits_total over vllm:prompt_tokens_total (no retry seen; a retry's own"
        " earlier prompt would count too): 50% of 1000 prompt tokens cached, times the calls'"
        " mean prompt",
    ),
    (
        "whatif",
        "retry_reuse_seen",
        {
            "cached": 12345.0,
            "total": 20000.0,
            "excess": 5000.0,
            "per_retry": 50.0,
            "retries": 100,
            "reused": True,
        },
        "vllm:prompt_tokens_cached_total rose 12,345 of 20,000 prompt tokens from the first retry"
        " on, 5,000 beyond the shared prefix: 50 a retry over 100 retries (a retry finds its"
        " call's prompt blocks)",
    ),
    (
        "whatif",
        "retry_reuse_assumed",
        {"counter_missing": False},
        "assumed: a retry does not reuse its predecessor's blocks (the simulator's default)",
    ),
    (
        "whatif",
        "outputs_lognormal",
        {"median": 300.0, "sigma": 0.44, "fitted": False, "before_phase": None},
        "drawn from lognormal(median 300, sigma 0.44): assumed, the data holds no finished"
        " lengths (no step records, no vllm:request_generation_tokens histogram)",
    ),
    (
        "whatif",
        "outputs_lognormal",
        {"median": 123.4, "sigma": 0.5, "fitted": True, "before_phase": None},
        "drawn from lognormal(median 123, sigma 0.50) fitted to every finished call, each longer"
        " than what it had generated",
    ),
    ("whatif", "capacity_given", {"flag": True, "source": None}, "--capacity"),
    (
        "whatif",
        "capacity_from_costs",
        {"prefill": 116.2, "output": 32.0, "seqs": 64, "estimated": None, "estimated_source": None},
        "the fitted step costs, each call prefilling 116 tokens (after the prefix) and decoding"
        " 32, 64 requests decoding together",
    ),
    (
        "whatif",
        "scenario_header",
        {
            "provenance": [
                Provenance(part="a", value="v", source="s"),
                Provenance(part="b", value="w", source="t"),
            ]
        },
        "# a: v (s)\n# b: w (t)\n",
    ),
    (
        "whatif",
        "queued_reqs_text",
        {"waiting": 100, "running": 12},
        "vllm serve MODEL --max-num-queued-reqs 112\n# 100 waiting (the replayed cap) + 12"
        " running (peak in the engine trace); vLLM counts both and answers 503 above it",
    ),
    (
        "whatif",
        "max_queued_reqs_text",
        {"total": 370},
        "vllm serve MODEL --max-num-queued-reqs 370\n# vLLM answers 503 above it; waiting and"
        " running requests both count, so it is sized as --max-num-seqs plus the queue wanted",
    ),
    (
        "whatif",
        "step_tokens_text",
        {"tokens": 2048},
        "vllm serve MODEL --max-num-batched-tokens 2048",
    ),
    (
        "whatif",
        "client_text",
        {"retries": 3, "timeout": "None"},
        "client = OpenAI(max_retries=3, timeout=None)",
    ),
    (
        "whatif",
        "first_token_text",
        {"retries": 3},
        "Retry an attempt only when it failed before any token arrived (a refusal, a timeout\n"
        "waiting for the first token); once the response has started streaming, end the call\n"
        "with the error instead of sending the prompt again.\n"
        "client = OpenAI(max_retries=3, timeout=...)  # with stream=True, do not wrap the stream"
        " in a retry loop",
    ),
    (
        "whatif",
        "coalescing_text",
        {"cancellation": "immediate"},
        "Every attempt of one call carries the same key, e.g. the header\n"
        "  Idempotency-Key: <one value per call, repeated on each retry>\n"
        "and the proxy attaches a retry to the running execution with that key.\n"
        "Cancellation when the client leaves: immediate.",
    ),
    ("whatif", "file_label", {"name": "mine"}, "mine (file)"),
    ("whatif", "no_deadline", {}, "no deadline"),
    ("whatif", "no_cut", {}, "no attempt was cut by the client"),
    ("whatif", "retries_assumed", {}, "no proxy log: assumed"),
    ("whatif", "proxy_assumed", {}, "no cancellation, no coalescing"),
    ("whatif", "limits_assumed", {}, "no retry budget or proxy cap assumed"),
    ("whatif", "costs_not_fitted", {}, "step costs not fitted"),
    ("sim", "coefficient_constant", {}, "its column does not vary across the steps"),
    ("sim", "coefficient_collinear", {}, "columns are collinear: the split is arbitrary"),
    (
        "sim",
        "coefficient_negative",
        {},
        "negative: the data cannot separate it from the other terms",
    ),
    (
        "sim",
        "no_stage_grew",
        {"top": 3.95, "next_start": 4.0},
        "no stage grew up to 3.95 calls/s; try --start 4.00",
    ),
    (
        "sim",
        "stats_durations",
        {"max_gap_s": 1.0},
        "no step records: durations are the gaps between scheduler-stats records (<= 1 s),"
        " tokens are batched tokens (prefill and decode together)",
    ),
    (
        "sim",
        "iteration_durations",
        {"source": "engine trace"},
        "durations are the iterations' own elapsed times (engine trace); b is per context"
        " (prefill) token computed, cached prompt tokens excluded; bd per generation request"
        " (the trace's decode tokens: one per decoding request without speculative decoding)",
    ),
    (
        "sim",
        "too_few_steps",
        {"steps": 5, "needed": 20},
        "5 usable steps; at least 20 are needed for a fit",
    ),
    (
        "sim",
        "kv_unknown",
        {},
        "KV capacity: not constrained (no vllm:cache_config_info; a trace alone would need the"
        " contexts at each preemption)",
    ),
    (
        "sim",
        "batch_not_held",
        {"held": 48, "most": 64},
        "batch limit: at most 48 ran while work waited, 64 at another time: not held at a"
        " limit, not constrained",
    ),
]


@pytest.mark.parametrize(
    ("module", "code", "values", "words"), UNREACHED, ids=[f"{u[0]}-{u[1]}" for u in UNREACHED]
)
def test_the_words_no_run_reaches_are_as_they_were(
    module: str, code: str, values: dict[str, Any], words: str
) -> None:
    assert wording.table(f"relplan.text.{module}")[code](**values) == words


def test_a_controls_label_is_worded_from_its_size() -> None:
    assert controls.RetryBudgetPulse(ratio=0.655).label() == "retry budget 66% (from the pulse)"
    assert controls.CoalesceDeferred(cancel_delay_s=4.0).label() == "coalesce, cancel deferred 4 s"
    assert controls.Steps2048().label() == "2,048-token steps"
    assert controls.LongerTimeout(deadline_s=22.0).label() == "client timeout 22 s"


def test_a_controls_real_setting_reads_as_the_docs_table_names_it() -> None:
    assert (
        whatif_words.real_setting("vLLM", "--max-num-seqs", "the batch cap")
        == "vLLM `--max-num-seqs` (the batch cap)"
    )
    assert whatif_words.real_setting("OpenAI Python client", "timeout", "") == (
        "OpenAI Python client `timeout`"
    )
