-- Engine records (event, step and stats) from JSON Lines, typed by DuckDB's JSON reader: the fast
-- path.
-- Explicit column types, no sampling-based inference; numbers are read as JSON and converted
-- by rp_fast_num (ingest/macros.sql), which raises on a boolean or any other non-number. A
-- record this reader cannot type (an RFC 3339 time, a malformed line, a string where a number
-- belongs, `true` where a number belongs) makes DuckDB raise; the
-- driver then re-reads the file line by line (ingest/engine_read_jsonl_lines.sql), which names
-- the line. `ln` is the record's ordinal; the driver keeps it only when the record count equals
-- the file's line count (no blank lines), else it re-reads the file line by line too.
-- Empty strings become NULL (an empty id is a missing id).
-- params: path, source_id
insert into stage_engine
select
    $source_id, null, null, null, 'canonical',
    nullif(type, ''), rp_fast_num(t), nullif(execution_id, ''), nullif(event, ''), rp_fast_num(prompt_tokens), nullif(replica, ''), rp_fast_num(step),
    rp_fast_num(t_issue), rp_fast_num(t_done), rp_fast_num(prompt_computed), rp_fast_num(prompt_cached), rp_fast_num(decode_tokens), rp_fast_num(num_running), rp_fast_num(num_waiting),
    rp_fast_num(num_batched_tokens), rp_fast_num(kv_usage), rp_fast_num(elapsed_ms),
    rp_fast_num(num_preempted), rp_fast_num(prefix_queries), rp_fast_num(prefix_hits),
    nullif(finish_reason, ''), rp_fast_num(output_tokens), rp_fast_num(cached_tokens),
    rp_fast_num(preemptions), rp_fast_num(max_tokens)
from read_json(
    $path, format = 'newline_delimited', records = true, maximum_object_size = 16777216,
    columns = {
        type: 'VARCHAR', t: 'JSON', execution_id: 'VARCHAR', event: 'VARCHAR',
        prompt_tokens: 'JSON', replica: 'VARCHAR', step: 'JSON', t_issue: 'JSON',
        t_done: 'JSON', prompt_computed: 'JSON', prompt_cached: 'JSON',
        decode_tokens: 'JSON', num_running: 'JSON', num_waiting: 'JSON',
        num_batched_tokens: 'JSON', kv_usage: 'JSON', elapsed_ms: 'JSON',
        num_preempted: 'JSON', prefix_queries: 'JSON', prefix_hits: 'JSON',
        finish_reason: 'VARCHAR', output_tokens: 'JSON', cached_tokens: 'JSON',
        preemptions: 'JSON', max_tokens: 'JSON'
    }
)
