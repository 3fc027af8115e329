"""The packages that relplan/text imports (planning, alerts, drill, lab) name each sentence
they say by a code of their `Said` with its numbers; the text module their `Words` names words
every code and no other (relplan/wording.py). The analyses' own check is
tests/test_text_analyses.py."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import get_args

import pytest

from relplan import wording
from relplan.drill.capacity import RampStop
from relplan.lab.settings import VLLM_PACKAGE
from relplan.text import drill as drill_text

SAYING = [
    importlib.import_module(f"relplan.{name}")
    for name in (
        "alerts.dashboard",
        "alerts.rules",
        "alerts.slo",
        "drill.client",
        "lab.capture",
        "lab.environment",
        "lab.lifecycle",
        "planning.budget",
        "planning.pulse",
    )
]


def _words_of(module: ModuleType) -> str:
    say = module._say
    assert isinstance(say, wording.Words)
    assert say.module.startswith("relplan.text.")
    return say.module


@pytest.mark.parametrize("module", SAYING, ids=lambda m: m.__name__)
def test_its_text_module_words_every_code(module: ModuleType) -> None:
    assert set(get_args(module.Said)) <= set(wording.table(_words_of(module)))


@pytest.mark.parametrize("text", sorted({_words_of(m) for m in SAYING}))
def test_each_text_table_words_only_the_codes_said(text: str) -> None:
    """A text module may word the codes of several modules (relplan.text.alerts: the rules and
    the dashboard), but none that no module says."""
    said = {c for m in SAYING if _words_of(m) == text for c in get_args(m.Said)}
    assert set(wording.table(text)) == said


def test_a_code_is_worded_with_its_numbers_through_the_formatter() -> None:
    pulse = importlib.import_module("relplan.planning.pulse")
    assert (
        pulse._say("retries_collapse", retries=3, retried_x=2.4, retried_calls_per_s=6.672)
        == "if the hold's calls time out and retry 3 times, they offer 2.40x capacity (6.67"
        " calls/s): above capacity, so the queue can stay full of attempts whose clients have"
        " left (metastable failure)"
    )


# The lab's progress lines need a real lab to be said; their words, as relplan/lab built them
# before they moved, pinned here.
LAB_LINES = [
    (
        "creating_venv",
        {"venv": Path("/l/venv"), "package": VLLM_PACKAGE},
        f"creating the lab environment in /l/venv (vLLM {VLLM_PACKAGE}; a few minutes)",
    ),
    (
        "installing_plugin",
        {"venv": Path("/l/venv"), "target": ["-e", "/src/relplan"]},
        "installing the relplan plugin into /l/venv (-e /src/relplan)",
    ),
    (
        "starting_nginx",
        {"url": "http://127.0.0.1:8080", "logs": [Path("/l/a.json"), Path("/l/a.log")]},
        "starting nginx on http://127.0.0.1:8080 (logs /l/a.json, /l/a.log)",
    ),
    (
        "starting_prometheus",
        {"url": "http://127.0.0.1:9090", "scrape_s": 1},
        "starting Prometheus on http://127.0.0.1:9090, scraping vLLM every 1 s",
    ),
    (
        "gateway_still_busy",
        {"waited_s": 600.04, "left": 2},
        "warning: after 600.0 s nginx still handles 2 request(s); their access-log lines are"
        " not in this copy (collect again later, or --wait)",
    ),
    (
        "gateway_unknown",
        {"waited_s": 600.04, "url": "http://127.0.0.1:8080/relplan/nginx-status"},
        "warning: nginx's status page (http://127.0.0.1:8080/relplan/nginx-status) gave no"
        " count of the requests in flight (waited 600.0 s); the access-log lines of requests"
        " still in flight may be missing from this copy",
    ),
    (
        "gateway_waited",
        {"waited_s": 0.25},
        "waited 0.2 s for nginx to finish the requests in flight",
    ),
    ("stopped", {"name": "vllm", "pid": 4242}, "stopped vllm (pid 4242)"),
]


@pytest.mark.parametrize(("code", "values", "text"), LAB_LINES, ids=[c for c, _, _ in LAB_LINES])
def test_the_lab_progress_lines(code: str, values: dict[str, object], text: str) -> None:
    assert wording.table("relplan.text.lab")[code](**values) == text


def test_why_the_ramp_stopped() -> None:
    assert (
        drill_text.stopped_because(RampStop("small_gain", 16, 0.05))
        == "concurrency 16 raised the best throughput by less than 5%"
    )
    assert (
        drill_text.stopped_because(RampStop("highest", 64, 0.05))
        == "reached the highest concurrency (64)"
    )


def test_why_an_attempt_was_not_delivered() -> None:
    say = wording.table("relplan.text.drill")
    assert say["http_status"](status=503, body="no\n  capacity ") == "HTTP 503: no capacity"
    assert say["stream_error"](error={"message": "x" * 300}) == (
        "error in the stream: " + str({"message": "x" * 300})[:200]
    )
    assert say["not_openai"](exc=ValueError("bad json")) == (
        "not an OpenAI-compatible reply (bad json)"
    )
    assert say["transport"](exc=TimeoutError("read")) == "TimeoutError: read"
