-- The staged engine records with `type` filled in: a record without one is typed by its
-- fields (`event` -> event, `prompt_computed` -> step, a stats counter -> stats), so separate
-- event/step files need no type column.
-- params:
create or replace temp view engine_typed as
select
    * exclude (type),
    coalesce(type, case
        when event is not null then 'event'
        when prompt_computed is not null then 'step'
        when num_running is not null or num_waiting is not null
             or num_batched_tokens is not null or kv_usage is not null then 'stats'
    end) as type
from stage_engine
