"""Folders of mixed files: what relplan reads is ingested, the rest is skipped and listed with
the reason; a file named on the command line that is no known input stays an error.

The vLLM log is a published excerpt (tests/data/published/SOURCES.md); the Azure-trace rows
are hand-made with the header of the public Azure LLM inference trace (docs/simulate.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from relplan.errors import InputError
from relplan.text.ingest import render_ingest
from tests.helpers.fast_read import rows
from tests.helpers.ingest import INCIDENT, ingest

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
VLLM_LOG = PUBLISHED / "vllm_v0_server_log_librechat5116.txt"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(20)
AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,4808,10\n"


def _mixed(d: Path) -> Path:
    d.mkdir()
    shutil.copy(INCIDENT / "proxy.jsonl", d / "proxy.jsonl")
    shutil.copy(VLLM_LOG, d / "vllm.log")
    (d / "README.md").write_text("# what happened\n")
    (d / "dashboard.png").write_bytes(PNG)
    (d / "AzureLLMInferenceTrace_conv.csv").write_text(AZURE)
    (d / "notes.txt").write_text("the pager went off at 03:12, restarted vllm-1\n")
    (d / "empty.jsonl").write_text("")
    return d


def test_a_mixed_folder_ingests_what_it_can_and_lists_the_rest(tmp_path: Path) -> None:
    d = _mixed(tmp_path / "incident")
    db = tmp_path / "w.duckdb"
    rep = ingest(db, d, year=2024)
    assert sorted((s.kind, s.format) for s in rep.sources) == [
        ("engine", "vllm_log"),
        ("proxy", "jsonl"),
    ]
    skipped = {Path(s.path).name: s.reason for s in rep.skipped}
    assert skipped == {
        "README.md": "not a known input (a Markdown document)",
        "dashboard.png": "not a known input (a PNG image)",
        "AzureLLMInferenceTrace_conv.csv": "not a known input (an Azure LLM inference trace"
        " (TIMESTAMP,ContextTokens,GeneratedTokens): relplan simulate replays it as"
        " workload.trace in a scenario (docs/simulate.md))",
        "notes.txt": "not a known input (text in none of relplan's input formats)",
        "empty.jsonl": "not a known input (an empty file)",
    }
    assert rows(db, "select count(*) from attempts") == [(6,)]
    assert rows(db, "select event, count(*) from events group by event order by 1") == [
        ("aborted", 1),
        ("arrived", 1),
    ]
    text = render_ingest(rep)
    for name in skipped:
        assert f"{d / name}: not a known input (" in text


def test_a_stray_named_on_the_command_line_is_an_error(tmp_path: Path) -> None:
    d = _mixed(tmp_path / "incident")
    with pytest.raises(InputError, match=r"notes\.txt:1: cannot tell what this (CSV )?file holds"):
        ingest(tmp_path / "w.duckdb", d / "notes.txt")
    with pytest.raises(InputError, match=r"empty\.jsonl: the file is empty"):
        ingest(tmp_path / "w.duckdb", d / "empty.jsonl")


def test_a_named_foreign_trace_says_what_relplan_can_do_with_it(tmp_path: Path) -> None:
    f = tmp_path / "azure.csv"
    f.write_text(AZURE)
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", f)
    msg = str(err.value)
    assert msg.startswith(f"{f}: not an incident record relplan ingests: an Azure LLM inference")
    assert "relplan simulate" in msg
    assert "workload.trace" in msg


def test_the_other_public_workload_traces_are_recognised(tmp_path: Path) -> None:
    d = tmp_path / "traces"
    d.mkdir()
    (d / "burst.csv").write_text(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "5,ChatGPT,472,18,490,Conversation log\n"
    )
    (d / "mooncake.jsonl").write_text(
        '{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1]}\n'
    )
    shutil.copy(INCIDENT / "proxy.jsonl", d / "proxy.jsonl")
    rep = ingest(tmp_path / "w.duckdb", d)
    reasons = {Path(s.path).name: s.reason for s in rep.skipped}
    assert reasons["burst.csv"].startswith("not a known input (a BurstGPT trace")
    assert reasons["mooncake.jsonl"].startswith("not a known input (a Mooncake trace")
    assert all("relplan simulate" in r for r in reasons.values())


def test_a_broken_known_input_in_a_folder_still_stops_the_ingest(tmp_path: Path) -> None:
    """Skipping is for files that are no input; a bad record is never dropped silently."""
    d = _mixed(tmp_path / "incident")
    (d / "proxy.jsonl").write_text(
        (INCIDENT / "proxy.jsonl").read_text() + '{"call_id": "c9", "attempt": "x"}\n'
    )
    with pytest.raises(InputError, match=r"proxy\.jsonl:\d+: "):
        ingest(tmp_path / "w.duckdb", d, year=2024)


def test_a_folder_of_strays_only_lists_them_in_the_error(tmp_path: Path) -> None:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "README.md").write_text("# notes\n")
    (d / "graph.png").write_bytes(PNG)
    with pytest.raises(
        InputError, match=r"no input files found .*\.jsonl.*README\.md: not a known"
    ):
        ingest(tmp_path / "w.duckdb", d)
