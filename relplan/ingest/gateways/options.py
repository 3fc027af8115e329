"""The input options several gateway formats read, declared once; each format that reads one
names it in its adapter's `options` (relplan/ingest/adapter.InputOption)."""

from __future__ import annotations

from relplan.ingest.adapter import InputOption

CALL_KEY = InputOption[str | None](
    field="call_key",
    type=str,
    default=None,
    metavar="HEADER",
    help="Gateway logs without a per-call key: the header the caller sets per call"
    " (Idempotency-Key, X-Request-Id); its lines are the tries of one call.",
)
ATTEMPT_FIELD = InputOption[str | None](
    field="attempt_field",
    type=str,
    default=None,
    metavar="FIELD",
    help="Gateway logs: the field giving the attempt number (x-stainless-retry-count).",
)
LOG_FORMAT = InputOption[str | None](
    field="log_format",
    type=str,
    default=None,
    flags=("--log-format", "--nginx-format"),
    metavar="STRING",
    help="The access log's format string: nginx `log_format` ($remote_addr ..., or an"
    " nginx.conf to read it from) or Envoy's (%START_TIME% ...).",
)
