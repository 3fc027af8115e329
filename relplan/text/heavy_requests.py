"""The words of the heavy requests (relplan/analyses/heavy_requests.py): why a cut attempt
counts as a timeout between tokens.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import fixed


def silent_at_cut(silence: float) -> str:
    return f"silent {fixed(silence, 1)} s at the cut, longer than any earlier gap"


SENTENCES: dict[str, Callable[..., str]] = {f.__name__: f for f in (silent_at_cut,)}
