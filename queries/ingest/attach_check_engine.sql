-- One pass over every file of attachment $sid (workspace/attached_macros.sql, every
-- partition in scope): the engine record rules of a copy (rp_engine_reason,
-- ingest/engine_macros.sql) and what the sources row records. first_bad is the first
-- refused record by (file, row): its file, its 1-based row in that file and the reason.
-- params: sid
with r as (
    select filename, file_row_number, type_, t, t_issue, t_done,
           rp_engine_reason(
               type_, t, execution_id, event, prompt_tokens, step, t_issue, t_done,
               prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
               num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries,
               prefix_hits, output_tokens, cached_tokens, preemptions, max_tokens,
               'canonical') as reason
    from rp_attached_engine($sid)
)
select count(*) as records,
       count(*) filter (where type_ = 'step') as steps,
       count(*) filter (where type_ = 'event') as events,
       count(*) filter (where type_ = 'stats') as engine_stats,
       least(min(t), min(t_issue)) as t_min,
       greatest(max(t), max(t_done), max(t_issue)) as t_max,
       min({'file': filename, 'row': file_row_number + 1, 'reason': reason})
           filter (where reason is not null) as first_bad
from r
