"""The text `relplan whatif` prints: the fit, the fit check, the control table, the settings."""

from __future__ import annotations

from relplan.tables import format_table
from relplan.values import fixed, num, pct, short
from relplan.whatif.model import Figures, Provenance, Spread, WhatIf


def render_fit(fit: list[Provenance]) -> str:
    rows = [[p.part, p.value, p.source] for p in fit]
    return format_table(["part", "fitted", "from"], rows, left=(0, 1, 2))


def _fig_rows(label: str, f: Figures) -> list[list[str]]:
    rows = []
    for w in f.windows:
        rows.append([label, w.window, num(w.calls), pct(w.delivered_share), pct(w.on_time_share)])
    return rows


def render_check(w: WhatIf) -> str:
    c = w.check
    rows = []
    for inc in c.incident.windows:
        rep = c.replay.window(inc.window)
        rows.append(
            [
                inc.window,
                num(inc.calls),
                pct(inc.delivered_share),
                pct(None if rep is None else rep.delivered_share),
                pct(inc.on_time_share),
                pct(None if rep is None else rep.on_time_share),
            ]
        )
    table = format_table(
        ["window", "calls", "delivered", "replay", "on time", "replay"], rows, left=(0,)
    )
    lines = [
        table,
        "",
        f"executions per call: {num(c.incident.executions_per_call, 2)} (replay "
        f"{num(c.replay.executions_per_call, 2)}); after the overload accepted "
        f"{num(c.incident.accepted_x_capacity, 2)} x C^ (replay {num(c.replay.accepted_x_capacity, 2)}), "
        f"completed {num(c.incident.completed_x_capacity, 2)} x C^ (replay "
        f"{num(c.replay.completed_x_capacity, 2)})",
        f"recovered after {_secs(c.incident.recovery_s)} (replay {_secs(c.replay.recovery_s)}),"
        f" drained after {_secs(c.incident.drained_s)} (replay {_secs(c.replay.drained_s)})"
        " (docs/analyses.md, Recovery, two ways)",
        f"verdict: {c.incident.verdict} (replay: {c.replay.verdict}); fit error "
        f"{pct(c.error)}" + ("" if c.error_window is None else f" ({c.error_window})"),
        ("trusted: " if c.trusted else "NOT trusted, controls not ranked: ") + c.reason,
    ]
    return "\n".join(lines)


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{fixed(v, 0)} s"


def _spread(s: Spread | None, share: bool = True) -> str:
    if s is None or s.median is None:
        return "-"
    f = pct if share else (lambda v: num(v))
    if s.low == s.high:
        return f(s.median)
    return f"{f(s.median)} ({f(s.low)}-{f(s.high)})"


def render_controls(w: WhatIf) -> str:
    order = {n: i for i, n in enumerate(w.ranked)}
    controls = sorted(w.controls, key=lambda c: order.get(c.name, len(order)))
    rows = []
    for c in controls:
        if not c.available:
            rows.append([c.name, c.label, "-", "-", "-", "-", "-", f"not replayed: {c.reason}"])
            continue
        rows.append(
            [
                c.name,
                c.label,
                _spread(c.delivered_share),
                _spread(c.on_time_share),
                _spread(c.recovery_s, share=False),
                _spread(c.drained_s, share=False),
                _spread(c.executions_per_call, share=False)
                if c.executions_per_call is None or c.executions_per_call.median is None
                else f"{fixed(c.executions_per_call.median, 2)}",
                c.verdict,
            ]
        )
    return format_table(
        [
            "control",
            "what",
            "delivered",
            "on time",
            "recovered after s",
            "drained after s",
            "exec/call",
            "verdict",
        ],
        rows,
        left=(0, 1, 7),
    )


def render_settings(w: WhatIf) -> str:
    if not w.settings:
        return "no settings: " + (
            "the fit is not trusted"
            if not w.check.trusted
            else "no control improved on the incident"
        )
    parts = []
    for s in w.settings:
        parts.append(f"## {s.title} (for {s.control})\n{s.text.rstrip()}")
    return "\n\n".join(parts)


def render_whatif(w: WhatIf) -> str:
    return "\n".join(
        [
            f"{w.name}: what would have helped (C^ = {num(w.capacity_calls_per_s, 2)} calls/s, "
            f"{w.seeds} seed(s) per control, {short(w.wall_s)} s)",
            "",
            "# The fit",
            render_fit(w.fit),
            "",
            "# Fit check: the incident and its as-observed replay",
            render_check(w),
            "",
            "# Controls (overload and later calls; median and range over seeds)",
            render_controls(w),
            "",
            "# Settings for the best controls",
            render_settings(w),
        ]
    )


# docs/whatif.md's Controls table, generated from the declarations (relplan/whatif/controls.py)
# by `python -m relplan.cli.reference --write`; tests/test_whatif_controls.py checks the file.
CONTROLS_TABLE_HEAD = "| control | what it replays | the real setting |"


def controls_markdown() -> str:
    """The Controls table: one row per declared control, then the `--scenario FILE` row."""
    from relplan.whatif.controls import CONTROLS

    rows = [CONTROLS_TABLE_HEAD, "| --- | --- | --- |"]
    for c in CONTROLS:
        real = "; ".join(r.text() for r in c.real)
        rows.append(f"| `{c.name}` | {c.replays} | {real} |")
    rows.append(
        "| a `--scenario FILE` | the file's `client`, `proxy` and `engine` tables applied over"
        " the fit | the settings its overrides name (relplan/whatif/settings.py) |"
    )
    return "\n".join(rows)


def with_controls_table(doc: str) -> str:
    """`doc` (docs/whatif.md) with its Controls table replaced by `controls_markdown()`."""
    lines = doc.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(CONTROLS_TABLE_HEAD[:18]))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:start]) + controls_markdown() + "\n" + "".join(lines[end:])
