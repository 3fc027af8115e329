"""The words live in relplan/text/: no analysis module words its finding (or the recovery's
`because`); each analysis whose model has a `finding` names the text function that words it.
The verdict's sentences too: relplan/analyses/assessment.py names each by a code and
relplan/text/assessment.py words it.

One room for the words (issue 29): numbers are formatted only by the one number
formatter (`relplan/values.py`: `num`, `pct`, `short`, `sig`, `fixed`, `percent`, `signed`).

A number format is, in the syntax tree of a module: an f-string value with a format spec
(`f"{x:.3f}"`, `f"{name:<10}"`), `format(x, spec)`, or `"%..." % x`. A module outside the text
package and the formatter may have one only when it is listed below: `MACHINE` (a format that a
program reads, not a person: a vLLM log line, a trace record, PromQL, a settings file, a URL, an
id or a file name; one line saying why). No person-facing format is left outside them. Each
count is exact, so the list stays true: a module that loses a format must leave it, one that
gains one fails.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from relplan.analyses import registry

ROOT = Path(__file__).resolve().parent.parent
ANALYSES = ROOT / "relplan" / "analyses"
WORDED = {"finding", "because"}
# analyze() stores what relplan.text words.
ALLOWED = {"__init__.py"}


def _names_text(value: ast.expr) -> bool:
    """A registry row's import string naming the text function (`"relplan.text....:f"`)."""
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and value.value.startswith("relplan.text.")
    )


def _wordings(tree: ast.AST) -> list[str]:
    """Where a module sets a worded field: `finding=...` in a call, `x.finding = ...`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out += [
                f"line {kw.lineno}: {kw.arg}="
                for kw in node.keywords
                if kw.arg in WORDED and not _names_text(kw.value)
            ]
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [
                f"line {t.lineno}: .{t.attr} ="
                for t in targets
                if isinstance(t, ast.Attribute) and t.attr in WORDED
            ]
    return out


def test_no_analysis_module_words_a_finding() -> None:
    found = {
        p.name: hits
        for p in sorted(ANALYSES.glob("*.py"))
        if p.name not in ALLOWED and (hits := _wordings(ast.parse(p.read_text())))
    }
    assert found == {}


def test_the_check_sees_a_finding_worded_in_place() -> None:
    code = "def run():\n    m = M(windows=w, finding=f'{x:.0%} wasted')\n    m.because = 'y'\n"
    assert sorted(_wordings(ast.parse(code))) == ["line 2: finding=", "line 3: .because ="]


def test_every_model_with_a_finding_names_the_text_that_words_it() -> None:
    for a in registry.analyses():
        if "finding" in a.model.model_fields:
            assert a.finding is not None, a.name
            assert a.finding.startswith("relplan.text."), a.name
            assert callable(registry.resolve(a.finding)), a.name


# --- number formats (issue 29) -------------------------------------------------------------

PACKAGE = ROOT / "relplan"
TEXT = PACKAGE / "text"
FORMATTER = PACKAGE / "values.py"

# file (relative to relplan/) -> (formats, why they are not for a person)
MACHINE: dict[str, tuple[int, str]] = {
    "terminal.py": (2, "the escapes (\\x1b, \\u2028) that make control characters inert"),
    "alerts/rules.py": (1, "Go's printf %.2f as Prometheus's templates render it"),
    "alerts/slo.py": (1, "burn rates rounded to 6 digits as the rule file writes them"),
    "alerts/pushdown.py": (1, "epoch seconds in Prometheus's query parameters"),
    "drill/capacity.py": (2, "the call ids the ramp sends"),
    "drill/plan.py": (4, "the call ids the drill sends; --phases syntax as run.json records it"),
    "drill/prompts.py": (5, "the --prompt-tokens/--output-tokens syntax run.json records"),
    "drill/sweep.py": (2, "the run folders' and runs' names"),
    "ingest/gateways/nginx_json.py": (1, "a JSON value stored as the log's text field"),
    "ingest/metrics/promlive.py": (5, "Prometheus's query_range URL and parameters, escapes"),
    "lab/capture.py": (2, "Prometheus's query_range parameters"),
    "lab/settings.py": (1, "an environment variable the plugin reads"),
    "sim/scenario.py": (1, "a size rounded as `--set` has always written it (6 digits)"),
    "sim/metrics.py": (1, "sample times in the Prometheus exposition the simulator writes"),
    "sim/simulator.py": (2, "the call ids the simulator writes"),
    "sim/sweep.py": (1, "the sweep's run folder names"),
    "vllm_plugin/writer.py": (7, "inside vLLM (imports nothing of relplan): file names, log"),
    "whatif/settings.py": (1, "a timeout in the Python code of the settings handed over"),
}


@functools.cache
def _nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of a module's syntax tree (`ast.walk` order), parsed and walked once per
    source text: three checks below scan every module of the package."""
    return tuple(ast.walk(ast.parse(source)))


