"""Vega-Lite specs as plain dicts, through the small part of Altair's API the report's charts use.

The sections (relplan/report/sections/) build their charts with `Chart(...).mark_line(...)
.encode(...)`, `layer`, `vconcat` and the channel classes below, named as in Altair and
imported as `alt`. `to_dict` gives the dict Altair 6.3's `to_dict(validate=False)` gives for
the same calls: the same keys in the same order (a unit chart's `data`, `mark`, `encoding`,
`transform`, then `height`, `width`; a mark's `type` first, then its properties sorted; a
channel's and every other object's properties sorted, as Altair's generated classes list
them; Altair's default theme as the top level's `config`; the `$schema` of Vega-Lite 6.4.1,
the version relplan/report/html.py's bundle draws). tests/test_report_charts_spec.py checks
that against specs Altair made.

Why not Altair itself: importing it costs about a third of a CPU second, and drawing the
report's charts with it another 0.2-0.3 s (its `from_dict` and shorthand parsing), where
these dicts cost a few milliseconds. Altair stays a dependency: `validate=True` checks a spec
against the Vega-Lite JSON schema Altair ships (the tests do), and `relplan compare` draws
with it.

Shorthand: `field:T|Q|N|O` only (a type is required: no type is inferred from data). Only
what the sections use is here; a new mark, channel or transform is added beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "SCHEMA_URL",
    "X2",
    "Axis",
    "Chart",
    "Color",
    "Data",
    "Detail",
    "Legend",
    "NamedData",
    "Order",
    "OverlayMarkDef",
    "Scale",
    "StrokeDash",
    "Text",
    "Tooltip",
    "TopLevelMixin",
    "VConcatChart",
    "X",
    "Y",
    "YValue",
    "layer",
    "vconcat",
]

SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
# Altair's default theme: the top level's `config`, first in the spec.
_THEME_CONFIG: dict[str, Any] = {"view": {"continuousWidth": 300, "continuousHeight": 300}}
_TYPES = {"T": "temporal", "Q": "quantitative", "N": "nominal", "O": "ordinal"}


def _plain(value: Any) -> Any:
    """An object of this module, a list or a dict -> JSON values (objects' keys sorted)."""
    if isinstance(value, _Object):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _Object:
    """A Vega-Lite object given by keyword properties: its dict lists them sorted."""

    def __init__(self, **props: Any) -> None:
        self._props = props

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(self._props[k]) for k in sorted(self._props)}


class Scale(_Object):
    pass


class Axis(_Object):
    pass


class Legend(_Object):
    pass


class OverlayMarkDef(_Object):
    pass


class Data(_Object):
    """Inline rows: `{"values": [...]}`."""

    def __init__(self, values: Sequence[dict[str, Any]]) -> None:
        super().__init__(values=list(values))


