"""relplan/values.py: every accepted and every refused form of a duration, a time and an SLO."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relplan.errors import UsageError
from relplan.values import (
    ABSOLUTE_TIME_THRESHOLD,
    fixed,
    is_relative,
    num,
    parse_duration,
    parse_instant,
    parse_slo,
    parse_time_flag,
    percent,
    resolve_time,
    short,
    sig,
    sig_grouped,
)

T0 = 1_764_460_800.0  # 2025-11-30T00:00:00Z


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90),
        ("90s", 90),
        ("2m", 120),
        ("1.5h", 5400),
        ("30d", 2_592_000),
        ("720h", 2_592_000),
        ("4w", 2_419_200),
        ("0.5", 0.5),
        (".5m", 30),
        ("2M", 120),
        (" 15s ", 15),
    ],
)
def test_durations_accepted(text: str, seconds: float) -> None:
    assert parse_duration(text, "--window") == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected a duration like 90, 90s, 2m, 1.5h or 30d"),
        ("soon", "expected a duration"),
        ("-5", "expected a duration"),
        ("-5s", "expected a duration"),
        ("1e3", "expected a duration"),
        ("2m30s", "expected a duration"),
        ("30x", "unknown unit 'x'"),
        ("5ms", "unknown unit 'ms'"),
        ("nan", "expected a duration"),
        ("inf", "expected a duration"),
        ("0", "must be longer than zero"),
        ("0s", "must be longer than zero"),
        ("0.0d", "must be longer than zero"),
    ],
)
def test_durations_refused_name_the_flag(text: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_duration(text, "--deadline")
    assert str(err.value).startswith("--deadline: ")
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("120", 120.0),  # seconds from t0, not 1970
        ("0", 0.0),
        ("-30", -30.0),
        ("2.5", 2.5),
        ("2m", 120.0),
        ("0s", 0.0),
        ("1.5h", 5400.0),
        ("1764460860", T0 + 60),  # epoch seconds
        ("1764460860.25", T0 + 60.25),
        ("2025-11-30T00:01:00Z", T0 + 60),
        ("2025-11-30T00:01:00z", T0 + 60),
        ("2025-11-30t00:01:00Z", T0 + 60),
        ("2025-11-30 00:01:00Z", T0 + 60),
        ("2025-11-30T01:01:00+01:00", T0 + 60),
        ("2025-11-29T23:01:00-0100", T0 + 60),
        ("2025-11-30T00:01:00.5+00:00", T0 + 60.5),
        ("2025-11-30T00:01:00.123456789Z", T0 + 60.123456),
    ],
)
def test_times_accepted(text: str, value: float) -> None:
    assert parse_time_flag(text, "--from") == pytest.approx(value, abs=1e-6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("yesterday", "expected seconds from t0 (120, 2m), epoch seconds or an RFC 3339"),
        ("", "expected seconds from t0"),
        ("2025-11-30T00:01:00", "expected seconds from t0"),  # no offset: ambiguous
        ("2025-11-30", "expected seconds from t0"),
        ("2025-13-30T00:01:00Z", "expected seconds from t0"),  # month 13
        ("nan", "expected seconds from t0"),
        ("inf", "expected seconds from t0"),
        ("1e999", "expected seconds from t0"),
        ("2x", "unknown unit 'x'"),
        ("5000d", "more than 1e8 s after t0"),
        ("1970-01-02T00:00:00Z", "times before 1973-03-03 are not supported"),
    ],
)
def test_times_refused_name_the_flag(text: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_time_flag(text, "--to")
    assert str(err.value).startswith("--to: ")
    assert message in str(err.value)


def test_a_small_number_is_relative_a_large_one_absolute() -> None:
    assert is_relative(parse_time_flag("120", "--from"))
    assert is_relative(parse_time_flag(str(ABSOLUTE_TIME_THRESHOLD), "--from"))
    assert not is_relative(parse_time_flag("1764460860", "--from"))
    assert not is_relative(parse_time_flag("2025-11-30T00:01:00Z", "--from"))
    assert resolve_time(parse_time_flag("120", "--from"), T0) == T0 + 120
    assert resolve_time(parse_time_flag("2m", "--from"), T0) == T0 + 120
    assert resolve_time(parse_time_flag("1764460920", "--from"), T0) == T0 + 120


def test_a_live_pull_needs_absolute_times() -> None:
    assert parse_instant("2025-11-30T00:01:00Z", "--start") == T0 + 60
    assert parse_instant("1764460860", "--start") == T0 + 60
    with pytest.raises(UsageError, match=r"^--start: .*no data yet to count seconds from"):
        parse_instant("120", "--start")
    with pytest.raises(UsageError, match=r"^--end: expected seconds from t0"):
        parse_instant("later", "--end")


@given(st.floats(min_value=-1e8, max_value=1e8, allow_nan=False))
def test_relative_numbers_round_trip(value: float) -> None:
    parsed = parse_time_flag(repr(value), "--from")
    assert parsed == value
    assert resolve_time(parsed, T0) == T0 + value


@given(st.floats(min_value=1e-3, max_value=1e6), st.sampled_from(["s", "m", "h", "d", "w", ""]))
def test_durations_scale_by_their_unit(value: float, unit: str) -> None:
    scale = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "": 1}[unit]
    text = f"{value:f}{unit}"
    assert math.isclose(parse_duration(text, "--step"), float(f"{value:f}") * scale)


@pytest.mark.parametrize(("value", "fraction"), [(99.9, 0.999), (0.999, 0.999), (1, 0.01)])
def test_slo_accepted(value: float, fraction: float) -> None:
    assert parse_slo(value) == fraction


@pytest.mark.parametrize("value", [0, -5, 100, 150, math.nan])
def test_slo_refused(value: float) -> None:
    with pytest.raises(UsageError, match=r"^--slo: must be a percentage"):
        parse_slo(value)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("1764460800000", "as milliseconds it is 2025-11-30: give seconds"),
        ("1764460800000000000", "as nanoseconds it is 2025-11-30"),
        ("2200-01-01T00:00:00Z", "times from 2100-01-01 on are not supported"),
        ("99999999999999", "(epoch seconds) is not between 1973-03-03 and 2100-01-01"),
    ],
)
def test_times_outside_the_plausible_range_are_refused(text: str, said: str) -> None:
    with pytest.raises(UsageError, match=re.escape(said)):
        parse_time_flag(text, "--from")


# --- the one number formatter (issue 29): the analyses and the report moved from format specs
# to it; each style writes what the spec it replaced wrote, so no figure changed.


@pytest.mark.parametrize(
    ("written", "spec_wrote"),
    [
        (num(12345), "12,345"),  # was f"{n:,}" for a count
        (sig_grouped(1234.5, 4), "1,234"),  # was f"{x:,.4g}"
        (sig_grouped(12.3456, 4), "12.35"),
        (sig_grouped(12345.0, 4), "1.234e+04"),
        (sig_grouped(None, 4), "-"),
        (short(90.0), "90"),  # was f"{x:g}"
        (fixed(1234.567, 2), "1234.57"),  # was f"{x:.2f}", no separators
        (percent(0.125, 1), "12.5%"),  # was f"{x:.1%}"
    ],
)
def test_the_number_formatter_writes_what_the_spec_wrote(written: str, spec_wrote: str) -> None:
    assert written == spec_wrote


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_each_style_is_the_spec_it_replaced(value: float) -> None:
    assert short(value) == f"{value:g}"
    assert sig(value, 3) == f"{value:.3g}"
    assert sig_grouped(value, 4) == f"{value:,.4g}"
    assert num(value, 1) == f"{value:,.1f}"
    assert fixed(value, 2) == f"{value:.2f}"
    assert percent(value) == f"{value:.0%}"


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_num_writes_a_count_as_the_thousands_spec_did(value: int) -> None:
    assert num(value) == f"{value:,}"
