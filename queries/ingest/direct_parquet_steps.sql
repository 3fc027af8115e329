-- Step records straight from an engine Parquet file into `steps`: fail mode's path for
-- Parquet whose columns already have the canonical types (no staging copy). Each record is
-- read with rp_engine_parquet_typed and checked with rp_engine_checked (the quick test rp_engine_ok;
-- ingest/engine_macros.sql) by the insert of its type
-- (records of unknown or missing type by the events insert); one it does not pass raises, which rolls
-- the ingest back, and the driver then stages the file with ingest/engine_read_parquet.sql,
-- whose checks name the first bad row (or keep a good one the quick test did not pass).
-- params: path, source_id
insert into steps
select
    step::bigint, t_issue, t_done, execution_id, prompt_computed::bigint,
    coalesce(prompt_cached, 0)::bigint, coalesce(decode_tokens, 0)::bigint, replica, $source_id,
    _ln
from rp_engine_parquet_typed($path)
where case
    when type_ is distinct from 'step' then false
    else rp_engine_checked(
            type_, t, execution_id, event, prompt_tokens, step, t_issue, t_done,
            prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
            num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries,
            prefix_hits, output_tokens, cached_tokens, preemptions, max_tokens, 'row ' || _ln)
end
