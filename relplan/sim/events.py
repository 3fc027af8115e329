"""The kinds of entries in the simulator's event heap (simulator.py runs them).

Plain int constants rather than an IntEnum: the event loop compares a kind once per event,
and CPython's fast comparison path takes exact ints only (an IntEnum made the loop slower).
"""

from __future__ import annotations

from typing import Final


class EventKind:
    STEP_DONE: Final = 0  # an engine step is done
    ARRIVAL: Final = 1  # a call's first attempt is sent at its planned arrival
    DEADLINE: Final = 2  # an attempt's client deadline passes
    RETRY: Final = 3  # a retry is sent after its backoff
    CANCEL: Final = 4  # a deferred cancellation fires
    ABORT: Final = 5  # an abort the proxy sent reaches the engine
    SCRAPE: Final = 6  # the metrics scraper samples the engine
