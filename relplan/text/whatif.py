"""The text `relplan whatif` prints: the fit, the fit check, the control table, the settings.

Below the renderers, the words of relplan/whatif/*.py: each of those modules names a sentence by
a code (its `Said`) with its numbers and names, and `SENTENCES` words it (the fit's provenance,
the check's reasons, the controls' labels, the settings to deploy); reached by name through
relplan/analyses/wording.py, so relplan.whatif never imports relplan.text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from relplan.tables import format_table
from relplan.values import fixed, num, pct, percent, short, sig
from relplan.whatif.model import Figures, Provenance, Spread, WhatIf


def render_fit(fit: list[Provenance]) -> str:
    rows = [[p.part, p.value, p.source] for p in fit]
    return format_table(["part", "fitted", "from"], rows, left=(0, 1, 2))


def _fig_rows(label: str, f: Figures) -> list[list[str]]:
    rows = []
    for w in f.windows:
        rows.append([label, w.window, num(w.calls), pct(w.delivered_share), pct(w.on_time_share)])
    return rows


def render_check(w: WhatIf) -> str:
    c = w.check
    rows = []
    for inc in c.incident.windows:
        rep = c.replay.window(inc.window)
        rows.append(
            [
                inc.window,
                num(inc.calls),
                pct(inc.delivered_share),
                pct(None if rep is None else rep.delivered_share),
                pct(inc.on_time_share),
                pct(None if rep is None else rep.on_time_share),
            ]
        )
    table = format_table(
        ["window", "calls", "delivered", "replay", "on time", "replay"], rows, left=(0,)
    )
    lines = [
        table,
        "",
        f"executions per call: {num(c.incident.executions_per_call, 2)} (replay "
        f"{num(c.replay.executions_per_call, 2)}); after the overload accepted "
        f"{num(c.incident.accepted_x_capacity, 2)} x C^ (replay {num(c.replay.accepted_x_capacity, 2)}), "
        f"completed {num(c.incident.completed_x_capacity, 2)} x C^ (replay "
        f"{num(c.replay.completed_x_capacity, 2)})",
        f"recovered after {_secs(c.incident.recovery_s)} (replay {_secs(c.replay.recovery_s)}),"
        f" drained after {_secs(c.incident.drained_s)} (replay {_secs(c.replay.drained_s)})"
        " (docs/analyses.md, Recovery, two ways)",
        f"verdict: {c.incident.verdict} (replay: {c.replay.verdict}); fit error "
        f"{pct(c.error)}" + ("" if c.error_window is None else f" ({c.error_window})"),
        ("trusted: " if c.trusted else "NOT trusted, controls not ranked: ") + c.reason,
    ]
    return "\n".join(lines)


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{fixed(v, 0)} s"


def _spread(s: Spread | None, share: bool = True) -> str:
    if s is None or s.median is None:
        return "-"
    f = pct if share else (lambda v: num(v))
    if s.low == s.high:
        return f(s.median)
    return f"{f(s.median)} ({f(s.low)}-{f(s.high)})"


def render_controls(w: WhatIf) -> str:
    order = {n: i for i, n in enumerate(w.ranked)}
    controls = sorted(w.controls, key=lambda c: order.get(c.name, len(order)))
    rows = []
    for c in controls:
        if not c.available:
            rows.append([c.name, c.label, "-", "-", "-", "-", "-", f"not replayed: {c.reason}"])
            continue
        rows.append(
            [
                c.name,
                c.label,
                _spread(c.delivered_share),
                _spread(c.on_time_share),
                _spread(c.recovery_s, share=False),
                _spread(c.drained_s, share=False),
                _spread(c.executions_per_call, share=False)
                if c.executions_per_call is None or c.executions_per_call.median is None
                else f"{fixed(c.executions_per_call.median, 2)}",
                c.verdict,
            ]
        )
    return format_table(
        [
            "control",
            "what",
            "delivered",
            "on time",
            "recovered after s",
            "drained after s",
            "exec/call",
            "verdict",
        ],
        rows,
        left=(0, 1, 7),
    )


def render_settings(w: WhatIf) -> str:
    if not w.settings:
        return "no settings: " + (
            "the fit is not trusted"
            if not w.check.trusted
            else "no control improved on the incident"
        )
    parts = []
    for s in w.settings:
        parts.append(f"## {s.title} (for {s.control})\n{s.text.rstrip()}")
    return "\n\n".join(parts)


def render_whatif(w: WhatIf) -> str:
    return "\n".join(
        [
            f"{w.name}: what would have helped (C^ = {num(w.capacity_calls_per_s, 2)} calls/s, "
            f"{w.seeds} seed(s) per control, {short(w.wall_s)} s)",
            "",
            "# The fit",
            render_fit(w.fit),
            "",
            "# Fit check: the incident and its as-observed replay",
            render_check(w),
            "",
            "# Controls (overload and later calls; median and range over seeds)",
            render_controls(w),
            "",
            "# Settings for the best controls",
            render_settings(w),
        ]
    )


# docs/whatif.md's Controls table, generated from the declarations (relplan/whatif/controls.py)
# by `python -m relplan.cli.reference --write`; tests/test_whatif_controls.py checks the file.
CONTROLS_TABLE_HEAD = "| control | what it replays | the real setting |"


def controls_markdown() -> str:
    """The Controls table: one row per declared control, then the `--scenario FILE` row."""
    from relplan.whatif.controls import CONTROLS

    rows = [CONTROLS_TABLE_HEAD, "| --- | --- | --- |"]
    for c in CONTROLS:
        real = "; ".join(real_setting(r.system, r.setting, r.note) for r in c.real)
        rows.append(f"| `{c.name}` | {c.replays} | {real} |")
    rows.append(
        "| a `--scenario FILE` | the file's `client`, `proxy` and `engine` tables applied over"
        " the fit | the settings its overrides name (relplan/whatif/settings.py) |"
    )
    return "\n".join(rows)


def real_setting(system: str, setting: str, note: str) -> str:
    """A control's real setting as the table names it (relplan/whatif/controls.py declares it)."""
    return f"{system} `{setting}`" + (f" ({note})" if note else "")


