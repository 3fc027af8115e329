"""Files that are no relplan input, named for the ingest report (docs/formats.md).

`recognise(head)`: a file relplan knows but does not ingest, with what to do with it
(public workload traces -> `relplan simulate`; the Collector's binary trace files).
`describe(name, head)`: what a file skipped by its name is (an image, a document), for
"skipped FILE: not a known input (...)".
"""

from __future__ import annotations

from pathlib import Path

from relplan.ingest.outcome import say

_ZSTD = b"\x28\xb5\x2f\xfd"
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a zip archive (unpack it first)"),
    (_ZSTD, "a zstd-compressed file (unpack it first)"),
    (b"BZh", "a bzip2-compressed file (unpack it first)"),
    (b"\xfd7zXZ", "an xz-compressed file (unpack it first)"),
)
_NAMED = {
    ".md": "a Markdown document",
    ".rst": "a reStructuredText document",
    ".html": "an HTML page",
    ".htm": "an HTML page",
    ".svg": "an SVG image",
    ".png": "an image",
    ".jpg": "an image",
    ".jpeg": "an image",
    ".yaml": "a YAML file",
    ".yml": "a YAML file",
    ".toml": "a TOML file (a gateway mapping file is passed with --map)",
    ".py": "a Python file",
    ".sh": "a shell script",
    ".duckdb": "a DuckDB database (a relplan workspace is opened with --db)",
}


def _first_line(head: bytes) -> str:
    text = head[:4096].decode("utf-8", errors="replace").lstrip("\ufeff")
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def recognise(head: bytes) -> str | None:
    """What a recognisable foreign file is and what relplan can do with it, else None."""
    first = _first_line(head)
    cols = {c.strip().strip('"') for c in first.split(",")}
    if {"TIMESTAMP", "ContextTokens", "GeneratedTokens"} <= cols:
        return say(
            "workload_trace",
            trace="an Azure LLM inference trace (TIMESTAMP,ContextTokens,GeneratedTokens)",
        )
    if {"Timestamp", "Request tokens", "Response tokens"} <= cols:
        return say(
            "workload_trace", trace="a BurstGPT trace (Timestamp, Request tokens, Response tokens)"
        )
    if first.startswith("{") and all(
        f'"{k}"' in first for k in ("timestamp", "input_length", "output_length")
    ):
        return say(
            "workload_trace", trace="a Mooncake trace (timestamp, input_length, output_length)"
        )
    if len(head) > 8 and (head[4:8] == _ZSTD or (head[4:5] == b"\x0a" and b"\x00" in head[:4])):
        return (
            "an OpenTelemetry Collector file-exporter file in proto format or compressed (a"
            " 4-byte length before each message); relplan reads the exporter's `format: json`"
            " output without compression (docs/formats.md)"
        )
    return None


def describe(name: str, head: bytes) -> str:
    """What a file skipped by its name is, as far as its name and first bytes tell."""
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    lower = name.lower()
    suffix = lower[lower.rfind(".") :] if "." in lower else ""
    if suffix in _NAMED:
        return _NAMED[suffix]
    if lower.startswith(("readme", "license", "changelog", "notes")):
        return "a text document"
    return f"a {suffix} file" if suffix else "a file without a known extension"


def not_an_input(path: Path, head: bytes | None = None) -> str:
    """The ingest report's reason for a file that is no known input."""
    if head is None:
        try:
            with path.open("rb") as f:
                head = f.read(4096)
        except OSError:
            head = b""
    return f"not a known input ({recognise(head) or describe(path.name, head)})"
