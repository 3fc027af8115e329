"""The requests that hurt (docs/analyses.md, `heavy_requests`): the few requests that took the
most prefill, held the most KV cache or ran longest; the per-request limits that would have
capped them; and which client timeout cut each failed attempt.

Sources, one query each:
- queries/analyses/heavy_executions.sql: per engine execution (steps and events), the top k by
  prefill GPU seconds (its share of the steps that computed its prompt), by KV blocks x
  seconds held (blocks of `BLOCK_SIZE` tokens, vLLM's default `--block-size`), and by engine
  duration (arrived to its terminal event), each with the first attempt that created it;
- queries/analyses/heavy_longest_attempts.sql: the top k attempts by t_end - t_sent;
- queries/analyses/heavy_limits.sql: per model (a tier) and over all, the limit on
  `prompt_tokens` and on `max_tokens` that cuts the top k while keeping 99 % of the rest
  (the rest's p99, an observed value), and what it would cut;
- queries/analyses/heavy_cut_attempts.sql: for every attempt the client left (client_gone) or
  the proxy timed out (error 408/504), the token times the engine trace shows before the cut.

Which timeout cut an attempt (`classify`): `first_token` when no token reached it before the
cut; `between_tokens` when the silence at the cut (cut - last token) is at least
`MIN_SILENCE_S` and longer than every earlier gap of that stream; `total` when tokens were
still flowing at their pace; `unknown` when the data cannot tell (no engine trace, the attempt
names no execution the trace holds, or a first token but no step records to time the rest).
The observed timeout of each kind is the distribution of the cut value: elapsed time for
`first_token` and `total`, the silence for `between_tokens`.
"""

from __future__ import annotations

from statistics import median
from typing import Any, Literal

from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING
from relplan.analyses.inputs import Inputs
from relplan.analyses.wording import Words
from relplan.errors import NoDataError
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/heavy_requests.py (one function per code).
Said = Literal["silent_at_cut"]
_say: Words[Said] = Words("relplan.text.heavy_requests")

TOP_K = 5
BLOCK_SIZE = 16  # tokens per KV block: vLLM's default --block-size on GPUs
MIN_SILENCE_S = 1.0
NO_MODEL = "(no model logged)"  # the tier of attempts whose log names no model
LISTED_CUTS = 50  # cut attempts listed by name (all are counted)
CutKind = Literal["first_token", "between_tokens", "total", "unknown"]
CUT_KINDS: tuple[CutKind, ...] = ("first_token", "between_tokens", "total", "unknown")
Measure = Literal["prefill", "kv", "duration"]


class HeavyRequest(StrictModel):
    """One request among the top k of a measure (fields the data lacks are null)."""

    measure: Measure
    rank: int = Field(description="1 = the heaviest")
    call_id: str | None
    attempt: int | None
    execution_id: str | None
    replica: str | None
    model: str | None
    start_s: float | None = Field(description="sent (proxy) or first step (engine), from t0")
    prompt_tokens: int | None = Field(description="prompt size as sent or on `arrived`")
    max_tokens: int | None
    prefill_tokens: int | None = Field(description="prompt tokens computed, recomputation too")
    prefill_gpu_s: float | None = Field(description="its share of its prefill steps' time")
    kv_block_s: float | None = Field(description=f"KV blocks ({BLOCK_SIZE} tokens) x seconds")
    duration_s: float | None = Field(description="attempt t_end - t_sent, else engine span")
    outcome: str | None


class RequestLimit(StrictModel):
    """A per-request limit sized from one measure's distribution within one tier."""

    measure: Literal["prompt_tokens", "max_tokens"]
    tier: str | None = Field(description="the model; null: all models together")
    n: int = Field(description="attempts with a value")
    top_n: int
    top_min: int
    top_max: int
    limit: int | None = Field(description="the rest's p99; null when nothing is left over")
    cuts_top: int = Field(description="of the top requests, those above the limit")
    cuts_rest: int = Field(description="of the others, those above the limit")
    rest_kept_share: float | None


class CutAttempt(StrictModel):
    call_id: str
    attempt: int
    start_s: float
    cut_by: Literal["client", "proxy"]
    kind: CutKind
    why: str
    model: str | None
    replica: str | None
    elapsed_s: float
    ttft_s: float | None
    silence_s: float | None = Field(description="cut time - last token time")


