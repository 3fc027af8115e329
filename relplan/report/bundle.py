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
from pathlib import Path

import vl_convert

from relplan import caches

SNIPPET = "window.vegaEmbed=vegaEmbed;window.vega=vega;window.vegaLite=vegaLite;"
_HEADER = "// relplan vega bundle sha256="


def cache_path(vl_version: str) -> Path:
    vlc = str(getattr(vl_convert, "__version__", "unknown"))
    key = hashlib.sha256(f"{vlc}|{vl_version}|{SNIPPET}".encode()).hexdigest()
    return caches.root() / f"vega-bundle-{vlc}-vl{vl_version}-{key[:12]}.js"


def read_cached(path: Path) -> str | None:
    """The cached bundle, or None when it is absent or fails its checksum."""
    return caches.read_checked(path, _HEADER)


def write_cached(path: Path, js: str) -> None:
    """Write atomically (a temporary file renamed into place); give up quietly on OSError."""
    caches.write_checked(path, js, _HEADER)


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
