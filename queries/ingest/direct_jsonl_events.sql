-- Lifecycle events of one engine JSON Lines file, from the typed reader's rows
-- (ingest/engine_read_jsonl_typed.sql) into `events`: fail mode's path. Each record is checked
-- with rp_engine_checked (rp_engine_ok, then rp_engine_reason for the rows it does not pass; ingest/engine_macros.sql),
-- by the insert of its type (records of unknown or missing type by the events insert); a
-- refused one raises, which rolls the ingest back, and the driver then reads the file again
-- with the exact reader, which names the first bad line.
-- params: source_id
insert into events by name
select
    t, execution_id, event, prompt_tokens::bigint as prompt_tokens, replica,
    $source_id as source_id, ln as source_row, finish_reason,
    output_tokens::bigint as output_tokens, cached_tokens::bigint as cached_tokens,
    preemptions::bigint as preemptions, max_tokens::bigint as max_tokens
from stage_direct_engine
where source_id = $source_id and case
    when type in ('step', 'stats') then false
    else rp_engine_checked(
            type, t, execution_id, event, prompt_tokens, step, t_issue, t_done,
            prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
            num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries,
            prefix_hits, output_tokens, cached_tokens, preemptions, max_tokens,
            type = 'event', 'line ' || ln)
end
