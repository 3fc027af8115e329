"""The words of the run's bounds (relplan/analyses/bounds.py): the notes that say a bin, a
rolling step or a window was changed to fit the data.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import num, short


def bins_widened(given: float, bins: int, span: float, most: int, wide: float) -> str:
    return (
        f"--bin {short(given)} s would make {num(bins)} bins over the"
        f" {num(span)} s window (at most {num(most)}); bins widened to {short(wide)} s"
    )


def step_widened(evaluations: int, step: float, span: float, most: int, wide: float) -> str:
    return (
        f"the rolling series would need {num(evaluations)} evaluations every"
        f" {short(step)} s over {num(span)} s (at most {num(most)}); evaluated"
        f" every {short(wide)} s instead"
    )


def window_clipped(
    start: float, end: float, low: float, high: float, clip_start: float, clip_end: float
) -> str:
    """Seconds from t0: the window asked for, the data's span, the window kept."""
    return (
        f"the window {short(start)}..{short(end)} s reaches far beyond the data"
        f" ({short(low)}..{short(high)} s); clipped to {short(clip_start)}..{short(clip_end)} s"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        bins_widened,
        step_widened,
        window_clipped,
    )
}
