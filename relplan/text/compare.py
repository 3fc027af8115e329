"""The words of `relplan compare` built from its figures' numbers and names: how each noise
band was found (or why none could be), why a figure has no value in a run, and the lines of
the comparison's text that carry a value.

relplan/compare imports the report, which imports this package, so this module never imports
relplan.compare: compare hands plain values (counts, seconds, names) and words them here.
Numbers go through relplan.values.
"""

from __future__ import annotations

from relplan.values import num, short, sig

# --- how a noise band was found (a figure's `method`) --------------------------------------
# The count in parentheses is read back by relplan/compare/render.py (band_methods) to join
# the same method over windows of different sizes into one line.


def bootstrap(what: str, n: int) -> str:
    """A band drawn by resampling `n` units (`what`: calls, executions)."""
    return f"bootstrap over {what} ({num(n)})"


def too_few_bins(bins: int) -> str:
    """No band: fewer than 3 time bins with data."""
    counted = "1 time bin" if bins == 1 else f"{bins} time bins"
    return f"none: {counted} with data (3 needed to resample)"


def time_bins(bin_s: float, bins: int) -> str:
    """A ratio figure's band, drawn over `bins` time bins of `bin_s` seconds."""
    return f"bootstrap over {short(bin_s)} s time bins ({bins})"


def histogram_time_bins(bin_s: float, bins: int) -> str:
    """A histogram quantile's band, drawn over `bins` time bins of `bin_s` seconds."""
    return f"bootstrap over {sig(bin_s, 3)} s time bins ({bins})"


def unknown_left_out(unknown: int) -> str:
    """Appended to a method: the attempts with no execution id it leaves out."""
    return f", {num(unknown)} attempt{'s' if unknown > 1 else ''} with no execution id left out"


def not_measured(source: str | None) -> str:
    """No band: a value given (`source`: run.json, --capacity), not measured."""
    return f"none: {source} (not measured)"


# --- why a figure has no value in a run --------------------------------------------------


def did_not_run(analysis: str, reason: str | None) -> str:
    return f"{analysis} did not run: {reason or 'no input'}"


def null_in_window(field: str) -> str:
    return f"{field} is null in the window"


def unknown_executions(unknown: int, sent: int) -> str:
    return (
        f"{num(unknown)} of {num(sent)} attempts sent have no execution id (a record that"
        " names the execution only when answered): executions would be undercounted"
    )


def did_not_recover(verdict: str) -> str:
    return f"did not recover ({verdict})"


def no_metric(metric: str) -> str:
    return f"no {metric} in the metrics"


def needs(what: str) -> str:
    return f"needs {what}"


def status_of(status: str, metric: str) -> str:
    return f"{status}: {metric}"


def no_histogram(metric: str) -> str:
    return f"no {metric} histogram"


# --- the comparison -----------------------------------------------------------------------


def phase_not_lined_up(labels: list[str]) -> str:
    """Why a phase that only some sides' runs have is not compared."""
    return (
        f"a phase of {', '.join(labels)} that no phase of the other side lines up with:"
        " its figures are not compared"
    )


def baseline_line(baseline: str) -> str:
    return f"baseline: {baseline}; differences are side minus baseline\n"
