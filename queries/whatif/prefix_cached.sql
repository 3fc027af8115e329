-- The shared prompt prefix the engine found cached (relplan whatif fit): per execution, the
-- prompt_cached of its first step row; the most common value and how many executions had it.
-- Columns: executions, mode_tokens, at_mode.
-- params:
with first as (
    select execution_id, arg_min(prompt_cached, step) as cached
    from steps
    group by execution_id
),
m as (select mode(cached) as mode_tokens from first)
select (select count(*) from first) as executions, m.mode_tokens,
       (select count(*) from first where cached = m.mode_tokens) as at_mode
from m
