"""Time windows and how the windowed queries take them: named half-open windows (the whole
run closed), the four list parameters every windowed query reads, and the cut of windows into
disjoint segments so that a big table is read once, without a range join."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Window:
    name: str
    a: float
    b: float
    closed: bool  # include t == b (only the whole run is closed)


def window_params(windows: list[Window]) -> dict[str, Any]:
    """The four list parameters every windowed query takes (`w_names` ... `w_closed`)."""
    return {
        "w_names": [w.name for w in windows] or [""],
        "w_starts": [w.a for w in windows] or [0.0],
        "w_ends": [w.b for w in windows] or [0.0],
        "w_closed": [w.closed for w in windows] or [False],
    }


SEGMENT_CASE_CUTS = 12  # cut points the SQL's CASE covers; later ones go through a list filter


def segments(windows: list[Window]) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Cut the windows into disjoint time segments so a big table is read with one row per
    record and no range join: cut points c_1 < ... < c_m are every window start and end;
    segment k < m is [c_k, c_{k+1}), segment m is the instant c_m (records exactly at the
    end of a closed window). A record's segment is the number of cut points <= its time.
    Returns the query parameters (`cuts`, padded with +inf to the CASE's width, and `t_last`)
    and, per window name, the segments it is made of. Closed windows must end at c_m (only
    the whole run is closed)."""
    cuts = sorted({x for w in windows for x in (w.a, w.b)})
    m = len(cuts)
    members: dict[str, list[int]] = {}
    for w in windows:
        if w.closed and w.b != cuts[-1]:
            raise ValueError("only the outermost window may be closed")
        ks = [k for k in range(1, m) if cuts[k - 1] >= w.a and cuts[k] <= w.b]
        members[w.name] = ks + ([m] if w.closed else [])
    padded = cuts + [math.inf] * max(0, SEGMENT_CASE_CUTS - m)
    return {"cuts": padded, "t_last": cuts[-1]}, members