def with_controls_table(doc: str) -> str:
    """`doc` (docs/whatif.md) with its Controls table replaced by `controls_markdown()`."""
    lines = doc.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(CONTROLS_TABLE_HEAD[:18]))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:start]) + controls_markdown() + "\n" + "".join(lines[end:])


# --- the check's reasons (relplan/whatif/check.py) -----------------------------------------


def check_no_verdict() -> str:
    return "the incident itself has no verdict (insufficient data)"


def check_verdict_differs(replayed: Sequence[str], incident: str) -> str:
    return (
        f"the as-observed replay reached {', '.join(replayed)} where the "
        f"incident was {incident}: the fitted scenario does not reproduce the "
        "incident, so its controls' outcomes would not say what the incident would have "
        "done; check the fit's parts (docs/whatif.md, The fit) and give the flags that fix them"
    )


def check_error_too_large(error: float, window: str | None, most: float) -> str:
    return (
        f"the as-observed replay differs by {percent(error)} of calls in {window} (more than "
        f"{percent(most)}): the controls' figures would carry that error"
    )


def check_trusted(verdict: str, error: float | None, window: str | None) -> str:
    return f"every as-observed seed reached the incident's verdict ({verdict})" + (
        "" if error is None else f" and the shares differ by at most {percent(error, 1)} ({window})"
    )


# --- the fit's provenance: the client and the proxy (relplan/whatif/fit_observed.py) ------


def deadline(seconds: float) -> str:
    return f"deadline {short(seconds)} s"


def deadline_cut(lasted: int, cut: int) -> str:
    return f"{lasted} of {cut} attempts the client cut lasted it"


