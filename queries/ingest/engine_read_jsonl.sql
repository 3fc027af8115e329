-- Engine records (event, step and stats) from JSON Lines, typed by DuckDB's JSON reader: the fast
-- path.
-- Explicit column types, no sampling-based inference. A record this reader cannot type (an
-- RFC 3339 time, a malformed line, a string where a number belongs) makes DuckDB raise; the
-- driver then re-reads the file line by line (ingest/engine_read_jsonl_lines.sql), which names
-- the line. `ln` is the record's ordinal; the driver keeps it only when the record count equals
-- the file's line count (no blank lines), else it re-reads the file line by line too.
-- Empty strings become NULL (an empty id is a missing id).
-- params: path, source_id
insert into stage_engine
select
    $source_id, null, null, null, 'canonical',
    nullif(type, ''), t, nullif(execution_id, ''), nullif(event, ''), prompt_tokens, nullif(replica, ''), step,
    t_issue, t_done, prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
    num_batched_tokens, kv_usage
from read_json(
    $path, format = 'newline_delimited', records = true, maximum_object_size = 16777216,
    columns = {
        type: 'VARCHAR', t: 'DOUBLE', execution_id: 'VARCHAR', event: 'VARCHAR',
        prompt_tokens: 'DOUBLE', replica: 'VARCHAR', step: 'DOUBLE', t_issue: 'DOUBLE',
        t_done: 'DOUBLE', prompt_computed: 'DOUBLE', prompt_cached: 'DOUBLE',
        decode_tokens: 'DOUBLE', num_running: 'DOUBLE', num_waiting: 'DOUBLE',
        num_batched_tokens: 'DOUBLE', kv_usage: 'DOUBLE'
    }
)
