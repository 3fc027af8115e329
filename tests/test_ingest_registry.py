"""What the input-format registry feeds cannot drift from it: the index of docs/formats.md,
the `--kind` and `--format` help, the input flags the formats name, the canonical tables they
say they fill, and the catch-all message (one message naming what the file looks like)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relplan.cli import app
from relplan.cli.options import GENERAL_FLAGS, input_flag_names
from relplan.errors import InputError, UsageError
from relplan.ingest import registry
from relplan.workspace import TABLES
from tests.helpers.ingest import ingest

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_index_is_the_registry() -> None:
    text = (ROOT / "docs/formats.md").read_text()
    assert registry.docs_with_index(text) == text, "run python -m relplan.ingest.registry --write"


def test_the_docs_anchors_exist() -> None:
    text = (ROOT / "docs/formats.md").read_text()
    headings = {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", text, flags=re.M)
    }
    for a in registry.adapters().values():
        assert not a.doc or a.doc in headings, (a.name, a.doc)


def test_the_kind_and_format_help_name_every_registered_one() -> None:
    out = " ".join(CliRunner().invoke(app, ["ingest", "--help"], terminal_width=400).output.split())
    for kind in registry.kinds():
        assert kind in out
    assert "cluster" in out
    for name in registry.adapters():
        assert name in out


def test_every_input_flag_is_general_or_a_formats_own() -> None:
    claimed = {o.field for a in registry.adapters().values() for o in a.options}
    assert set(input_flag_names()) == set(GENERAL_FLAGS) | claimed
    assert not set(GENERAL_FLAGS) & claimed


def test_an_option_declared_twice_is_refused() -> None:
    """Two formats that read one flag share one declaration; a second one is an error."""
    from dataclasses import replace

    from relplan.ingest.vllm.log import ADAPTERS, YEAR

    twin = replace(ADAPTERS[0], name="vllm_log_twin", options=(replace(YEAR),))
    with registry.registered(twin), pytest.raises(ValueError, match="declared by vllm_log"):
        registry.input_options()
    clash = replace(
        ADAPTERS[0], name="vllm_log_twin", options=(replace(YEAR, field="yr", flags=("--year",)),)
    )
    with registry.registered(clash), pytest.raises(ValueError, match="the flag --year"):
        registry.input_options()


def test_the_tables_a_format_fills_exist() -> None:
    for a in registry.adapters().values():
        assert set(a.tables) <= set(TABLES), a.name


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("odd.log", "when,who,what\n1,2,3\n", "cannot tell what this file holds (a text log"),
        ("odd.csv", "when,who,what\n1,2,3\n", "cannot tell what this CSV file holds"),
        ("odd.jsonl", '{"when": 1, "who": "x"}\n', "cannot tell what these JSON records hold"),
        ("odd.txt", "hello there world\n", "text whose lines start with 'hello there world'"),
    ],
)
def test_a_file_no_format_claims_gets_one_message_saying_what_it_saw(
    tmp_path: Path, name: str, content: str, says: str
) -> None:
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(InputError) as caught:
        ingest(tmp_path / "w.duckdb", f)
    message = str(caught.value)
    assert f"{f}:1: " in message
    assert says in message
    assert "closest formats: " in message
    if name != "odd.txt":
        assert "--map FILE naming which of its fields" in message
    else:
        assert "--map FILE whose pattern (named groups)" in message
        assert "no named fields were seen" in message
    if name == "odd.log":
        assert "CSV" not in message


@pytest.mark.parametrize(
    ("name", "says", "fields"),
    [
        # Fragments published beside real logs (tests/data/published/SOURCES.md): none is a
        # file relplan reads, each gets the one message with the --map hint.
        ("kong_tries_fragment_issue6820.txt", "text whose lines start with '\"tries\": ['", None),
        (
            "kubectl_events_custom_columns_inspektor_gadget_pr187.txt",
            "text whose lines start with 'TIME REASON MSG'",
            None,
        ),
        (
            "prober_probe_total_prometheus_console_kube_prometheus_notes.txt",
            "(a text log, first line: prober_probe_total{",
            "container, endpoint, instance, job, metrics_path, namespace, node, pod",
        ),
    ],
)
def test_published_fragments_get_the_catch_all_with_a_map_hint(
    tmp_path: Path, name: str, says: str, fields: str | None
) -> None:
    f = ROOT / "tests" / "data" / "published" / name
    with pytest.raises(InputError) as caught:
        ingest(tmp_path / "w.duckdb", f)
    message = str(caught.value)
    assert message.startswith(f"{f}:1: cannot tell what this file holds")
    assert says in message
    assert "closest formats: " in message
    if fields is None:
        assert "a --map FILE whose pattern (named groups)" in message
    else:
        assert f"a --map FILE naming which of its fields ({fields})" in message


def test_a_run_summary_is_recognised_and_reported_as_such(tmp_path: Path) -> None:
    src = ROOT / "tests/data/published/vllm_bench_serve_summary_save_result.json"
    rep = ingest(tmp_path / "w.duckdb", src)
    assert [(s.format, s.rows, s.rejected) for s in rep.sources] == [("vllm_bench_summary", 0, 0)]
    (note,) = rep.sources[0].notes
    assert "run summary" in note
    assert "completed 199, failed 1" in note
    assert "request throughput 0.9733 req/s" in note
    assert "--save-detailed" in note


def test_options_that_choose_two_formats_need_the_format(tmp_path: Path) -> None:
    """`--map` chooses `mapped` and an nginx `--log-format` chooses `nginx` (their adapters'
    `chosen`): given both, relplan asks which instead of picking one."""
    mapping = tmp_path / "gw.toml"
    mapping.write_text("")
    log = tmp_path / "access.log"
    log.write_text('10.0.0.1 [1764460800.000] "GET / HTTP/1.1" 200\n')
    opts = {"map_file": mapping, "log_format": '$remote_addr [$msec] "$request" $status'}
    with pytest.raises(UsageError, match=r"--format: .*more than one format \(mapped, nginx\)"):
        ingest(tmp_path / "w.duckdb", log, **opts)


def test_formats_one_server_writes_twice_are_declared_not_listed() -> None:
    """The whole-second twins (nginx's combined log beside its JSON log) come from
    Adapter.server, not from a list in the driver."""
    import inspect

    from relplan.ingest import driver

    servers: dict[str, list[str]] = {}
    for a in registry.adapters().values():
        if a.server:
            servers.setdefault(a.server, []).append(a.name)
    assert servers == {"nginx": ["nginx", "nginx_json"]}
    source = inspect.getsource(driver)
    assert '"nginx_json"' not in source
    assert '"nginx"' not in source


def test_a_json_log_sharing_one_key_with_envoy_is_not_taken_for_envoy(tmp_path: Path) -> None:
    """docs/formats.md's Traefik JSON lines (mapped's example) share only `Duration` with
    Envoy's names: they were read as Envoy and refused for a missing x-request-id. Now the
    catch-all says what they are, the formats `--kind proxy` would take first among the
    closest, the --map hint naming their keys; with the mapping they are 3 attempts."""
    f = ROOT / "tests" / "data" / "ingest" / "adapters" / "traefik_mapped.jsonl"
    with pytest.raises(InputError) as caught:
        ingest(tmp_path / "w.duckdb", f)
    message = str(caught.value)
    assert "x-request-id" not in message
    assert "cannot tell what these JSON records hold (keys: DownstreamStatus, Duration," in message
    assert "closest formats: envoy, jsonl, run_json, " in message
    assert "a --map FILE naming which of its fields (DownstreamStatus, Duration, " in message
    toml = ROOT / "tests" / "data" / "ingest" / "adapters" / "traefik.toml"
    rep = ingest(tmp_path / "m.duckdb", f, map_file=toml)
    assert [(s.format, s.rows, s.rejected) for s in rep.sources] == [("mapped", 3, 0)]