def deadline_given(source: str | None) -> str:
    return f"D from {source}"


def retries(retries: int) -> str:
    return f"{retries} retries"


def retries_seen(retries: int, calls: int) -> str:
    return f"highest attempt number in the proxy log ({retries} retries of {calls} calls)"


def backoff(low_s: float, high_s: float) -> str:
    return f"backoff uniform {short(low_s)}-{short(high_s)} s"


def backoff_gaps(gaps: int) -> str:
    return (
        f"smallest and largest of {gaps} gaps between an attempt's end (at the "
        "latest its start + the deadline: the client left then) and the next"
    )


def delivery_window(seconds: float) -> str:
    return f"delivery window {short(seconds)} s"


def window_given(source: str | None) -> str:
    return f"W from {source}"


def proxy_unobserved() -> str:
    return "needs a proxy log and an engine trace: assumed"


def cancellation(cancellation: str) -> str:
    return f"cancellation {cancellation}"


def cancellation_unseen() -> str:
    return (
        "assumed: no execution lost its client in the proxy log, so none "
        "could be seen aborted (with cancellation off a proxy logs the engine's answer)"
    )


def cancellation_seen(aborted: int, gone: int, delay_s: float) -> str:
    return (
        f"{aborted} of {gone} executions whose client left were aborted, median"
        f" {fixed(delay_s, 2)} s after"
    )


def cancellation_rare(aborted: int, gone: int) -> str:
    return f"only {aborted} of {gone} executions whose client left were aborted"


def coalescing(coalesced: bool) -> str:
    return "retries coalesced" if coalesced else "retries not coalesced"


def coalescing_seen(attached: int, retries: int) -> str:
    return f"{attached} of {retries} retries attached to a running execution"


def refusals_seen(refused: int) -> str:
    return (
        f"{refused} attempts were refused (shed or error): which limit refused them is not in"
        " the data"
    )


def no_deadline() -> str:
    return "no deadline"


def no_cut() -> str:
    return "no attempt was cut by the client"


def retries_assumed() -> str:
    return "no proxy log: assumed"


def proxy_assumed() -> str:
    return "no cancellation, no coalescing"


def limits_assumed() -> str:
    return "no retry budget or proxy cap assumed"


# --- a length histogram (relplan/whatif/fit_lengths.py) -----------------------------------


def histogram(
    metric: str, requests: float, mean: float, share: float, low: float, high: float
) -> str:
    """`(low, high]` is the bucket holding the most requests (`share` of them)."""
    top = "+Inf" if math.isinf(high) else short(high)
    return (
        f"{metric} histogram: {fixed(requests, 0)} finished requests, mean "
        f"{fixed(mean, 1)}, {percent(share)} in ({short(low)}, {top}]"
    )


# --- the fit's provenance: calls, lengths, engine, capacity (relplan/whatif/fit.py) -------


def calls_source(proxy: bool) -> str:
    return (
        "first attempts in the proxy log"
        if proxy
        else "executions' `arrived` events in the engine trace"
    )


def prompts_from(proxy: int, engine: int, drawn: int, histogram: str | None) -> str:
    """Where the prompt lengths came from; `histogram` describes the one `drawn` come from."""
    parts = [
        f"{proxy} from the proxy log" if proxy else "",
        f"{engine} from the engine trace's arrivals" if engine else "",
        f"{drawn} drawn from the {histogram}" if drawn else "",
    ]
    return "; ".join(p for p in parts if p)


def prompts_from_arrivals(drawn: int, histogram: str | None) -> str:
    return "prompt_tokens of the arrivals" + (
        f"; {drawn} drawn from the {histogram}" if drawn else ""
    )


def steps_not_fitted(source: str, unconstrained: Sequence[tuple[str, str | None]]) -> str:
    return f"{source}: " + "; ".join(
        f"{name} {note or 'not constrained'}" for name, note in unconstrained
    )


