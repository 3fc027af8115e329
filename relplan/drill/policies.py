"""Client retry policies and the client retry budget (docs/drill.md, Retry policies).

`--retry` names a policy:

- `none`: one attempt per call;
- `fixed:N:WAIT`: up to N retries, each after WAIT seconds;
- `uniform:N:LO:HI`: up to N retries, each after a wait drawn uniformly in [LO, HI];
- `exp:N:BASE:CAP`: up to N retries; retry k (0-based) waits uniform(0, min(CAP, BASE·2^k))
  ("full jitter");
- `openai` and `anthropic`: the Python SDKs' defaults (openai-python and
  anthropic-sdk-python `_constants.py` and `_base_client.py`): 2 retries, retry k waits
  min(0.5·2^k, 8)·(1 − 0.25·U), U uniform in [0, 1); a `Retry-After` (or `retry-after-ms`)
  header of more than 0 and at most 60 s is waited instead.

Which failures are retried (the SDKs' `_should_retry`, used by every policy): the deadline D
passed, the connection failed, or the status is 408, 409, 429 or 5xx. Any other status is
final. `before_first_token` (streaming) retries only attempts that received no token.

The budget (`--retry-budget RATIO`, in the manner of Finagle's RetryBudget): a retry at time t
is sent only when the retries sent in (t − TTL, t] are fewer than RATIO × the first attempts
sent in (t − TTL, t] + MIN_PER_S × TTL; otherwise the call gives up and the refused retry is
recorded as a `shed` attempt. Waits are drawn from the policy's own generator, seeded from the
drill's seed, so the waits of a seed are reproducible.
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import dataclass, field

from relplan.errors import UsageError

SDK_INITIAL_RETRY_DELAY = 0.5  # openai-python, anthropic-sdk-python: src/*/_constants.py
SDK_MAX_RETRY_DELAY = 8.0
SDK_MAX_RETRIES = 2
RETRY_STATUSES = frozenset({408, 409, 429})

_NUM = r"(\d+(?:\.\d+)?)"
_SPECS = {
    "fixed": re.compile(rf"fixed:(\d+):{_NUM}"),
    "uniform": re.compile(rf"uniform:(\d+):{_NUM}:{_NUM}"),
    "exp": re.compile(rf"exp:(\d+):{_NUM}:{_NUM}"),
}


@dataclass(frozen=True)
class Policy:
    spec: str
    kind: str  # none | fixed | uniform | exp | sdk
    retries: int
    a: float = 0.0
    b: float = 0.0
    before_first_token: bool = False

    def wait_s(self, k: int, rng: random.Random, retry_after: float | None = None) -> float:
        """The wait before retry `k` (0 for the first retry)."""
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        if self.kind == "exp":
            return rng.uniform(0.0, min(self.b, self.a * 2.0**k))
        if self.kind == "sdk":
            if retry_after is not None and 0 < retry_after <= 60:
                return retry_after
            sleep = min(SDK_INITIAL_RETRY_DELAY * 2.0**k, SDK_MAX_RETRY_DELAY)
            return max(0.0, sleep * (1 - 0.25 * rng.random()))
        return 0.0

    def retryable(self, status: int | None, *, got_token: bool) -> bool:
        """Whether a failed attempt may be retried: status None means the deadline passed or
        the connection failed."""
        if self.before_first_token and got_token:
            return False
        return status is None or status in RETRY_STATUSES or status >= 500


def parse_policy(text: str, *, before_first_token: bool = False) -> Policy:
    s = text.strip().lower()
    if s == "none":
        return Policy(s, "none", 0, before_first_token=before_first_token)
    if s in ("openai", "anthropic"):
        return Policy(s, "sdk", SDK_MAX_RETRIES, before_first_token=before_first_token)
    for kind, rx in _SPECS.items():
        m = rx.fullmatch(s)
        if m is None:
            continue
        n = int(m[1])
        a = float(m[2])
        b = float(m[3]) if m.lastindex and m.lastindex >= 3 else 0.0
        if kind == "uniform" and b < a:
            raise UsageError("--retry", f"{text!r}: uniform:N:LO:HI needs LO <= HI")
        if kind == "exp" and (a <= 0 or b < a):
            raise UsageError("--retry", f"{text!r}: exp:N:BASE:CAP needs 0 < BASE <= CAP")
        return Policy(s, kind, n, a, b, before_first_token)
    raise UsageError(
        "--retry",
        f"{text!r}: expected none, openai, anthropic, fixed:N:WAIT, uniform:N:LO:HI or"
        " exp:N:BASE:CAP (seconds)",
    )


@dataclass
class RetryBudget:
    """Retries in the last `ttl` s < `ratio` × first attempts in the last `ttl` s +
    `min_per_s` × `ttl` (Finagle's RetryBudget: percentCanRetry, minRetriesPerSec, ttl)."""

    ratio: float
    ttl: float = 10.0
    min_per_s: float = 0.0
    _firsts: deque[float] = field(default_factory=deque)
    _retries: deque[float] = field(default_factory=deque)

    def _expire(self, t: float) -> None:
        for q in (self._firsts, self._retries):
            while q and q[0] <= t - self.ttl:
                q.popleft()

    def first_attempt(self, t: float) -> None:
        self._firsts.append(t)

    def try_retry(self, t: float) -> bool:
        """Whether a retry may be sent at `t`; an allowed retry is counted."""
        self._expire(t)
        if len(self._retries) < self.ratio * len(self._firsts) + self.min_per_s * self.ttl:
            self._retries.append(t)
            return True
        return False
