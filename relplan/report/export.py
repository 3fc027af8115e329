"""Files out: the HTML page, each chart as PNG or SVG (vl-convert, no browser), the JSON model.

This is the one place the report writes files. Every file is written to a temporary name in
its target directory and renamed into place, so an interrupted run leaves no half-written
page behind.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from relplan.errors import InputError

# PNG scale: 2x keeps text sharp when pasted into an incident document.
PNG_SCALE = 2.0


def write_atomic(path: Path, content: str | bytes) -> Path:
    """Write `content` to `path` via a temporary file in the same directory, then rename.

    The file gets the usual permissions (umask applied), like any file the user writes.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = tmp.open("xb")
    except OSError as exc:
        raise InputError(f"cannot write here: {exc.strerror}", str(path)) from exc
    try:
        with fh:
            fh.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write here: {exc.strerror}", str(path)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def chart_svg(spec: dict[str, Any]) -> str:
    import vl_convert  # here: writing the page alone (a cached one too) needs no vl-convert

    from relplan.report.html import VL_VERSION

    svg: str = vl_convert.vegalite_to_svg(spec, vl_version=VL_VERSION)
    return svg


def chart_png(spec: dict[str, Any]) -> bytes:
    import vl_convert

    from relplan.report.html import VL_VERSION

    png: bytes = vl_convert.vegalite_to_png(spec, vl_version=VL_VERSION, scale=PNG_SCALE)
    return png


def export_images(specs: dict[str, dict[str, Any]], out_dir: Path, fmt: str) -> list[Path]:
    """One file per chart, named after its section (`amplification.png`, ...). Returns the paths."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown image format {fmt!r}")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError("exists and is not a directory", str(out_dir))
    written = []
    for name, spec in specs.items():
        content: str | bytes = chart_png(spec) if fmt == "png" else chart_svg(spec)
        written.append(write_atomic(out_dir / f"{name}.{fmt}", content))
    return written