def profile_description(source: str) -> str:
    return f"step costs fitted by relplan whatif from the incident's {source}"


def profile_cost_provenance(
    steps: int, source: str, median_pct: float | None, p90_pct: float | None
) -> str:
    return (
        f"least squares over {steps} steps of the {source}: step_ms = a "
        f"+ b x prefill tokens + bd x decoding requests; error median "
        f"{fixed(median_pct, 0)} %, p90 {fixed(p90_pct, 0)} %"
    )


def step_costs(a_ms: float, b_ms: float, bd_ms: float) -> str:
    return (
        f"step costs a {sig(a_ms, 3)} ms + b {sig(b_ms, 3)} ms/prefill token + bd"
        f" {sig(bd_ms, 3)} ms/decode"
    )


def step_costs_fitted(
    steps: int, source: str, median_pct: float | None, p90_pct: float | None
) -> str:
    return (
        f"fitted to {steps} steps of the {source} (error per step: "
        f"median {fixed(median_pct, 0)} %, p90 {fixed(p90_pct, 0)} %)"
    )


def max_num_seqs(seqs: int) -> str:
    return f"max_num_seqs {seqs}"


def batch_held() -> str:
    return "the most requests running while others waited (vllm:num_requests_running)"


def batch_assumed(source: str) -> str:
    return (
        f"assumed: the largest batch in the {source} (a lower bound: the "
        "data never held it at a limit)"
    )


def step_tokens(tokens: int) -> str:
    return f"max_num_batched_tokens {tokens}"


def step_tokens_seen(source: str) -> str:
    return f"the most tokens in one step of the {source} (a lower bound of the setting)"


def kv_cache(blocks: int, block_size: int) -> str:
    return f"KV cache {blocks} blocks of {block_size} tokens"


def speed_provenance(speed: float, base: float, capacity: float) -> str:
    return (
        f"relplan whatif fit: {short(speed)} x {short(base)} / {short(capacity)} (the profile's "
        "calibrated C^ over the C^ of the incident)"
    )


def profile_scaled(name: str, speed: float) -> str:
    return f"profile {name} at speed {short(speed)}"


def profile_scaled_from(label: str, base: float, capacity: float) -> str:
    return (
        f"{label} scaled so that its C^ {short(base)} becomes the incident's"
        f" {short(capacity)} calls/s"
    )


def profile_named(name: str) -> str:
    return f"profile {name}"


def profile_chosen(given: bool, base: float | None) -> str:
    """`--profile` or the default; `base`, its calibrated C^, is within 2 % of the incident's."""
    why = "" if base is None else f" (its C^ {short(base)} calls/s is within 2 % of the incident's)"
    return ("--profile" if given else "the default profile") + why


def shared_prefix(tokens: int) -> str:
    return f"shared prefix {tokens} tokens"


def prefix_cached(cached: int, executions: int, steps: bool) -> str:
    what = "executions' first step" if steps else "executions' ends (cached_tokens)"
    return f"cached tokens of {cached} of {executions} {what}"


def prefix_counters(metric: str, retried: bool, share: float, prompt_tokens: float) -> str:
    when = (
        "before the first retry (after it a retry finds its own prompt cached)"
        if retried
        else "(no retry seen; a retry's own earlier prompt would count too)"
    )
    return (
        f"{metric} over vllm:prompt_tokens_total {when}: {percent(share)} of"
        f" {fixed(prompt_tokens, 0)} prompt tokens cached, times the calls' mean prompt"
    )


def retry_reuse(cached: bool) -> str:
    return "retries' prompts cached" if cached else "retries' prompts not cached"


def retry_reuse_assumed(counter_missing: bool) -> str:
    return "assumed: a retry does not reuse its predecessor's blocks (the simulator's default)" + (
        "; no vllm:prompt_tokens_cached_total to tell" if counter_missing else ""
    )


