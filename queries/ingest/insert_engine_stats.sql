-- Store the scheduler stats records that passed of this ingest.
-- params:
insert into engine_stats
select
    step::bigint, t_issue, num_running::bigint, num_waiting::bigint, num_batched_tokens::bigint,
    kv_usage, replica, source_id, ln
from engine_rows
where type = 'stats'
