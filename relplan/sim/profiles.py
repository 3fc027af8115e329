"""Engine profiles: the step cost model of one engine setup, with its provenance, plus the
capacity C^ calibrated for each configuration run on it.

A profile is `relplan/sim/profiles/NAME.toml` (or any TOML file path): the model name, the
cost coefficients, the `speed` factor and a `[provenance]` table saying where each figure came
from. Calibrated capacities live beside it in `NAME.capacity.json`, written by
`relplan simulate calibrate --write`, one entry per configuration fingerprint: a short hash of
what determines capacity (cost model and speed, engine settings except the waiting-queue cap,
and the workload's length distribution or trace). A scenario run looks its C^ up there, so a
normal run never recalibrates; a configuration without an entry must be calibrated first or
given `capacity_calls_per_s`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError

from relplan.errors import InputError
from relplan.models import StrictModel
from relplan.settings_file import read_settings
from relplan.sim.costmodel import CostModel

if TYPE_CHECKING:
    from relplan.sim.scenario import Scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class CostSpec(StrictModel):
    a_ms: float = Field(ge=0)
    b_ms_per_token: float = Field(ge=0)
    c_ms_per_pair: float = Field(ge=0)
    f_ms_per_context_token: float = Field(ge=0)
    b_ms_per_decode_seq: float | None = Field(
        default=None, ge=0, description="per decode sequence; default b_ms_per_token"
    )
    wave_seqs: int = Field(
        default=0, ge=0, description="decode attention costs f only past this many sequences"
    )
    floor_ms: float = Field(default=0.0, ge=0, description="memory floor: weights read once")
    floor_ms_per_seq: float = Field(default=0.0, ge=0)
    floor_ms_per_context_token: float = Field(
        default=0.0, ge=0, description="memory floor: KV cache read per decode context token"
    )


class Profile(StrictModel):
    name: str
    description: str = ""
    model_name: str
    hardware: str = ""
    speed: float = Field(gt=0)
    cost: CostSpec
    provenance: dict[str, str] = Field(default_factory=dict)

    def cost_model(self) -> CostModel:
        c = self.cost
        return CostModel(
            a_ms=c.a_ms,
            b_ms_per_token=c.b_ms_per_token,
            c_ms_per_pair=c.c_ms_per_pair,
            f_ms_per_context_token=c.f_ms_per_context_token,
            speed=self.speed,
            b_ms_per_decode_seq=c.b_ms_per_decode_seq,
            wave_seqs=c.wave_seqs,
            floor_ms=c.floor_ms,
            floor_ms_per_seq=c.floor_ms_per_seq,
            floor_ms_per_context_token=c.floor_ms_per_context_token,
        )


class CalibratedCapacity(StrictModel):
    config: str = Field(description="configuration fingerprint")
    label: str
    capacity_calls_per_s: float
    saturated_completion_calls_per_s: float | None = None
    seeds: list[int]
    per_seed: list[float | None]
    stage_seconds: float
    stage_step_calls_per_s: float
    start_calls_per_s: float | None = None
    settings: dict[str, Any] = Field(default_factory=dict)


class CapacityTable(StrictModel):
    profile: str
    entries: list[CalibratedCapacity] = Field(default_factory=list)


def _profile_path(ref: str) -> tuple[Path | None, str]:
    p = Path(ref)
    if p.suffix == ".toml":
        return p, ref
    return None, ref


def load_profile(ref: str) -> tuple[Profile, str]:
    """A built-in profile NAME or a profile FILE (.toml); returns it and where it came from."""
    path, _ = _profile_path(ref)
    if path is not None:
        text = read_settings(path, "engine profile")
        label = str(path)
    else:
        res = resources.files("relplan.sim") / "profiles" / f"{ref}.toml"
        if not res.is_file():
            raise InputError(f"unknown engine profile {ref!r}: expected a .toml file or h100-7b")
        text = res.read_text(encoding="utf-8")
        label = f"builtin:{ref}"
    try:
        data = tomllib.loads(text)
        return Profile.model_validate(data), label
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", label) from None
    except RecursionError:
        raise InputError("TOML nested too deeply; expected an engine profile", label) from None
    except ValidationError as exc:
        msgs = "; ".join(".".join(str(x) for x in e["loc"]) + ": " + e["msg"] for e in exc.errors())
        raise InputError(f"invalid engine profile: {msgs}", label) from None


def capacity_path(ref: str) -> Path:
    path, _ = _profile_path(ref)
    if path is not None:
        return path.with_suffix(".capacity.json")
    return Path(str(resources.files("relplan.sim") / "profiles" / f"{ref}.capacity.json"))


def load_capacities(ref: str) -> CapacityTable:
    path = capacity_path(ref)
    if not path.is_file():
        return CapacityTable(profile=ref)
    try:
        return CapacityTable.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise InputError(f"invalid capacity table: {exc.errors()[0]['msg']}", str(path)) from None


def save_capacity(ref: str, entry: CalibratedCapacity) -> Path:
    table = load_capacities(ref)
    table.entries = [e for e in table.entries if e.config != entry.config] + [entry]
    table.entries.sort(key=lambda e: e.label)
    path = capacity_path(ref)
    try:
        path.write_text(table.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot store the calibration ({exc.strerror}): copy the profile to a .toml file "
            "of your own and calibrate that",
            str(path),
        ) from None
    return path


def _trace_digest(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise InputError(f"cannot read trace: {exc.strerror}", path) from None
    return h.hexdigest()[:16]


def capacity_settings(scn: Scenario, profile: Profile) -> dict[str, Any]:
    """What determines C^ for a scenario: cost model, engine settings, workload lengths (not
    the admission limits, nor `retry_prompt_cached`: calibration sends no retries)."""
    eng = scn.engine.model_dump(
        exclude={
            "waiting_cap",
            "max_num_queued_reqs",
            "max_num_queued_tokens",
            "profile",
            "retry_prompt_cached",
        }
    )
    wl = scn.workload.model_dump(exclude={"phases", "trace"})
    if scn.workload.trace is not None:
        wl = {
            "prefix_tokens": scn.workload.prefix_tokens,
            "max_tokens": scn.workload.max_tokens,
            "trace_sha256": _trace_digest(scn.workload.trace.path),
            "trace_format": scn.workload.trace.format,
        }
    return {
        "cost": profile.cost.model_dump(),
        "speed": profile.speed,
        "engine": eng,
        "workload": wl,
    }


def fingerprint(settings: dict[str, Any]) -> str:
    blob = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def lookup_capacity(scn: Scenario, profile: Profile) -> tuple[float | None, str]:
    """The scenario's C^ and where it came from ("scenario", "profile:<fp>" or "missing:<fp>")."""
    if scn.capacity_calls_per_s is not None:
        return scn.capacity_calls_per_s, "scenario"
    fp = fingerprint(capacity_settings(scn, profile))
    for e in load_capacities(scn.engine.profile).entries:
        if e.config == fp:
            return e.capacity_calls_per_s, f"profile:{fp}"
    return None, f"missing:{fp}"
