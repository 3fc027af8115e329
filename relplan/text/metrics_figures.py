"""The words of the verdict's figures from vLLM's metrics alone
(relplan/analyses/metrics_figures.py): their labels and notes.

The analysis names each sentence by a code (`metrics_figures.Said`) with its numbers; this
table words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import fixed, num, short, sig


def finished_with(reason: str) -> str:
    return f"requests finished with reason {reason}"


def mean_prompt_note(mean_prompt: float) -> str:
    return (
        f"mean prompt length {num(mean_prompt)} tokens, from the bins where nothing waited;"
        " a preempted request is queried again"
    )


def one_scrape(name: str) -> str:
    return f"{name} has 1 scrape in the window: a rise needs two"


def no_rise(metric: str) -> str:
    return (
        f"{metric} is present but did not rise in the window (one scrape, or no request"
        " finished): a rise needs two scrapes with requests between them"
    )


def littles_note(waiting: float, arrivals: float, queue_time: float, caveat: str) -> str:
    return f"L {fixed(waiting, 1)}, λ {sig(arrivals, 3)}/s, Wq {sig(queue_time, 3)} s; {caveat}"


def deadline_bucket(below: float, above: float, deadline: float, caveat: str) -> str:
    return (
        f"bucket bounds {short(below)} s and {short(above)} s around D = {short(deadline)} s;"
        f" {caveat}"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (finished_with, mean_prompt_note, one_scrape, no_rise, littles_note, deadline_bucket)
}
