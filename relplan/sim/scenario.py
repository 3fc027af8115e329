"""Scenario files (TOML or YAML), validated by pydantic, with `--set key=value` overrides.

A scenario names everything a run needs: workload phases (rates as multiples of the engine's
calibrated capacity C^, or absolute calls/s for calibration ramps), length distributions or a
real trace, client, proxy and engine settings, and the engine profile. Defaults are the
defaults listed in docs/simulate.md (Built-in scenarios, The model), so a file only states what differs.

Built-in scenarios live in `relplan/sim/scenarios/NAME.toml`; `load_scenario(NAME|FILE)` takes
either. `--set` takes a dotted path into the model (`proxy.cancellation=deferred(10)`,
`workload.phases.1.rate_x=1.5`); the value is read as a TOML value when it parses as one
(numbers, booleans, `inf`, quoted strings, arrays), as `null` for `null`/`none`, otherwise as
a plain string. It is parsed into an `Override` (a path and a typed value), the same object
whatif's controls build directly, and applied through the one path (`apply_override`).

Capacity: multiples refer to the C^ of the configuration being run. `capacity_calls_per_s`
in the scenario (or `--set`) wins; otherwise it is looked up in the engine profile's
calibration table by the configuration's fingerprint (profile cost model + engine settings +
workload lengths; see `profiles.py`), so a normal run never recalibrates.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from relplan.errors import InputError
from relplan.models import StrictModel
from relplan.settings_file import read_settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_CANCEL = re.compile(r"^(off|immediate|deferred\((\d+(?:\.\d+)?)\))$")

REFERENCE_PHASES: list[dict[str, Any]] = [
    {"name": "base", "seconds": 120.0, "rate_x": 0.6},
    {"name": "pulse", "seconds": 107.0, "rate_x": 2.7},
    {"name": "hold", "seconds": 720.0, "rate_x": 0.6},
]


class PhaseSpec(StrictModel):
    name: str = Field(min_length=1)
    # At most 30 days (and never inf): a phase longer is a unit mistake, not a run.
    seconds: float = Field(gt=0, le=30 * 86400)
    rate_x: float | None = Field(
        default=None, ge=0, le=1e6, description="calls/s as a multiple of C^"
    )
    rate_per_s: float | None = Field(default=None, ge=0, le=1e6, description="absolute calls/s")

    @model_validator(mode="after")
    def _one_rate(self) -> PhaseSpec:
        if (self.rate_x is None) == (self.rate_per_s is None):
            raise ValueError(f"phase {self.name!r}: give exactly one of rate_x or rate_per_s")
        return self


class TraceSpec(StrictModel):
    path: str
    format: Literal["auto", "proxy", "azure", "burstgpt", "mooncake"] = "auto"
    use: Literal["arrivals", "lengths"] = Field(
        default="arrivals",
        description="arrivals: the trace's arrival times and lengths replace the phases' "
        "Poisson arrivals; lengths: Poisson arrivals from the phases, lengths drawn from the trace",
    )
    time_scale: float = Field(default=1.0, gt=0, description="trace seconds per simulated second")
    start_s: float = Field(default=0.0, ge=0, description="skip the trace's first seconds")


class WorkloadSpec(StrictModel):
    phases: list[PhaseSpec] = Field(
        default_factory=lambda: [PhaseSpec(**p) for p in REFERENCE_PHASES], min_length=1
    )
    prompt_mean: float = Field(default=12000, gt=0)
    prompt_sd: float = Field(default=1200, ge=0)
    prefix_tokens: int = Field(default=2000, ge=0)
    output_median: float = Field(default=300, gt=0)
    output_sigma: float = Field(default=0.44, ge=0)
    max_tokens: int = Field(default=2048, ge=1)
    trace: TraceSpec | None = None

    @model_validator(mode="after")
    def _trace_prefix(self) -> WorkloadSpec:
        # a real trace's prompts share no synthetic prefix unless the scenario gives one
        if self.trace is not None and "prefix_tokens" not in self.model_fields_set:
            self.prefix_tokens = 0
        return self

    @field_validator("phases")
    @classmethod
    def _unique(cls, v: list[PhaseSpec]) -> list[PhaseSpec]:
        names = [p.name for p in v]
        if len(set(names)) != len(names):
            raise ValueError(f"phase names must be unique, got {names}")
        return v


class ClientSpec(StrictModel):
    deadline_s: float = Field(default=120.0, gt=0, description="per attempt; inf = patient")
    max_retries: int = Field(default=3, ge=0)
    backoff_min_s: float = Field(default=0.25, ge=0)
    backoff_max_s: float = Field(default=3.0, ge=0)
    delivery_window_s: float = Field(default=840.0, gt=0)
    stable_call_id: bool = True

    @model_validator(mode="after")
    def _backoff(self) -> ClientSpec:
        if self.backoff_max_s < self.backoff_min_s:
            raise ValueError("backoff_max_s must be >= backoff_min_s")
        return self


class RetryBudgetSpec(StrictModel):
    ratio: float = Field(default=0.1, ge=0)
    window_s: float = Field(default=60.0, gt=0)


class ProxySpec(StrictModel):
    cancellation: str = Field(default="off", description="off | immediate | deferred(SECONDS)")
    retry_budget: RetryBudgetSpec | None = None
    coalesce: bool = False
    max_outstanding: int | None = Field(default=None, ge=1)
    queue_limit: int | None = Field(default=None, ge=0)
    queue_order: Literal["fifo", "newest_first"] = "fifo"
    abort_delay_s: float = Field(default=0.0, ge=0)

    @field_validator("cancellation")
    @classmethod
    def _cancel(cls, v: str) -> str:
        if not _CANCEL.match(v):
            raise ValueError(f"expected off, immediate or deferred(SECONDS), got {v!r}")
        return v

    def cancel_mode(self) -> tuple[str, float]:
        m = _CANCEL.match(self.cancellation)
        assert m is not None
        if m.group(2) is not None:
            return "deferred", float(m.group(2))
        return m.group(1), 0.0


class EngineSpec(StrictModel):
    profile: str = "h100-7b"
    max_num_batched_tokens: int = Field(default=8192, ge=16)
    max_num_seqs: int = Field(default=256, ge=1)
    block_size: int = Field(default=16, ge=1, le=1024)  # vLLM's are 1-256 tokens
    num_blocks: int = Field(default=62_500, ge=1)
    waiting_cap: int | None = Field(
        default=None, ge=0, description="refuse while this many wait (not a vLLM flag)"
    )
    max_num_queued_reqs: int | None = Field(
        default=None,
        ge=1,
        description="vLLM --max-num-queued-reqs: refuse (503) while this many requests are "
        "in the engine, waiting or running",
    )
    max_num_queued_tokens: int | None = Field(
        default=None,
        ge=1,
        description="vLLM --max-num-queued-tokens: refuse (503) when the prompt tokens of the "
        "requests before their first token, its own included, would pass this",
    )
    async_depth: int = Field(default=2, ge=1)
    retry_prompt_cached: bool = Field(
        default=False,
        description="a retry resends its call's prompt, whose full blocks an earlier execution "
        "of the call left in the prefix cache (held, or freed and not yet evicted) are hits",
    )

    @model_validator(mode="after")
    def _seqs_fit(self) -> EngineSpec:
        if self.max_num_seqs > self.max_num_batched_tokens:
            raise ValueError("max_num_seqs must be <= max_num_batched_tokens (as vLLM requires)")
        return self


class MetricsSpec(StrictModel):
    scrape_interval_s: float = Field(default=5.0, gt=0)


class Scenario(StrictModel):
    name: str = Field(min_length=1)
    description: str = ""
    seed: int = 1
    capacity_calls_per_s: float | None = Field(
        default=None, gt=0, description="C^ override; default: the profile's calibrated value"
    )
    overload_phase: str | None = "pulse"
    workload: WorkloadSpec = Field(default_factory=WorkloadSpec)
    client: ClientSpec = Field(default_factory=ClientSpec)
    proxy: ProxySpec = Field(default_factory=ProxySpec)
    engine: EngineSpec = Field(default_factory=EngineSpec)
    metrics: MetricsSpec = Field(default_factory=MetricsSpec)

    @model_validator(mode="after")
    def _overload(self) -> Scenario:
        names = {p.name for p in self.workload.phases}
        if self.overload_phase is not None and self.overload_phase not in names:
            self.overload_phase = None
        return self


# ---- loading ---------------------------------------------------------------------------


def builtin_names() -> list[str]:
    folder = resources.files("relplan.sim") / "scenarios"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def _read_mapping(path: Path, label: str) -> dict[str, Any]:
    text = read_settings(path, "scenario file")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except RecursionError:
            raise InputError(
                "YAML nested too deeply; expected a table of settings", label
            ) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise InputError(
                f"not valid YAML: {getattr(exc, 'problem', exc)}", label, line
            ) from None
    else:
        try:
            data = tomllib.loads(text)
        except RecursionError:
            raise InputError(
                "TOML nested too deeply; expected a table of settings", label
            ) from None
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"line (\d+)", str(exc))
            raise InputError(
                f"not valid TOML: {exc}", label, int(m.group(1)) if m else None
            ) from None
    if not isinstance(data, dict):
        raise InputError("expected a table of scenario settings at the top level", label, 1)
    return data


def load_scenario_data(ref: str) -> tuple[dict[str, Any], str]:
    """Raw settings of a built-in scenario NAME or a scenario FILE, and where they came from."""
    path = Path(ref)
    if path.suffix in (".toml", ".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise InputError(
                f"no such scenario file (built-in scenarios: {', '.join(builtin_names())})", ref
            )
        return _read_mapping(path, ref), str(path)
    if ref not in builtin_names():
        raise InputError(
            f"unknown scenario {ref!r}: expected a scenario file (.toml/.yaml) or one of "
            f"{', '.join(builtin_names())}"
        )
    res = resources.files("relplan.sim") / "scenarios" / f"{ref}.toml"
    data = tomllib.loads(res.read_text(encoding="utf-8"))
    return data, f"builtin:{ref}"


def parse_value(raw: str) -> Any:
    if raw.lower() in ("null", "none"):
        return None
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


Scalar = bool | int | float | str | None
# A setting's value: a scalar, or an array of them (a tuple, so an override stays hashable).
Value = Scalar | tuple[Any, ...]


@dataclass(frozen=True)
class Override:
    """One setting of a scenario, set directly: a dotted path into the model (`Scenario`'s
    fields; list items by index, `workload.phases.1.rate_x`) and its typed value. The scenario
    is validated after every override is applied (`validate_scenario`), so a value of the wrong
    type or range is refused there; `check()` refuses a path that names no field at once.

    whatif's controls build these directly; `--set key=value` is parsed into one (`parse`);
    `text()` is the `--set` form both record (run.json `sets`, whatif's `--json`)."""

    path: str
    value: Value

    @classmethod
    def parse(cls, assignment: str) -> Override:
        """`--set key.path=value`: the value read as TOML when it parses as one, as None for
        `null`/`none`, else as a plain string."""
        if "=" not in assignment:
            raise InputError(f"--set {assignment!r}: expected key=value, e.g. proxy.coalesce=true")
        key, raw = assignment.split("=", 1)
        if not all(key.strip().split(".")):
            raise InputError(f"--set {assignment!r}: empty key part in {key!r}")
        value = parse_value(raw)
        return cls(key.strip(), tuple(value) if isinstance(value, list) else value)

    def text(self) -> str:
        v = self.value
        if isinstance(v, tuple):
            return f"{self.path}={list(v)}"
        if isinstance(v, bool):
            return f"{self.path}={'true' if v else 'false'}"
        if isinstance(v, str):
            return f'{self.path}="{v}"'
        return f"{self.path}={v}"

    def check(self) -> Override:
        """This override, when its path names a setting of `Scenario` (else ValueError)."""
        model: Any = Scenario
        for part in self.path.split("."):
            if model is None:
                raise ValueError(f"{self.path}: {part!r} is below a setting, not a table")
            if isinstance(model, list):
                if not part.isdigit():
                    raise ValueError(f"{self.path}: {part!r} is not a list index")
                model = model[0]
                continue
            field = model.model_fields.get(part)
            if field is None:
                raise ValueError(f"{self.path}: {model.__name__} has no setting {part!r}")
            model = _field_model(field.annotation)
        return self


def _field_model(annotation: Any) -> Any:
    """The model a field holds (a list of models as a one-item list), or None for a value."""
    import typing

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is list:
        inner = _field_model(args[0]) if args else None
        return [inner] if inner is not None else None
    if isinstance(annotation, type) and issubclass(annotation, StrictModel):
        return annotation
    for a in args:
        found = _field_model(a)
        if found is not None:
            return found
    return None


def whole(value: float) -> int | float:
    """A float as `--set` wrote it: 6 significant digits (`%g`), a whole number as an int; the
    rounding whatif's controls have always applied to their sizes, kept so the replays hold."""
    rounded = float(f"{value:g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 1e15 else rounded


def apply_set(data: dict[str, Any], assignment: str) -> None:
    """Apply one `key.path=value` override, as `--set` gives it, to raw scenario settings."""
    apply_override(data, Override.parse(assignment), assignment)


def apply_override(data: dict[str, Any], ov: Override, said: str | None = None) -> None:
    """Set one override in raw scenario settings, in place (tables made as needed)."""
    assignment = ov.text() if said is None else said
    parts = ov.path.split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        nxt_is_index = parts[i + 1].isdigit()
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise InputError(f"--set {assignment!r}: no list item {part!r}")
            node = node[int(part)]
            continue
        if part not in node or node[part] is None:
            if part == "phases" and "phases" not in node:
                node[part] = [dict(p) for p in REFERENCE_PHASES]
            else:
                node[part] = [] if nxt_is_index else {}
        node = node[part]
    last = parts[-1]
    value = list(ov.value) if isinstance(ov.value, tuple) else ov.value
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise InputError(f"--set {assignment!r}: no list item {last!r}")
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise InputError(f"--set {assignment!r}: {'.'.join(parts[:-1])} is not a table")


def validate_scenario(data: dict[str, Any], label: str) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"])
            lines.append(f"{loc}: {err['msg']}")
        raise InputError("invalid scenario: " + "; ".join(lines), label) from None


def apply_all(data: dict[str, Any], sets: Sequence[str | Override]) -> None:
    """`--set` strings (parsed) and typed overrides, in order, through the same path."""
    for s in sets:
        if isinstance(s, Override):
            apply_override(data, s)
        else:
            apply_set(data, s)


def load_scenario(
    ref: str, sets: Sequence[str | Override] | None = None, seed: int | None = None
) -> Scenario:
    data, label = load_scenario_data(ref)
    apply_all(data, sets or [])
    if seed is not None:
        data["seed"] = seed
    return validate_scenario(data, label)
