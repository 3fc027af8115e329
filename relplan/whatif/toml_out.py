"""A small TOML writer for the scenario and profile files `relplan whatif fit` writes.

It covers what those files hold: tables of strings, numbers, booleans, lists of numbers or
strings, and arrays of tables (`[[workload.phases]]`). Floats are written with `repr`, so a
value reads back exactly; infinity as `inf`.
"""

from __future__ import annotations

import json
import math
from typing import Any


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _emit(data: dict[str, Any], prefix: str, out: list[str]) -> None:
    plain = {
        k: v
        for k, v in data.items()
        if v is not None and not isinstance(v, dict) and not _is_table_list(v)
    }
    for k, v in plain.items():
        out.append(f"{k} = {_value(v)}")
    for k, v in data.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.append("")
            out.append(f"[{name}]")
            _emit(v, f"{name}.", out)
        elif _is_table_list(v):
            for item in v:
                out.append("")
                out.append(f"[[{name}]]")
                _emit(item, f"{name}.", out)


def dump_toml(data: dict[str, Any]) -> str:
    out: list[str] = []
    _emit(data, "", out)
    return "\n".join(out).lstrip("\n") + "\n"
