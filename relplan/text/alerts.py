"""The words of `relplan alerts`: the health rules' annotations (the summary, description and
runbook a person on call reads), the rule file's header, the dashboard's descriptions
(relplan/alerts/rules.py and dashboard.py name each by a code of their `Said`; `SENTENCES`
words it, relplan/wording.py), and the lines printed after writing or evaluating rules.

The rules' expressions are PromQL, built beside them; a threshold comes here as the
expression's own literal and a value as Prometheus's template (`{{ printf "%.2f" $value }}`),
so the description quotes what the rule compares and Prometheus renders the number.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from relplan.values import num, short

if TYPE_CHECKING:  # the rules reach this module by name; it needs their modules for types only
    from relplan.alerts.promtool import UnitTestReport
    from relplan.alerts.pushdown import PushdownStats


def wrote_rules(out: Path, count: int) -> str:
    return f"wrote {out}: {count} alerting rules; check with: promtool check rules {out}"


def wrote_dashboard(out: Path, panels: int) -> str:
    return f"wrote {out}: {panels} panels; import it in Grafana: Dashboards > New > Import"


def wrote_slo_rules(out: Path) -> str:
    return f"wrote {out}; check with: promtool check rules {out}"


def pushed_down(s: PushdownStats) -> str:
    return (
        f"pushed down to {s.url}: {s.requests} requests, {num(s.bytes_fetched)} bytes fetched,"
        f" {s.series} result series, {num(s.points)} points"
    )


def wrote_unit_test(report: UnitTestReport) -> str:
    return (
        f"wrote {report.rules_path} and {report.test_path}: {report.evaluations} evaluations,"
        f" {report.checks} checks; firing evaluations: "
        + ", ".join(f"{k} {v}" for k, v in report.firing.items())
    )


# --- the health rules' annotations and file (relplan/alerts/rules.py's `Said`) -------------

_SUMMARIES = {
    "preemption_storm": "preemption storm",
    "cache_full_while_queueing": "KV cache full while requests queue",
    "queue_growing": "waiting queue keeps growing",
    "stuck_replica": "requests running but no tokens generated",
    "counter_divergence": "prompt-token counter misses scheduled prefill",
}
# The `relplan analyze` sections that explain each engine signal.
_SECTIONS = {
    "preemption_storm": "wasted prefill and engine health",
    "cache_full_while_queueing": "Little's law and engine health",
    "queue_growing": "amplification and delivery",
    "stuck_replica": "engine health",
    "counter_divergence": "counters and wasted prefill",
}


def summary(signal: str, who: str) -> str:
    """`who`: the template of the replica's (or the gateway cluster's) label."""
    if signal == "retry_amplification":
        return f"Gateway cluster {who}: retries amplify load"
    return f"vLLM replica {who}: {_SUMMARIES[signal]}"


def runbook(signal: str) -> str:
    if signal == "retry_amplification":
        return (
            "Export the gateway access log and the engine metrics for the window,"
            " `relplan ingest` them, then `relplan analyze` (amplification,"
            " delivery and retry timing) and `relplan pulse` to size a retry budget."
        )
    return (
        "Pull the window into a workspace: relplan ingest --prometheus-url <prometheus> "
        "--match 'vllm:.*' --start <alert start - 1h> --end <now> --step 15s; then run "
        f"`relplan analyze` (sections: {_SECTIONS[signal]})."
    )


def preemption_storm(value: str, rate: str) -> str:
    return (
        f"{value} preemptions/s over 5m (threshold {rate}/s): running requests are evicted from"
        " the KV cache and their prefill is recomputed, so the replica does the same work twice."
    )


def cache_full_while_queueing(value: str, kv_usage: str, waiting: str) -> str:
    return (
        f"KV cache usage reached {value} (max over 10m, threshold {kv_usage}) while more than"
        f" {waiting} requests wait: admission is blocked by memory, not by compute."
    )


def queue_growing(value: str, slope: str) -> str:
    return (
        f"The waiting queue grows by {value} requests/s (least-squares slope over 10m,"
        f" threshold {slope}/s): arrivals, retries included, exceed what the replica serves."
    )


def stuck_replica(value: str) -> str:
    return (
        f"{value} requests are running and the generation-token counter did not move for 1m:"
        " the engine is stuck (hung step, dead worker, NCCL wait)."
    )


def counter_divergence(value: str, shortfall: str) -> str:
    return (
        f"Shortfall {value} (threshold {shortfall}): over 1m the prompt-token counter rose that"
        " much less than the prefix-cache query counter, so prefills are aborted before their"
        " first token, work the dashboards do not show."
    )


def retry_amplification(value: str, amplification: str) -> str:
    return (
        f"{value} upstream attempts per call over 5m (threshold {amplification}): retries add"
        " load to an engine that is already behind, which can keep it down after the overload"
        " ends."
    )


def rules_header(replica_label: str, proxy: bool) -> str:
    """The comment at the top of the exported rule file, one line a line."""
    header = (
        "Prometheus alerting rules written by `relplan alerts export`.\n"
        f"Replica label: {replica_label}. vLLM V1 metric names (counters with _total).\n"
        "Check: promtool check rules FILE. Deploy: list FILE under rule_files in prometheus.yml.\n"
    )
    if proxy:
        header += "The relplan-proxy group needs Envoy's /stats/prometheus metrics.\n"
    return header


# --- the dashboard's descriptions (relplan/alerts/dashboard.py's `Said`) --------------------


def signal_panel(summary: str, alert: str, for_s: float) -> str:
    return f"{summary} — the value alert {alert} compares (threshold drawn), for {short(for_s)} s."


def firing_panel(health_group: str, proxy_group: str) -> str:
    return (
        f"ALERTS of the rule groups {health_group} and {proxy_group} (relplan alerts export),"
        " once the rule file is deployed."
    )


def dashboard(label: str) -> str:
    return (
        f"vLLM engine health as relplan checks it (relplan alerts dashboard); replica label {label}"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        signal_panel,
        firing_panel,
        dashboard,
        summary,
        runbook,
        preemption_storm,
        cache_full_while_queueing,
        queue_growing,
        stuck_replica,
        counter_divergence,
        retry_amplification,
        rules_header,
    )
}
