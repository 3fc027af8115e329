"""Recognising gateway logs and load-test results by their content (called by detect.py).

Formats (all kind proxy): envoy_text (Envoy's default or Istio's text access log), nginx
(ingress-nginx upstreaminfo), kong (http-log/file-log JSON), litellm (SpendLogs rows or
StandardLoggingPayload), guidellm (benchmarks.json), vllm_bench (`vllm bench serve`
results), mapped (any log with a TOML mapping file; chosen by the mapping, never detected).
"""

from __future__ import annotations

import re
from typing import Any

from relplan.ingest.base import IngestOptions
from relplan.ingest.gateway_envoy_text import formats as envoy_formats
from relplan.ingest.gateway_envoy_text import looks_like_envoy_text
from relplan.ingest.gateway_litellm import PAYLOAD_KEYS, SPEND_KEYS
from relplan.ingest.gateway_nginx import given_formats, is_json_template, looks_like_nginx
from relplan.ingest.gateway_nginx_json import keys_look_like_nginx
from relplan.ingest.loadtest_guidellm import is_guidellm
from relplan.ingest.loadtest_vllm_bench import is_bench

GATEWAY_FORMATS = (
    "envoy_text",
    "nginx",
    "nginx_json",
    "kong",
    "litellm",
    "mapped",
    "guidellm",
    "vllm_bench",
)
_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
# Loose signatures, so that lines written with another format string are still recognised
# (the format itself comes from IngestOptions.log_format when the file is read).
_ENVOY_LOOSE = re.compile(r'^\[[0-9T:.\-+Z]+\] "[A-Z]+ ')
_NGINX_LOOSE = re.compile(r"\[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]")


def from_keys(keys: set[str]) -> str | None:
    """The format of JSON records with these top-level keys, if one of ours."""
    if {"tries", "started_at"} <= keys or {"started_at", "latencies", "upstream_uri"} <= keys:
        return "kong"
    if keys >= SPEND_KEYS or keys >= PAYLOAD_KEYS:
        return "litellm"
    if is_bench(keys):
        return "vllm_bench"
    if "benchmarks" in keys:
        return "guidellm"
    if keys_look_like_nginx(keys):
        return "nginx_json"
    return None


def from_document(doc: Any) -> str | None:
    """The format of a whole JSON document (pretty-printed object, array of objects)."""
    if is_guidellm(doc):
        return "guidellm"
    first = doc[0] if isinstance(doc, list) and doc else doc
    return from_keys(set(first)) if isinstance(first, dict) else None


def from_text(first_line: str) -> str | None:
    """The format of a text log by its first line."""
    if looks_like_envoy_text(first_line) or _ENVOY_LOOSE.match(first_line):
        return "envoy_text"
    if looks_like_nginx(first_line) or _NGINX_LOOSE.search(first_line):
        return "nginx"
    if first_line.startswith(tuple(f'"{m} ' for m in _METHODS)) and any(
        f.headless and f.headless.match(first_line) for f in envoy_formats(IngestOptions())
    ):
        return "envoy_text"  # pasted without its [START_TIME]: lines are refused with that reason
    return None


def from_log_format(log_format: str | None) -> str | None:
    """The format a given format string is written for: nginx's `$variable` or Envoy's
    `%COMMAND%` syntax (the file is then read with it, whatever its first line looks like)."""
    if not log_format:
        return None
    if re.search(r"%[A-Z_]+(\([^)]*\))?%", log_format):
        return "envoy_text"
    fmts = given_formats(log_format)  # a format string, or an nginx.conf's log_formats
    if "$" not in "".join(fmts):
        return None
    json_ = {is_json_template(f) for f in fmts}
    return None if len(json_) > 1 else "nginx_json" if json_ == {True} else "nginx"
