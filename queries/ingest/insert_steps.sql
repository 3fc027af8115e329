-- Store the engine step records that passed of this ingest; absent prompt_cached and
-- decode_tokens are 0 (docs/formats.md, Engine trace).
-- params:
insert into steps
select
    step::bigint, t_issue, t_done, execution_id, prompt_computed::bigint,
    coalesce(prompt_cached, 0)::bigint, coalesce(decode_tokens, 0)::bigint, replica, source_id, ln
from engine_rows
where type = 'step'
