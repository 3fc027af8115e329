"""The Vega + Vega-Lite + vega-embed script every report inlines, built once per machine.

vl-convert assembles the bundle from its embedded sources on every call, which takes seconds:
most of what `relplan report` used to spend. The bundle depends only on vl-convert's version,
the Vega-Lite version and the snippet, so it is cached on disk under that key, in
`$RELPLAN_CACHE_DIR` (default `$XDG_CACHE_HOME/relplan`, else `~/.cache/relplan`).

A cached file starts with a line holding the SHA-256 of the rest; a file that fails that check
(truncated by a full disk, edited) is rebuilt, never inlined. When the folder cannot be written
the bundle is built in memory each time: slower, same page.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import vl_convert

SNIPPET = "window.vegaEmbed=vegaEmbed;window.vega=vega;window.vegaLite=vegaLite;"
_HEADER = "// relplan vega bundle sha256="


def cache_dir() -> Path:
    if explicit := os.environ.get("RELPLAN_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relplan"


def cache_path(vl_version: str) -> Path:
    vlc = str(getattr(vl_convert, "__version__", "unknown"))
    key = hashlib.sha256(f"{vlc}|{vl_version}|{SNIPPET}".encode()).hexdigest()
    return cache_dir() / f"vega-bundle-{vlc}-vl{vl_version}-{key[:12]}.js"


def _digest(js: str) -> str:
    return hashlib.sha256(js.encode("utf-8")).hexdigest()


def read_cached(path: Path) -> str | None:
    """The cached bundle, or None when it is absent or fails its checksum."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    header, sep, js = text.partition("\n")
    if not sep or header != _HEADER + _digest(js):
        return None
    return js


def write_cached(path: Path, js: str) -> None:
    """Write atomically (a temporary file renamed into place); give up quietly on OSError."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".vega-bundle-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"{_HEADER}{_digest(js)}\n{js}")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


def build(vl_version: str) -> str:
    js: str = vl_convert.javascript_bundle(SNIPPET, vl_version=vl_version)
    return js


def load(vl_version: str) -> str:
    """The bundle from the cache, else built and cached."""
    path = cache_path(vl_version)
    js = read_cached(path)
    if js is None:
        js = build(vl_version)
        write_cached(path, js)
    return js
