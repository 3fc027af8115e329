-- Engine records (event, step and stats) from JSON Lines with every number typed as DOUBLE by
-- DuckDB's JSON reader: fail mode's path for engine JSON Lines, one parse of the file, no JSON
-- values converted afterwards (ingest/engine_read_jsonl.sql reads numbers as JSON text and
-- converts them, about twice the CPU). DuckDB reads a JSON boolean in a DOUBLE column as 1 or 0
-- and a numeric string as its number, so the driver takes this reader's rows only when the file
-- holds neither word `true` nor `false` (relplan/ingest/files.py, digest); numeric strings are
-- what the exact reader accepts too. A value that does not convert (a string, an object, an RFC
-- 3339 time) makes DuckDB raise: the ingest restarts with the exact reader, which names the line.
-- The rows land in file order (the driver sets preserve_insertion_order around this insert, and
-- DuckDB still reads the file on every thread, which WITH ORDINALITY would not): a record's line
-- is its rowid - base + 1 (ingest/stage_set_base.sql) when the records are as many as the file's
-- lines and their rowids have no gap (the driver checks). Every record is checked here, as it is
-- read, with the quick test rp_engine_ok only (ingest/engine_macros.sql; TRUE only where
-- rp_engine_reason finds nothing): a record it does not pass is left out, so the records staged
-- are fewer than the file's lines and the driver stages the file again with the staged reader,
-- whose checks (ingest/engine_checked.sql, rp_engine_reason) refuse it with its line or keep it.
-- Binding rp_engine_reason here too (rp_engine_checked) took 8 of this statement's 14 ms of CPU
-- on a small file, for reasons a clean file never needs. The rows go to the narrow
-- stage_direct_engine (ingest/stage_tables.sql), from which ingest/direct_jsonl_*.sql insert them
-- by type without checking them again. Empty strings become NULL (an empty id is a missing id).
-- params: path, source_id
insert into stage_direct_engine
select
    $source_id, type, execution_id, replica, step, t_issue, t_done, prompt_computed,
    prompt_cached, decode_tokens,
    case when type <> 'step' then [
        t, prompt_tokens, num_running, num_waiting, num_batched_tokens, kv_usage, elapsed_ms,
        num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens, preemptions,
        max_tokens
    ] end,
    case when type <> 'step' then [event, finish_reason] end
from (
    select
        rp_engine_type(
            nullif(type, ''), nullif(event, ''), prompt_computed, num_running, num_waiting,
            num_batched_tokens, kv_usage
        ) as type,
        t, nullif(execution_id, '') as execution_id, nullif(event, '') as event,
        prompt_tokens, nullif(replica, '') as replica, step, t_issue, t_done, prompt_computed,
        prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
        elapsed_ms, num_preempted, prefix_queries, prefix_hits,
        nullif(finish_reason, '') as finish_reason, output_tokens, cached_tokens, preemptions,
        max_tokens
    from read_json(
        $path, format = 'newline_delimited', records = true, maximum_object_size = 16777216,
        columns = {
            type: 'VARCHAR', t: 'DOUBLE', execution_id: 'VARCHAR', event: 'VARCHAR',
            prompt_tokens: 'DOUBLE', replica: 'VARCHAR', step: 'DOUBLE', t_issue: 'DOUBLE',
            t_done: 'DOUBLE', prompt_computed: 'DOUBLE', prompt_cached: 'DOUBLE',
            decode_tokens: 'DOUBLE', num_running: 'DOUBLE', num_waiting: 'DOUBLE',
            num_batched_tokens: 'DOUBLE', kv_usage: 'DOUBLE', elapsed_ms: 'DOUBLE',
            num_preempted: 'DOUBLE', prefix_queries: 'DOUBLE', prefix_hits: 'DOUBLE',
            finish_reason: 'VARCHAR', output_tokens: 'DOUBLE', cached_tokens: 'DOUBLE',
            preemptions: 'DOUBLE', max_tokens: 'DOUBLE'
        }
    )
)
where rp_engine_ok(
        type, t, execution_id, event, prompt_tokens, step, t_issue, t_done, prompt_computed,
        prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
        elapsed_ms, num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
        preemptions, max_tokens)
