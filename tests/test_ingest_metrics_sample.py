"""relplan/ingest/metrics/text.py reads a sample line with one regular expression when it is
plain (single spaces, labels without escapes, no exemplar): for every line that path takes,
the result is the full parser's, and every other line (and a label named twice) still gets
the full parser's result or its message."""

from __future__ import annotations

import pytest

from relplan.ingest.metrics import text
from relplan.ingest.metrics.text import SampleError, parse_sample

LINES = [
    'vllm:num_requests_running{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 0 1764460800.000',
    "up 1",
    "up 1 1764460800",
    "up{} 1 2",
    'x{a="1",} 3 4',
    'x{a="v,w}",b="{}"} 3 4',
    'x{a="1", b="2"} 3 4',  # a space after the comma: the full parser
    'x{a = "1"} 3 4',
    'x{a="q\\"uote",b="back\\\\slash",c="new\\nline"} 1 2',
    'x{a="1"} NaN 5',
    'x{a="1"} +Inf 5',
    'x{a="1"} -Inf 5',
    'x{a="1"} 1e3 5',
    'x{a="1"} 1 5 # {trace_id="abc"} 2 5',  # an exemplar
    'x{a="1"}  1  5',
    'x{a="1"}\t1\t5',
    'x{a="1"} 1 5 ',
    # refused, with the full parser's message
    'x{a="1",a="2"} 1 5',
    'x{a="1"b="2"} 1 5',
    'x{a="1"} one 5',
    'x{a="1"}1 5',
    'x{a="1"} 1 5 6',
    '{a="1"} 1 5',
    'x{a="1" 1 5',
    "9x 1 2",
    "x",
]


def _full(line: str) -> tuple[object, ...]:
    try:
        return ("ok", *text._parse_sample(line))
    except SampleError as exc:
        return ("refused", str(exc))


@pytest.mark.parametrize("line", LINES)
def test_a_sample_reads_as_the_full_parser_reads_it(line: str) -> None:
    try:
        got: tuple[object, ...] = ("ok", *parse_sample(line))
    except SampleError as exc:
        got = ("refused", str(exc))
    assert got == _full(line)


def test_the_plain_path_takes_the_common_lines() -> None:
    taken = [line for line in LINES if text._PLAIN.fullmatch(line)]
    assert LINES[0] in taken
    assert 'x{a="1", b="2"} 3 4' not in taken
    assert 'x{a="1"} 1 5 # {trace_id="abc"} 2 5' not in taken
