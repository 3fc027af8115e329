-- Append a batch of rows from a Python reader (relplan/ingest/stage.py's StageWriter, fewer
-- than BATCH_ROWS rows) to stage_engine: one list parameter per column, the rows in the same
-- order in each.
-- params: source_id, ln, raw, perr, origin, type, t, execution_id, event, prompt_tokens, replica, step, t_issue, t_done, prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries, prefix_hits, finish_reason, output_tokens, cached_tokens, preemptions, max_tokens
insert into stage_engine by name
select
    unnest($source_id) as source_id,
    unnest($ln) as ln,
    unnest($raw) as raw,
    unnest($perr) as perr,
    unnest($origin) as origin,
    unnest($type) as type,
    unnest($t) as t,
    unnest($execution_id) as execution_id,
    unnest($event) as event,
    unnest($prompt_tokens) as prompt_tokens,
    unnest($replica) as replica,
    unnest($step) as step,
    unnest($t_issue) as t_issue,
    unnest($t_done) as t_done,
    unnest($prompt_computed) as prompt_computed,
    unnest($prompt_cached) as prompt_cached,
    unnest($decode_tokens) as decode_tokens,
    unnest($num_running) as num_running,
    unnest($num_waiting) as num_waiting,
    unnest($num_batched_tokens) as num_batched_tokens,
    unnest($kv_usage) as kv_usage,
    unnest($elapsed_ms) as elapsed_ms,
    unnest($num_preempted) as num_preempted,
    unnest($prefix_queries) as prefix_queries,
    unnest($prefix_hits) as prefix_hits,
    unnest($finish_reason) as finish_reason,
    unnest($output_tokens) as output_tokens,
    unnest($cached_tokens) as cached_tokens,
    unnest($preemptions) as preemptions,
    unnest($max_tokens) as max_tokens
