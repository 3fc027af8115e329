"""The Vega + Vega-Lite + vega-embed script every report inlines: shipped, else built once per
machine.

vl-convert assembles the bundle from its embedded sources on every call, which takes about
1.1-1.5 CPU seconds (a sixth of a first `relplan report` of the sample). The bundle depends only on vl-convert's version, the Vega-Lite version and
the snippet, and vl-convert builds it byte for byte the same each time, so:

- relplan ships the bundle vl-convert builds for the version it was developed with, gzipped,
  in `relplan/report/vendor/` (named like the cache file below, with `.gz`). It is used when
  the installed vl-convert and the Vega-Lite version are the ones it was built for; the file
  holds the same header line as a cached file (the SHA-256 of the rest), checked on every read.
  After upgrading vl-convert, regenerate it with `python -m relplan.report.bundle --write`
  (it replaces the shipped file; tests/test_report_bundle.py fails while the installed
  vl-convert's build differs from the shipped file);
- otherwise (another vl-convert) the bundle is built once and cached on disk under that key,
  in `$RELPLAN_CACHE_DIR` (default `$XDG_CACHE_HOME/relplan`, else `~/.cache/relplan`). A
  cached file starts with a line holding the SHA-256 of the rest; a file that fails that check
  (truncated by a full disk, edited) is rebuilt, never inlined. When the folder cannot be
  written the bundle is built in memory each time: slower, same page.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
import zlib
from pathlib import Path

import vl_convert

from relplan import caches

VL_VERSION = "6.4"  # the Vega-Lite version the charts are written for (Altair's schema)
SNIPPET = "window.vegaEmbed=vegaEmbed;window.vega=vega;window.vegaLite=vegaLite;"
_HEADER = "// relplan vega bundle sha256="
VENDOR = Path(__file__).resolve().parent / "vendor"


def _file_name(vl_version: str) -> str:
    vlc = str(getattr(vl_convert, "__version__", "unknown"))
    key = hashlib.sha256(f"{vlc}|{vl_version}|{SNIPPET}".encode()).hexdigest()
    return f"vega-bundle-{vlc}-vl{vl_version}-{key[:12]}.js"


def cache_path(vl_version: str) -> Path:
    return caches.root() / _file_name(vl_version)


def shipped_path(vl_version: str) -> Path:
    """Where relplan ships the bundle of the installed vl-convert (present only for the
    version it was built with)."""
    return VENDOR / (_file_name(vl_version) + ".gz")


def read_shipped(vl_version: str) -> str | None:
    """The shipped bundle for this vl-convert and Vega-Lite version, or None when relplan ships
    none for them or the file fails its checksum."""
    try:
        text = gzip.decompress(shipped_path(vl_version).read_bytes()).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        return None
    head, sep, body = text.partition("\n")
    if not sep or head != _HEADER + hashlib.sha256(body.encode("utf-8")).hexdigest():
        return None
    return body


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
    """The shipped bundle, else the cached one, else built and cached."""
    js = read_shipped(vl_version)
    if js is not None:
        return js
    path = cache_path(vl_version)
    js = read_cached(path)
    if js is None:
        js = build(vl_version)
        write_cached(path, js)
    return js


def write_shipped(vl_version: str) -> Path:
    """Build the bundle with the installed vl-convert and ship it (gzip without a time stamp,
    so the same build gives the same bytes), replacing the bundles shipped for other
    versions."""
    js = build(vl_version)
    text = _HEADER + hashlib.sha256(js.encode("utf-8")).hexdigest() + "\n" + js
    target = shipped_path(vl_version)
    VENDOR.mkdir(exist_ok=True)
    for old in VENDOR.glob("vega-bundle-*.js.gz"):
        if old != target:
            old.unlink()
    target.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return target


def main(argv: list[str] | None = None) -> int:
    """`python -m relplan.report.bundle --write`: regenerate the shipped bundle."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["--write"]:
        print("usage: python -m relplan.report.bundle --write", file=sys.stderr)
        return 2
    print(write_shipped(VL_VERSION))
    return 0


if __name__ == "__main__":
    sys.exit(main())