def number_formats(source: str) -> list[int]:
    """The line of each number format in a module's source (see the module docstring)."""
    lines: list[int] = []
    for node in _nodes(source):
        spec = isinstance(node, ast.FormattedValue) and node.format_spec is not None
        call = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "format"
            and len(node.args) == 2
        )
        percent = (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
            and "%" in node.left.value
        )
        if spec or call or percent:
            lines.append(node.lineno)
    return sorted(lines)


def _found() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == FORMATTER or TEXT in path.parents:
            continue
        found = number_formats(path.read_text(encoding="utf-8"))
        if found:
            out[path.relative_to(PACKAGE).as_posix()] = found
    return out


def test_number_formats_live_in_the_text_package_or_are_listed() -> None:
    wrong = []
    found = _found()  # every module parsed and walked once
    for name, lines in found.items():
        expected = MACHINE.get(name, (0, ""))[0]
        if len(lines) != expected:
            wrong.append(
                f"relplan/{name}: {len(lines)} number formats (lines {lines}), listed {expected}"
            )
    for name in sorted(set(MACHINE) - set(found)):
        wrong.append(f"relplan/{name}: no number format left, listed; take it off the lists")
    assert not wrong, (
        "format numbers with relplan/values.py and word them in relplan/text/"
        " (or list a machine format in MACHINE with why):\n" + "\n".join(wrong)
    )