def retry_reuse_seen(
    cached: float, total: float, excess: float, per_retry: float, retries: int, reused: bool
) -> str:
    return (
        f"vllm:prompt_tokens_cached_total rose {num(cached, 0)} of {num(total, 0)} prompt "
        f"tokens from the first retry on, {num(excess, 0)} beyond the shared prefix: "
        f"{fixed(per_retry, 0)} a retry over {retries} retries "
        + ("(a retry finds its call's prompt blocks)" if reused else "(under half a block)")
    )


def arrivals(calls: int) -> str:
    return f"{calls} calls at their planned times"


def outputs_drawn(histogram: str) -> str:
    return f"drawn from the {histogram}"


def outputs_lognormal(median: float, sigma: float, fitted: bool, before_phase: str | None) -> str:
    """Fitted to the calls finished before the overload phase `before_phase` (None: to every
    finished call), or assumed when the data holds no finished lengths."""
    drawn = f"drawn from lognormal(median {fixed(median, 0)}, sigma {fixed(sigma, 2)})"
    if not fitted:
        return (
            f"{drawn}: assumed, the data holds no finished lengths (no step records, no "
            "vllm:request_generation_tokens histogram)"
        )
    reference = (
        "every finished call"
        if before_phase is None
        else f"calls finished that were planned before the {before_phase} phase"
    )
    return f"{drawn} fitted to {reference}, each longer than what it had generated"


def lengths(prompts: int, outputs: int) -> str:
    return f"{prompts} prompt lengths; {outputs} output lengths"


def lengths_from(prompts: str, others: int, drawn: str) -> str:
    return (
        f"prompts: {prompts}; outputs: generated tokens of finished executions; "
        f"{others} others {drawn}"
    )


def capacity(capacity: float) -> str:
    return f"C^ {sig(capacity, 3)} calls/s"


def capacity_from_costs(
    prefill: float, output: float, seqs: int, estimated: float | None, estimated_source: str | None
) -> str:
    """Ĉ from the fitted step costs; `estimated`, the analyses' own estimate, beside it."""
    text = (
        f"the fitted step costs, each call prefilling {fixed(prefill, 0)} tokens (after the "
        f"prefix) and decoding {fixed(output, 0)}, {seqs} requests decoding together"
    )
    if estimated is not None:
        text += f"; the analyses estimated {sig(estimated, 3)} ({estimated_source})"
    return text


def capacity_given(flag: bool, source: str | None) -> str:
    return "--capacity" if flag else f"from {source}"


def scenario_header(provenance: Sequence[Provenance]) -> str:
    """The fitted scenario file's opening comment: one line per fitted part."""
    return "# " + "\n# ".join(f"{p.part}: {p.value} ({p.source})" for p in provenance) + "\n"


def costs_not_fitted() -> str:
    return "step costs not fitted"


def profile_not_fitted() -> str:
    return "attention (c, f) and the memory floor: the counts cannot separate them"


def scenario_description() -> str:
    return "relplan whatif fit: the incident's calls, client, proxy and engine as observed"


# --- the settings to deploy (relplan/whatif/settings.py) ----------------------------------


def queued_reqs_text(waiting: int, running: int) -> str:
    return (
        f"vllm serve MODEL --max-num-queued-reqs {waiting + running}\n"
        f"# {waiting} waiting (the replayed cap) + {running} running (peak in the engine"
        " trace); vLLM counts both and answers 503 above it"
    )


def max_queued_reqs_text(total: int) -> str:
    return (
        f"vllm serve MODEL --max-num-queued-reqs {total}\n"
        "# vLLM answers 503 above it; waiting and running requests both count, so it is sized"
        " as --max-num-seqs plus the queue wanted"
    )


def step_tokens_text(tokens: int) -> str:
    return f"vllm serve MODEL --max-num-batched-tokens {tokens}"


