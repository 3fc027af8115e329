-- The calls as the engine trace shows them, when there is no proxy log (relplan whatif fit):
-- one row per execution, its first `arrived` event's time t (epoch s) and prompt_tokens, and
-- output_tokens = its generated length when it finished (steps' decode_tokens summed, null
-- otherwise). Ordered by t, execution_id.
-- params:
with arr as (
    select execution_id, min(t) as t, any_value(prompt_tokens) as prompt_tokens
    from events where event = 'arrived' group by execution_id
),
fin as (select distinct execution_id from events where event = 'finished'),
gen as (
    select s.execution_id, sum(s.decode_tokens) as tokens
    from steps s join fin using (execution_id) group by s.execution_id
)
select a.execution_id, a.t, a.prompt_tokens, g.tokens as output_tokens
from arr a left join gen g using (execution_id)
order by a.t, a.execution_id
