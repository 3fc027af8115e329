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
# What a file is, by its first bytes, then by its name: a kind relplan/text/ingest.py words
# (FILE_KINDS there).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF8", "gif"),
    (b"%PDF", "pdf"),
    (b"PK\x03\x04", "zip"),
    (_ZSTD, "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ", "xz"),
)
_NAMED = {
    ".md": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".svg": "svg",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".py": "python",
    ".sh": "shell",
    ".duckdb": "duckdb",
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
        return say("otel_proto_file")
    return None


def describe(name: str, head: bytes) -> str:
    """What a file skipped by its name is, as far as its name and first bytes tell."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return say("file_kind", kind=kind, suffix="")
    lower = name.lower()
    suffix = lower[lower.rfind(".") :] if "." in lower else ""
    if suffix in _NAMED:
        return say("file_kind", kind=_NAMED[suffix], suffix=suffix)
    if lower.startswith(("readme", "license", "changelog", "notes")):
        return say("file_kind", kind="text", suffix=suffix)
    return say("file_kind", kind=None, suffix=suffix)


def not_an_input(path: Path, head: bytes | None = None) -> str:
    """The ingest report's reason for a file that is no known input."""
    if head is None:
        try:
            with path.open("rb") as f:
                head = f.read(4096)
        except OSError:
            head = b""
    return say("not_a_known_input", what=recognise(head) or describe(path.name, head))
