-- The calls as the engine trace shows them, when there is no proxy log (relplan whatif fit):
-- one row per execution, its first `arrived` event's time t (epoch s), prompt_tokens and
-- max_tokens (the relplan vLLM plugin writes it; null otherwise), and output_tokens = its
-- generated length when it finished (steps' decode_tokens summed; without step records the
-- `finished` event's output_tokens, as the plugin writes it; null otherwise). Ordered by t,
-- execution_id.
-- params:
with arr as (
    select execution_id, min(t) as t, any_value(prompt_tokens) as prompt_tokens,
           max(max_tokens) as max_tokens
    from events where event = 'arrived' group by execution_id
),
fin as (
    select execution_id, max(output_tokens) as output_tokens
    from events where event = 'finished' group by execution_id
),
stepped as (
    select execution_id, sum(decode_tokens) as tokens from steps group by execution_id
),
gen as (
    select execution_id, coalesce(s.tokens, f.output_tokens) as tokens
    from fin f left join stepped s using (execution_id)
)
select a.execution_id, a.t, a.prompt_tokens, a.max_tokens, g.tokens as output_tokens
from arr a left join gen g using (execution_id)
order by a.t, a.execution_id
