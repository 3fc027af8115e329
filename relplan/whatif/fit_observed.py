"""The client's and the proxy's behaviour as the incident shows it (relplan whatif fit).

- client: deadline = the most common duration of attempts the client cut (when at least half
  have it), else D from run.json; retries = the highest attempt number; backoff = the smallest
  and largest gap between an attempt's end and the call's next attempt. `ClientFlags` given
  on the command line override each.
- proxy: cancellation `immediate` when at least half the executions whose client left were
  aborted within 0.5 s (median), `deferred(S)` when aborted S s later, else `off`; coalescing
  when retries were attached to a running execution. Limits that refused attempts are not
  fitted: the provenance says how many were refused.
Each function appends one `Provenance` per fitted part and returns the scenario table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import duckdb

from relplan import sql
from relplan.analyses import RunContext
from relplan.sim.scenario import whole
from relplan.values import fixed, short
from relplan.whatif.model import Provenance

# vLLM's log stamps whole seconds: an abort logged up to this long before the proxy's end of the
# attempt still came after it.
LOG_RESOLUTION_S = 1.0


@dataclass(frozen=True)
class ClientFlags:
    """Client settings given on the command line: each overrides what the data shows."""

    deadline_s: float | None = None
    max_retries: int | None = None
    backoff_min_s: float | None = None
    backoff_max_s: float | None = None


def fit_client(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, flags: ClientFlags, prov: list[Provenance]
) -> dict[str, Any]:
    client: dict[str, Any] = {}
    cut = sql.one(con, "whatif/cut_attempts") if ctx.has_proxy else None
    if flags.deadline_s is not None:
        client["deadline_s"] = flags.deadline_s
        prov.append(
            Provenance(
                part="client", value=f"deadline {short(flags.deadline_s)} s", source="--deadline"
            )
        )
    elif (
        cut is not None
        and cut["gone"]
        and cut["mode_s"] is not None
        and 2 * cut["at_mode"] >= cut["gone"]
    ):
        client["deadline_s"] = float(cut["mode_s"])
        prov.append(
            Provenance(
                part="client",
                value=f"deadline {short(cut['mode_s'])} s",
                source=f"{cut['at_mode']} of {cut['gone']} attempts the client cut lasted it",
            )
        )
    elif ctx.deadline_s is not None:
        client["deadline_s"] = ctx.deadline_s
        prov.append(
            Provenance(
                part="client",
                value=f"deadline {short(ctx.deadline_s)} s",
                source=f"D from {ctx.deadline_source}",
            )
        )
    else:
        client["deadline_s"] = math.inf
        prov.append(
            Provenance(
                part="client", value="no deadline", source="no attempt was cut by the client"
            )
        )

    d = client["deadline_s"]
    gaps = (
        sql.one(con, "whatif/retry_gaps", {"deadline_s": d if math.isfinite(d) else None})
        if ctx.has_proxy
        else None
    )
    if flags.max_retries is not None:
        client["max_retries"] = flags.max_retries
        prov.append(
            Provenance(part="client", value=f"{flags.max_retries} retries", source="--max-retries")
        )
    elif gaps is not None and gaps["max_attempt"] is not None:
        client["max_retries"] = int(gaps["max_attempt"])
        prov.append(
            Provenance(
                part="client",
                value=f"{int(gaps['max_attempt'])} retries",
                source=f"highest attempt number in the proxy log ({gaps['retries']} retries of {gaps['calls']} calls)",
            )
        )
    else:
        client["max_retries"] = 0
        prov.append(Provenance(part="client", value="0 retries", source="no proxy log: assumed"))

    lo, hi = flags.backoff_min_s, flags.backoff_max_s
    source = "--backoff"
    if (lo is None or hi is None) and gaps is not None and gaps["gaps"]:
        lo = float(gaps["gap_min_s"]) if lo is None else lo
        hi = float(gaps["gap_max_s"]) if hi is None else hi
        source = (
            f"smallest and largest of {gaps['gaps']} gaps between an attempt's end (at the "
            "latest its start + the deadline: the client left then) and the next"
        )
    if lo is not None and hi is not None:
        lo, hi = round(max(0.0, lo), 3), round(max(lo, hi), 3)
        client["backoff_min_s"], client["backoff_max_s"] = lo, hi
        prov.append(
            Provenance(
                part="client", value=f"backoff uniform {short(lo)}-{short(hi)} s", source=source
            )
        )
    if ctx.delivery_window_s is not None:
        client["delivery_window_s"] = ctx.delivery_window_s
        prov.append(
            Provenance(
                part="client",
                value=f"delivery window {short(ctx.delivery_window_s)} s",
                source=f"W from {ctx.delivery_window_source}",
            )
        )
    return client


def fit_proxy(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, prov: list[Provenance]
) -> dict[str, Any]:
    if not (ctx.has_proxy and ctx.has_events):
        prov.append(
            Provenance(
                part="proxy",
                value="no cancellation, no coalescing",
                source="needs a proxy log and an engine trace: assumed",
            )
        )
        return {"cancellation": "off", "coalesce": False}
    r = sql.one(con, "whatif/proxy_controls_observed", {"resolution_s": LOG_RESOLUTION_S})
    assert r is not None
    gone = int(r["gone_with_execution"])
    aborted = int(r["aborted_after_gone"])
    proxy: dict[str, Any] = {}
    if gone == 0:
        proxy["cancellation"] = "off"
        prov.append(
            Provenance(
                part="proxy",
                value="cancellation off",
                source="assumed: no execution lost its client in the proxy log, so none "
                "could be seen aborted (with cancellation off a proxy logs the engine's answer)",
            )
        )
    elif 2 * aborted >= gone:
        delay = float(r["abort_delay_median_s"] or 0.0)
        proxy["cancellation"] = (
            "immediate" if delay < 0.5 else f"deferred({whole(round(delay, 1))})"
        )
        prov.append(
            Provenance(
                part="proxy",
                value=f"cancellation {proxy['cancellation']}",
                source=f"{aborted} of {gone} executions whose client left were aborted, median {fixed(delay, 2)} s after",
            )
        )
    else:
        proxy["cancellation"] = "off"
        prov.append(
            Provenance(
                part="proxy",
                value="cancellation off",
                source=f"only {aborted} of {gone} executions whose client left were aborted",
            )
        )
    attached = int(r["attached_retries"])
    proxy["coalesce"] = attached > 0
    prov.append(
        Provenance(
            part="proxy",
            value="retries coalesced" if attached else "retries not coalesced",
            source=f"{attached} of {r['retries']} retries attached to a running execution",
        )
    )
    if r["shed"]:
        prov.append(
            Provenance(
                part="proxy",
                value="no retry budget or proxy cap assumed",
                source=f"{r['shed']} attempts were refused (shed or error): which limit refused them is not in the data",
            )
        )
    return proxy
