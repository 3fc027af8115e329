-- Scheduler stats records of one engine JSON Lines file, from the typed reader's rows
-- (ingest/engine_read_jsonl_typed.sql, which checked every record as it read it) into
-- `engine_stats`: fail mode's path. A record's line is its rowid - base + 1 (stage_sources). The
-- stats fields other than the step fields are in the stage's `nums` list
-- (ingest/stage_tables.sql).
-- params: source_id
insert into engine_stats by name
select
    step::bigint as step, t_issue, nums[3]::bigint as num_running,
    nums[4]::bigint as num_waiting, nums[5]::bigint as num_batched_tokens, nums[6] as kv_usage,
    replica, $source_id as source_id,
    rowid - (select base from stage_sources where source_id = $source_id) + 1 as source_row,
    prompt_computed::bigint as prompt_computed, decode_tokens::bigint as decode_tokens,
    nums[7] as elapsed_ms, nums[8]::bigint as num_preempted,
    nums[9]::bigint as prefix_queries, nums[10]::bigint as prefix_hits
from stage_direct_engine
where source_id = $source_id and type = 'stats'
