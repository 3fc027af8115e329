-- The staged engine records with `type` filled in (rp_engine_type, ingest/engine_macros.sql). `ln`
-- of rows the fast JSON reader staged comes from
-- their rowid (see ingest/engine_read_jsonl.sql).
-- params:
create or replace temp view engine_typed as
select
    * exclude (type, ln),
    coalesce(ln, rowid - (select base from stage_sources p where p.source_id = s.source_id) + 1)
        as ln,
    rp_engine_type(
        type, event, prompt_computed, num_running, num_waiting, num_batched_tokens, kv_usage
    ) as type
from stage_engine s
