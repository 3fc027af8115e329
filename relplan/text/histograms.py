"""The words of vLLM's latency histograms (relplan/analyses/histograms.py): why a
percentile has no estimate.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable


def one_scrape(metric: str) -> str:
    return f"one scrape of {metric}: a rise needs two (bucket deltas between scrapes)"


SENTENCES: dict[str, Callable[..., str]] = {f.__name__: f for f in (one_scrape,)}