def client_text(retries: int, timeout: str) -> str:
    """`timeout` as Python code writes it (relplan/whatif/settings.py formats it)."""
    return f"client = OpenAI(max_retries={retries}, timeout={timeout})"


def first_token_text(retries: int) -> str:
    return (
        "Retry an attempt only when it failed before any token arrived (a refusal, a timeout\n"
        "waiting for the first token); once the response has started streaming, end the call\n"
        "with the error instead of sending the prompt again.\n"
        f"client = OpenAI(max_retries={retries}, timeout=...)  # with stream=True, do"
        " not wrap the stream in a retry loop"
    )


def coalescing_text(cancellation: str) -> str:
    return (
        "Every attempt of one call carries the same key, e.g. the header\n"
        "  Idempotency-Key: <one value per call, repeated on each retry>\n"
        "and the proxy attaches a retry to the running execution with that key.\n"
        f"Cancellation when the client leaves: {cancellation}"
        + (
            " - keep the execution running that long, past the client's backoff, so the retry"
            " finds it."
            if cancellation.startswith("deferred")
            else "."
        )
    )


def proxy_cap_note() -> str:
    """Below the Envoy cap's YAML: what the replayed control has that Envoy has not."""
    return (
        "# newest-first service of the queue is not an Envoy setting: it needs a proxy\n"
        "# that serves its pending queue last-in first-out\n"
    )


# --- the controls' labels, from their sizes (relplan/whatif/controls.py) ------------------


def budget_label(ratio: float) -> str:
    return f"retry budget {percent(ratio)} (from the pulse)"


def deferred_label(delay_s: float) -> str:
    return f"coalesce, cancel deferred {short(delay_s)} s"


def proxy_cap_label(max_outstanding: int) -> str:
    return f"proxy cap {max_outstanding}, newest first"


def queue_cap_label(max_num_queued_reqs: int) -> str:
    return f"vLLM --max-num-queued-reqs {max_num_queued_reqs}"


def steps_label(tokens: int) -> str:
    return f"{num(tokens)}-token steps"


def timeout_label(deadline_s: float) -> str:
    return f"client timeout {short(deadline_s)} s"


def file_label(name: str) -> str:
    return f"{name} (file)"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        check_no_verdict,
        check_verdict_differs,
        check_error_too_large,
        check_trusted,
        deadline,
        deadline_cut,
        deadline_given,
        retries,
        retries_seen,
        backoff,
        backoff_gaps,
        delivery_window,
        window_given,
        proxy_unobserved,
        cancellation,
        cancellation_unseen,
        cancellation_seen,
        cancellation_rare,
        coalescing,
        coalescing_seen,
        refusals_seen,
        histogram,
        calls_source,
        prompts_from,
        prompts_from_arrivals,
        steps_not_fitted,
        profile_description,
        profile_cost_provenance,
        step_costs,
        step_costs_fitted,
        max_num_seqs,
        batch_held,
        batch_assumed,
        step_tokens,
        step_tokens_seen,
        kv_cache,
        speed_provenance,
        profile_scaled,
        profile_scaled_from,
        profile_named,
        profile_chosen,
        shared_prefix,
        prefix_cached,
        prefix_counters,
        retry_reuse,
        retry_reuse_assumed,
        retry_reuse_seen,
        arrivals,
        outputs_drawn,
        outputs_lognormal,
        lengths,
        lengths_from,
        capacity,
        capacity_from_costs,
        capacity_given,
        scenario_header,
        queued_reqs_text,
        max_queued_reqs_text,
        step_tokens_text,
        client_text,
        first_token_text,
        coalescing_text,
        budget_label,
        deferred_label,
        proxy_cap_label,
        queue_cap_label,
        steps_label,
        timeout_label,
        file_label,
        no_deadline,
        no_cut,
        retries_assumed,
        proxy_assumed,
        limits_assumed,
        costs_not_fitted,
        profile_not_fitted,
        scenario_description,
        proxy_cap_note,
    )
}
