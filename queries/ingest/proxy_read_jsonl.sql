-- Proxy attempts from JSON Lines, typed by DuckDB's JSON reader: the fast path.
-- Explicit column types, no sampling-based inference. A record this reader cannot type (an
-- RFC 3339 time, a malformed line, a string where a number belongs) makes DuckDB raise; the
-- driver then re-reads the file line by line (ingest/proxy_read_jsonl_lines.sql), which names
-- the line. `ln` is the record's ordinal; the driver keeps it only when the record count equals
-- the file's line count (no blank lines), else it re-reads the file line by line too.
-- Empty strings become NULL (an empty id is a missing id).
-- params: path, source_id
insert into stage_proxy
select
    $source_id, null, null, null, 'canonical',
    nullif(call_id, ''), attempt, t_planned, t_sent, t_end, nullif(outcome, ''), nullif(execution_id, ''),
    attached, t_cancel, status, nullif(model, ''), nullif(replica, ''), prompt_tokens, max_tokens
from read_json(
    $path, format = 'newline_delimited', records = true, maximum_object_size = 16777216,
    columns = {
        call_id: 'VARCHAR', attempt: 'DOUBLE', t_planned: 'DOUBLE', t_sent: 'DOUBLE',
        t_end: 'DOUBLE', outcome: 'VARCHAR', execution_id: 'VARCHAR', attached: 'BOOLEAN',
        t_cancel: 'DOUBLE', status: 'DOUBLE', model: 'VARCHAR', replica: 'VARCHAR',
        prompt_tokens: 'DOUBLE', max_tokens: 'DOUBLE'
    }
)