class NamedData(_Object):
    """A dataset of the spec's top-level `datasets`, by name."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name)


class _Channel(_Object):
    """An encoding channel: a `field:TYPE` shorthand and properties."""

    keeps_type = True

    def __init__(self, shorthand: str, **props: Any) -> None:
        field, sep, code = shorthand.rpartition(":")
        if not sep or code not in _TYPES or not field:
            raise ValueError(f"a channel needs 'field:T|Q|N|O', not {shorthand!r}")
        parsed: dict[str, Any] = {"field": field}
        if self.keeps_type:
            parsed["type"] = _TYPES[code]
        super().__init__(**parsed, **props)


class X(_Channel):
    pass


class Y(_Channel):
    pass


class X2(_Channel):
    """A range's end: Vega-Lite takes its type from `x`, so the shorthand's is dropped."""

    keeps_type = False


class Color(_Channel):
    pass


class StrokeDash(_Channel):
    pass


class Tooltip(_Channel):
    pass


class Detail(_Channel):
    pass


class Text(_Channel):
    pass


class Order(_Channel):
    pass


class YValue(_Object):
    """A constant y: `{"value": v}`."""

    def __init__(self, value: Any) -> None:
        super().__init__(value=value)


# The channel a shorthand string given to `encode` becomes.
_CHANNELS: dict[str, type[_Channel]] = {
    "x": X,
    "y": Y,
    "x2": X2,
    "color": Color,
    "strokeDash": StrokeDash,
    "tooltip": Tooltip,
    "detail": Detail,
    "text": Text,
    "order": Order,
}


def _channel(name: str, value: Any) -> Any:
    if isinstance(value, str):
        return _CHANNELS[name](value)
    if isinstance(value, list):
        return [_channel(name, v) for v in value]
    return value


class TopLevelMixin:
    """A chart: `to_dict` gives its Vega-Lite spec."""

    def _data_of(self) -> Data | NamedData | None:
        """The data this chart names at its own level (None: its parts name theirs)."""
        raise NotImplementedError

    def _body(self, with_data: bool = True) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self, validate: bool = False) -> dict[str, Any]:
        """The spec at the top level: Altair's theme `config` first, `$schema` last. With
        `validate`, checked against the Vega-Lite JSON schema (jsonschema, from Altair)."""
        spec = {"config": _plain(_THEME_CONFIG), **self._body(), "$schema": SCHEMA_URL}
        if validate:
            from altair.vegalite.v6.schema.core import Root

            Root.validate(spec)
        return spec


def _sized(props: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(props[k]) for k in sorted(props)}


class Chart(TopLevelMixin):
    """One mark over one dataset. Every method returns a new chart."""

    def __init__(self, data: Data | NamedData) -> None:
        self._data = data
        self._mark: dict[str, Any] | None = None
        self._encoding: dict[str, Any] = {}
        self._transform: list[dict[str, Any]] = []
        self._props: dict[str, Any] = {}

    def _copy(self) -> Chart:
        new = Chart(self._data)
        new._mark = self._mark
        new._encoding = dict(self._encoding)
        new._transform = list(self._transform)
        new._props = dict(self._props)
        return new

    def _marked(self, kind: str, props: dict[str, Any]) -> Chart:
        new = self._copy()
        new._mark = {"type": kind, **{k: _plain(props[k]) for k in sorted(props)}}
        return new

    def mark_bar(self, **props: Any) -> Chart:
        return self._marked("bar", props)

    def mark_line(self, **props: Any) -> Chart:
        return self._marked("line", props)

    def mark_point(self, **props: Any) -> Chart:
        return self._marked("point", props)

    def mark_rect(self, **props: Any) -> Chart:
        return self._marked("rect", props)

    def mark_rule(self, **props: Any) -> Chart:
        return self._marked("rule", props)

    def mark_text(self, **props: Any) -> Chart:
        return self._marked("text", props)

    def mark_tick(self, **props: Any) -> Chart:
        return self._marked("tick", props)

    def encode(self, **channels: Any) -> Chart:
        new = self._copy()
        new._encoding.update({k: _channel(k, v) for k, v in channels.items()})
        return new

    def transform_window(self, **windows: str) -> Chart:
        """`name="op()"` -> one window field each (an op without a field)."""
        new = self._copy()
        fields = []
        for name, call in windows.items():
            if not call.endswith("()"):
                raise ValueError(f"a window op is written 'op()', not {call!r}")
            fields.append({"op": call[:-2], "field": "", "as": name})
        new._transform.append({"window": fields})
        return new

    def transform_filter(self, expr: str) -> Chart:
        new = self._copy()
        new._transform.append({"filter": expr})
        return new

    def properties(self, **props: Any) -> Chart:
        new = self._copy()
        new._props.update(props)
        return new

    def _data_of(self) -> Data | NamedData | None:
        return self._data

    def _body(self, with_data: bool = True) -> dict[str, Any]:
        if self._mark is None:
            raise ValueError("a chart needs a mark")
        body: dict[str, Any] = {"data": self._data.to_dict()} if with_data else {}
        body["mark"] = self._mark
        body["encoding"] = {k: _plain(self._encoding[k]) for k in sorted(self._encoding)}
        if self._transform:
            body["transform"] = self._transform
        return {**body, **_sized(self._props)}


def _shared_data(charts: Sequence[TopLevelMixin]) -> Data | NamedData | None:
    """The data every part names, when it is one and the same object: Altair then names it
    once, on the layer or the concatenation, and not on its parts."""
    first = charts[0]._data_of() if charts else None
    if first is not None and all(c._data_of() is first for c in charts):
        return first
    return None


class LayerChart(TopLevelMixin):
    def __init__(self, charts: Sequence[TopLevelMixin], props: dict[str, Any]) -> None:
        self._charts = list(charts)
        self._props = props
        self._data = _shared_data(self._charts)

    def properties(self, **props: Any) -> LayerChart:
        return LayerChart(self._charts, {**self._props, **props})

    def _data_of(self) -> Data | NamedData | None:
        return self._data

    def _body(self, with_data: bool = True) -> dict[str, Any]:
        shared = self._data is not None
        body: dict[str, Any] = {"layer": [c._body(not shared) for c in self._charts]}
        if shared and with_data and self._data is not None:
            body["data"] = self._data.to_dict()
        return {**body, **_sized(self._props)}


class VConcatChart(TopLevelMixin):
    def __init__(self, charts: Sequence[TopLevelMixin], scales: dict[str, str]) -> None:
        self._charts = list(charts)
        self._scales = scales
        self._data = _shared_data(self._charts)

    def resolve_scale(self, **scales: str) -> VConcatChart:
        return VConcatChart(self._charts, {**self._scales, **scales})

    def _data_of(self) -> Data | NamedData | None:
        return self._data

    def _body(self, with_data: bool = True) -> dict[str, Any]:
        shared = self._data is not None
        body: dict[str, Any] = {"vconcat": [c._body(not shared) for c in self._charts]}
        if shared and with_data and self._data is not None:
            body["data"] = self._data.to_dict()
        if self._scales:
            body["resolve"] = {"scale": {k: self._scales[k] for k in sorted(self._scales)}}
        return body


def layer(*charts: TopLevelMixin) -> LayerChart:
    return LayerChart(charts, {})


def vconcat(*charts: TopLevelMixin) -> VConcatChart:
    return VConcatChart(charts, {})