class ObservedTimeout(StrictModel):
    kind: CutKind
    attempts: int
    measured: str = Field(description="what the cut value is: elapsed or silence")
    min_s: float | None
    median_s: float | None
    max_s: float | None


class HeavyRequests(StrictModel):
    top_k: int
    block_size_tokens: int
    by_prefill: list[HeavyRequest]
    by_kv: list[HeavyRequest]
    by_duration: list[HeavyRequest] = Field(description="attempts (proxy log), else executions")
    limits: list[RequestLimit]
    timeouts: list[ObservedTimeout] = Field(description="one per kind, in CUT_KINDS order")
    cut_attempts: list[CutAttempt] = Field(description=f"the first {LISTED_CUTS} by send time")
    cut_attempts_total: int
    null_reasons: dict[str, str] = Field(default_factory=dict)
    finding: str = Field(default="", description=FINDING)


def classify(row: dict[str, Any], has_engine: bool) -> tuple[CutKind, str]:
    """The timeout that cut one attempt of heavy_cut_attempts.sql, and why."""
    if not has_engine:
        return "unknown", "no engine trace: token times unknown"
    if not row["matched"]:
        return "unknown", "the attempt names no execution the engine trace holds"
    if int(row["n_token_times"]) == 0:
        return "first_token", "no token before the cut"
    if not row["has_steps"]:
        return "unknown", "a first token, but no step records to time the others"
    silence, longest = float(row["gap_at_cut_s"]), row["max_gap_s"]
    if silence >= MIN_SILENCE_S and (longest is None or silence > float(longest)):
        return (
            "between_tokens",
            _say("silent_at_cut", silence=silence),
        )
    return "total", "tokens were still flowing at the cut"


def _observed(cuts: list[tuple[CutKind, float, float | None]]) -> list[ObservedTimeout]:
    """Per kind, the cut values of its attempts; `cuts`: (kind, elapsed, silence) each."""
    out = []
    for kind in CUT_KINDS:
        vals = [
            (silence if kind == "between_tokens" else elapsed)
            for k, elapsed, silence in cuts
            if k == kind
        ]
        xs = sorted(v for v in vals if v is not None)
        out.append(
            ObservedTimeout(
                kind=kind,
                attempts=len(vals),
                measured="silence at the cut" if kind == "between_tokens" else "elapsed",
                min_s=xs[0] if xs else None,
                median_s=median(xs) if xs else None,
                max_s=xs[-1] if xs else None,
            )
        )
    return out


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _heavy(rows: list[dict[str, Any]], t0: float) -> dict[str, list[HeavyRequest]]:
    out: dict[str, list[HeavyRequest]] = {"prefill": [], "kv": [], "duration": []}
    for r in rows:
        m = r["measure"]
        out[m].append(
            HeavyRequest(
                measure=m,
                rank=len(out[m]) + 1,
                call_id=r["call_id"],
                attempt=_opt_int(r["attempt"]),
                execution_id=r["execution_id"],
                replica=r["rk"] or None,
                model=r["model"],
                start_s=r["t_first"] - t0,
                prompt_tokens=_opt_int(r["prompt_tokens"]),
                max_tokens=_opt_int(r["max_tokens"]),
                prefill_tokens=_opt_int(r["prefill_tokens"]),
                prefill_gpu_s=float(r["prefill_gpu_s"]),
                kv_block_s=float(r["kv_block_s"]),
                duration_s=r["duration_s"],
                outcome=r["outcome"],
            )
        )
    return out


def _longest_attempts(rows: list[dict[str, Any]], t0: float) -> list[HeavyRequest]:
    return [
        HeavyRequest(
            measure="duration",
            rank=i + 1,
            call_id=r["call_id"],
            attempt=int(r["attempt"]),
            execution_id=r["execution_id"],
            replica=r["replica"],
            model=r["model"],
            start_s=r["t_sent"] - t0,
            prompt_tokens=_opt_int(r["prompt_tokens"]),
            max_tokens=_opt_int(r["max_tokens"]),
            prefill_tokens=None,
            prefill_gpu_s=None,
            kv_block_s=None,
            duration_s=float(r["duration_s"]),
            outcome=r["outcome"],
        )
        for i, r in enumerate(rows)
    ]


