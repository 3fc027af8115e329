-- Scheduler stats records of one engine JSON Lines file, from the typed reader's rows
-- (ingest/engine_read_jsonl_typed.sql) into `engine_stats`: fail mode's path. Each record is checked
-- with rp_engine_checked (rp_engine_ok, then rp_engine_reason for the rows it does not pass; ingest/engine_macros.sql),
-- by the insert of its type (records of unknown or missing type by the events insert); a
-- refused one raises, which rolls the ingest back, and the driver then reads the file again
-- with the exact reader, which names the first bad line.
-- params: source_id
insert into engine_stats by name
select
    step::bigint as step, t_issue, num_running::bigint as num_running,
    num_waiting::bigint as num_waiting, num_batched_tokens::bigint as num_batched_tokens,
    kv_usage, replica, $source_id as source_id, ln as source_row,
    prompt_computed::bigint as prompt_computed, decode_tokens::bigint as decode_tokens,
    elapsed_ms, num_preempted::bigint as num_preempted,
    prefix_queries::bigint as prefix_queries, prefix_hits::bigint as prefix_hits
from stage_direct_engine
where source_id = $source_id and type = 'stats' and rp_engine_checked(
        type, t, execution_id, event, prompt_tokens, step, t_issue, t_done,
        prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
        num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries,
        prefix_hits, output_tokens, cached_tokens, preemptions, max_tokens,
        true, 'line ' || ln)
