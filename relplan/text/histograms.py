"""The words of vLLM's latency histograms (relplan/analyses/histograms.py): why a
percentile has no estimate, and how its p90 changed around the overload.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import fixed, sig


def one_scrape(metric: str) -> str:
    return f"one scrape of {metric}: a rise needs two (bucket deltas between scrapes)"


def p90_change(before: float, during: float | None, after: float | None, phase: str) -> str:
    """The p90 before, during and after the overload phase, with the ratios to before."""
    parts = [f"p90 {sig(before, 3)} s before"]
    if during is not None:
        parts.append(
            f"{sig(during, 3)} s during the {phase} ({fixed(during / before, 1)}×)"
            if before
            else f"{sig(during, 3)} s during"
        )
    if after is not None:
        parts.append(
            f"{sig(after, 3)} s after ({fixed(after / before, 1)}×)"
            if before
            else f"{sig(after, 3)} s after"
        )
    return ", ".join(parts) + " (estimates within bucket bounds)"


SENTENCES: dict[str, Callable[..., str]] = {f.__name__: f for f in (one_scrape, p90_change)}
