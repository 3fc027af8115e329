-- Lifecycle events of one engine JSON Lines file, from the typed reader's rows
-- (ingest/engine_read_jsonl_typed.sql, which checked every record as it read it) into `events`:
-- fail mode's path. A record's line is its rowid - base + 1 (stage_sources). The event fields
-- other than the id and replica are in the stage's lists (`nums`, `texts`:
-- ingest/stage_tables.sql).
-- params: source_id
insert into events by name
select
    nums[1] as t, execution_id, texts[1] as event, nums[2]::bigint as prompt_tokens, replica,
    $source_id as source_id,
    rowid - (select base from stage_sources where source_id = $source_id) + 1 as source_row, texts[2] as finish_reason,
    nums[11]::bigint as output_tokens, nums[12]::bigint as cached_tokens,
    nums[13]::bigint as preemptions, nums[14]::bigint as max_tokens
from stage_direct_engine
where source_id = $source_id and type = 'event'