def test_the_text_package_formats_numbers_only_through_the_formatter() -> None:
    """Even the words' own modules: one formatter, read literally (a table's padding is
    relplan/tables.py's job, not a format spec's)."""
    found = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in sorted(TEXT.rglob("*.py"))
        if (lines := number_formats(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_each_listed_module_exists_and_each_machine_format_says_why() -> None:
    for name in MACHINE:
        assert (PACKAGE / name).is_file(), name
    for name, (count, why) in MACHINE.items():
        assert count > 0, name
        assert len(why.split()) >= 3, name


def test_the_scan_finds_each_kind_of_number_format() -> None:
    source = (
        'a = f"{x:.3f} and {y}"\n'
        'b = format(x, ",")\n'
        'c = "%d calls" % n\n'
        'd = f"{x!r} {y}"\n'
        'e = "100 %"\n'
        "f = str(x)\n"
    )
    assert number_formats(source) == [1, 2, 3]


# --- sentences (issue 29) ------------------------------------------------------------------
#
# A module builds a sentence when it has an f-string with a value in it and at least four words
# of its own text, outside a `raise` and an `...Error(...)` call (an error may keep its message
# where it is raised). The reason an ingest refuses one line or record of its input is such an
# error message too (shown as FILE:LINE: reason, raised as the InputError under --on-error fail,
# kept in rejects under skip), and it stays beside the check that finds it: it is built as a
# `LineError(...)` (relplan/ingest/files.py, a str), which this same rule leaves alone; the
# same words handed to `sink.reject(...)` or returned bare count as a sentence. No module
# outside relplan/text builds one, but for the f-strings listed below (issue 29's goal).
#
# f-strings the scan above counts that are not sentences shown to a person, in modules that
# build no other (file -> (count, why)), and one that is: the vLLM plugin's cost line, worded
# where it is logged because the plugin runs inside vLLM and imports nothing of relplan. Exact, like MACHINE: a module whose count changes
# fails, so a sentence added beside them is seen. A PromQL expression or a recording rule's
# name is a query Prometheus parses (its `sum by`, `max_over_time` are operators, not words);
# a config file, a script or markup is read by the program it is written for.
NOT_SENTENCES: dict[str, tuple[int, str]] = {
    "values.py": (
        3,
        "the reason a time is refused, returned to the raise or rejected line that refuses it",
    ),
    "alerts/rules.py": (3, "PromQL: the health rules' expressions"),
    "alerts/slo.py": (2, "PromQL: a recording rule's name and the burn alerts' expression"),
    "alerts/dashboard.py": (3, "PromQL: the dashboard panels' queries"),
    "lab/configs.py": (2, "the nginx.conf and prometheus.yml the lab writes for those servers"),
    "lab/environment.py": (1, "the Python script run in the lab's venv to find the plugin"),
    "report/html.py": (1, "HTML markup: the span that keeps a value on one line"),
    "report/bundle.py": (1, "the Vega bundle's file name in the cache folder"),
    "analyses/heavy_requests.py": (2, "a model field's description in its JSON schema"),
    "analyses/littles_law.py": (1, "a model field's description in its JSON schema"),
    "ingest/contents.py": (1, "a model field's description in its JSON schema"),
    "vllm_plugin/writer.py": (
        1,
        "its cost line, logged inside vLLM's process by the plugin, which imports nothing of"
        " relplan (not even relplan/text) so that it loads with vLLM's dependencies alone",
    ),
}


def sentence_lines(source: str) -> list[int]:
    """The line of each sentence a module builds (see above)."""
    nodes = _nodes(source)
    errors: set[int] = set()
    for node in nodes:
        name = ""
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
        if isinstance(node, ast.Raise) or name.endswith("Error"):
            errors |= {id(n) for n in ast.walk(node)}
    lines = []
    for node in nodes:
        if not isinstance(node, ast.JoinedStr) or id(node) in errors:
            continue
        text = " ".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
        valued = any(isinstance(v, ast.FormattedValue) for v in node.values)
        if valued and len(re.findall(r"[A-Za-z]{2,}", text)) >= 4:
            lines.append(node.lineno)
    return sorted(lines)


def test_no_new_module_outside_the_text_package_builds_sentences() -> None:
    found = {
        path.relative_to(PACKAGE).as_posix(): len(sentence_lines(path.read_text(encoding="utf-8")))
        for path in PACKAGE.rglob("*.py")
        if TEXT not in path.parents
    }
    building = {name for name, n in found.items() if n > NOT_SENTENCES.get(name, (0, ""))[0]}
    assert not building, "word it in relplan/text/ from a typed result: " + ", ".join(
        sorted(building)
    )


def test_each_listed_non_sentence_is_counted_exactly_and_says_why() -> None:
    for name, (count, why) in NOT_SENTENCES.items():
        lines = sentence_lines((PACKAGE / name).read_text(encoding="utf-8"))
        assert len(lines) == count, f"relplan/{name}: {len(lines)} (lines {lines}), listed {count}"
        assert len(why.split()) >= 3, name


def test_the_sentence_check_sees_a_sentence_and_leaves_errors_alone() -> None:
    source = (
        'a = f"the pulse leaves {x} s of work queued"\n'
        'b = f"{x} s"\n'
        'raise InputError(f"no answer within {t} s from the server")\n'
        'c = UsageError("--x", f"must be longer than zero, got {v}")\n'
        'd = "no value in this long sentence"\n'
        'return {}, LineError(f"$status {s!r} is not an HTTP status")\n'
        'sink.reject(n, line, f"{field} is missing or not a whole number")\n'
        'return {}, f"{field} (start) is not a {m.format} time"\n'
        'notes.append(f"{n} lines without the call key {key}")\n'
    )
    assert sentence_lines(source) == [1, 7, 8, 9]


# --- tables and columns (issue 29) ----------------------------------------------------------
#
# The text package owns every terminal table: no module outside relplan/text and
# relplan/tables.py (the one table layout) imports relplan.tables or pads text into columns
# itself (`.ljust(`, `.rjust(`, `.center(`; a padding format spec, `f"{name:<10}"`, is a number
# format above and counted there). A padding a program reads, not a person, would be listed in
# PADDING_MACHINE (file -> (count, why)), exact like MACHINE; none is left.
TABLES = PACKAGE / "tables.py"
PADDING = {"ljust", "rjust", "center"}
PADDING_MACHINE: dict[str, tuple[int, str]] = {}


def column_lines(source: str) -> list[int]:
    """The line of each import of relplan.tables and each `.ljust(`/`.rjust(`/`.center(` call."""
    lines = []
    for node in _nodes(source):
        imports = (
            isinstance(node, ast.Import) and any(a.name == "relplan.tables" for a in node.names)
        ) or (
            isinstance(node, ast.ImportFrom)
            and (
                node.module == "relplan.tables"
                or (node.module == "relplan" and any(a.name == "tables" for a in node.names))
            )
        )
        pads = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in PADDING
        )
        if imports or pads:
            lines.append(node.lineno)
    return sorted(lines)


def test_no_module_outside_the_text_package_lays_out_a_table() -> None:
    found = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != TABLES
        and TEXT not in path.parents
        and (lines := column_lines(path.read_text(encoding="utf-8")))
    }
    wrong = [
        f"relplan/{name}: lines {lines}, listed {PADDING_MACHINE.get(name, (0, ''))[0]}"
        for name, lines in found.items()
        if len(lines) != PADDING_MACHINE.get(name, (0, ""))[0]
    ]
    wrong += [f"relplan/{n}: listed, none left" for n in sorted(set(PADDING_MACHINE) - set(found))]
    assert not wrong, (
        "lay tables out in relplan/text/ (relplan/tables.py's format_table) from a typed"
        " result (or list a machine padding in PADDING_MACHINE with why):\n" + "\n".join(wrong)
    )
    for name, (count, why) in PADDING_MACHINE.items():
        assert count > 0, name
        assert len(why.split()) >= 3, name


def test_the_table_check_sees_each_kind_of_column_layout() -> None:
    source = (
        "from relplan.tables import format_table\n"
        "import relplan.tables\n"
        "from relplan import tables, values\n"
        "a = name.ljust(10)\n"
        "b = f'{n}'.rjust(w) + title.center(40)\n"
        "c = s.strip().split()\n"
        "from relplan.values import num\n"
    )
    assert column_lines(source) == [1, 2, 3, 4, 5, 5]