def _limits(rows: list[dict[str, Any]]) -> list[RequestLimit]:
    """The limit rows; per-model rows only where the log names more than one tier (with one,
    the all-models row says the same). Attempts without a model form the tier NO_MODEL."""
    tiers: dict[str, int] = {}
    for r in rows:
        if not r["all_tiers"]:
            tiers[r["measure"]] = tiers.get(r["measure"], 0) + 1
    out = []
    for r in rows:
        if not r["all_tiers"] and tiers[r["measure"]] < 2:
            continue
        n, top_n = int(r["n"]), int(r["top_n"])
        limit = _opt_int(r["limit_value"])
        rest = n - top_n
        out.append(
            RequestLimit(
                measure=r["measure"],
                tier=None if r["all_tiers"] else (r["tier"] or NO_MODEL),
                n=n,
                top_n=top_n,
                top_min=int(r["top_min"]),
                top_max=int(r["top_max"]),
                limit=limit,
                cuts_top=int(r["cuts_top"]) if limit is not None else 0,
                cuts_rest=int(r["cuts_rest"]) if limit is not None else 0,
                rest_kept_share=(rest - int(r["cuts_rest"])) / rest if rest else None,
            )
        )
    return out


def analyze_heavy_requests(i: Inputs) -> HeavyRequests:
    ctx, con = i.ctx, i.con
    span = {"t_from": ctx.window_start, "t_to": ctx.window_end}
    why: dict[str, str] = {}
    heavy: dict[str, list[HeavyRequest]] = {"prefill": [], "kv": [], "duration": []}
    if ctx.has_steps:
        rows = sql.rows(
            con,
            "analyses/heavy_executions",
            span | {"block_size": BLOCK_SIZE, "k": TOP_K},
        )
        heavy = _heavy(rows, ctx.t0)
    else:
        why["by_prefill"] = why["by_kv"] = "needs an engine trace with step records"
    limits: list[RequestLimit] = []
    cuts: list[CutAttempt] = []
    observed: list[tuple[CutKind, float, float | None]] = []
    if ctx.has_proxy:
        longest = sql.rows(con, "analyses/heavy_longest_attempts", span | {"k": TOP_K})
        heavy["duration"] = _longest_attempts(longest, ctx.t0)
        limits = _limits(sql.rows(con, "analyses/heavy_limits", span | {"k": TOP_K}))
        if not limits:
            why["limits"] = "the proxy log gives neither prompt_tokens nor max_tokens"
        has_events = ctx.has_events
        # Every cut attempt is counted; only the first LISTED_CUTS become models (the
        # sample has 6,257 cut attempts: a model for each took 0.03 s).
        for r in sql.rows(con, "analyses/heavy_cut_attempts", span):
            kind, reason = classify(r, has_events)
            observed.append((kind, float(r["elapsed_s"]), r["gap_at_cut_s"]))
            if len(cuts) == LISTED_CUTS:
                continue
            cuts.append(
                CutAttempt(
                    call_id=r["call_id"],
                    attempt=int(r["attempt"]),
                    start_s=r["t_sent"] - ctx.t0,
                    cut_by=r["cut_by"],
                    kind=kind,
                    why=reason,
                    model=r["model"],
                    replica=r["replica"],
                    elapsed_s=float(r["elapsed_s"]),
                    ttft_s=r["ttft_s"],
                    silence_s=r["gap_at_cut_s"],
                )
            )
    else:
        why["limits"] = why["timeouts"] = "needs a proxy log (what each request asked for)"
    res = HeavyRequests(
        top_k=TOP_K,
        block_size_tokens=BLOCK_SIZE,
        by_prefill=heavy["prefill"],
        by_kv=heavy["kv"],
        by_duration=heavy["duration"],
        limits=limits,
        timeouts=_observed(observed),
        cut_attempts=cuts,
        cut_attempts_total=len(observed),
        null_reasons=why,
    )
    return res


def missing(i: Inputs) -> str | None:
    if i.ctx.has_steps or i.ctx.has_proxy:
        return None
    return "the requests that hurt need a proxy log or an engine trace with step records"


def run(i: Inputs) -> HeavyRequests:
    res = analyze_heavy_requests(i)
    if not (res.by_prefill or res.by_kv or res.by_duration):
        raise NoDataError("the requests that hurt: no request in the analysed window")
    return res
