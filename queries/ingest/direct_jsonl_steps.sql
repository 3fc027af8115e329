-- Step records of one engine JSON Lines file, from the typed reader's rows
-- (ingest/engine_read_jsonl_typed.sql, which checked every record as it read it) into
-- `steps`: fail mode's path. A record's line is its rowid - base + 1 (stage_sources).
-- params: source_id
insert into steps
select
    step::bigint, t_issue, t_done, execution_id, prompt_computed::bigint,
    coalesce(prompt_cached, 0)::bigint, coalesce(decode_tokens, 0)::bigint, replica, $source_id,
    rowid - (select base from stage_sources where source_id = $source_id) + 1
from stage_direct_engine
where source_id = $source_id and type = 'step'
