-- Store the scheduler stats records that passed of this ingest.
-- params:
insert into engine_stats by name
select
    step::bigint as step, t_issue, num_running::bigint as num_running,
    num_waiting::bigint as num_waiting, num_batched_tokens::bigint as num_batched_tokens,
    kv_usage, replica, source_id, ln as source_row, prompt_computed::bigint as prompt_computed,
    decode_tokens::bigint as decode_tokens, elapsed_ms, num_preempted::bigint as num_preempted,
    prefix_queries::bigint as prefix_queries, prefix_hits::bigint as prefix_hits
from engine_rows
where type = 'stats'
