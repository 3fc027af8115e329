-- Proxy attempts from JSON Lines, typed by DuckDB's JSON reader: the fast path.
-- Explicit column types, no sampling-based inference; numbers are read as JSON and converted
-- by rp_fast_num (ingest/macros.sql), which raises on a boolean or any other non-number. A
-- record this reader cannot type (an RFC 3339 time, a malformed line, a string where a number
-- belongs, `true` where a number belongs) makes DuckDB raise; the
-- driver then re-reads the file line by line (ingest/proxy_read_jsonl_lines.sql), which names
-- the line. `ln` is the record's ordinal; the driver keeps it only when the record count equals
-- the file's line count (no blank lines), else it re-reads the file line by line too.
-- Empty strings become NULL (an empty id is a missing id).
-- params: path, source_id
insert into stage_proxy
select
    $source_id, null, null, null, 'canonical',
    nullif(call_id, ''), rp_fast_num(attempt), rp_fast_num(t_planned), rp_fast_num(t_sent), rp_fast_num(t_end), nullif(outcome, ''), nullif(execution_id, ''),
    attached, rp_fast_num(t_cancel), rp_fast_num(status), nullif(model, ''), nullif(replica, ''), rp_fast_num(prompt_tokens), rp_fast_num(max_tokens)
from read_json(
    $path, format = 'newline_delimited', records = true, maximum_object_size = 16777216,
    columns = {
        call_id: 'VARCHAR', attempt: 'JSON', t_planned: 'JSON', t_sent: 'JSON',
        t_end: 'JSON', outcome: 'VARCHAR', execution_id: 'VARCHAR', attached: 'BOOLEAN',
        t_cancel: 'JSON', status: 'JSON', model: 'VARCHAR', replica: 'VARCHAR',
        prompt_tokens: 'JSON', max_tokens: 'JSON'
    }
)
