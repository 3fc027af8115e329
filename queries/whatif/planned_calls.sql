-- The incident's calls as planned, for the replay's workload (relplan whatif fit): one row
-- per call, from its first attempt (attempt 0; the earliest attempt when 0 is absent):
-- call_id, t_planned (epoch s, earliest over the call's attempts), prompt_tokens and
-- max_tokens of that attempt, output_tokens = the generated length of the call's finished
-- execution when the engine trace has one (steps' decode_tokens summed; without step records
-- the `finished` event's output_tokens, as the relplan vLLM plugin writes it; null otherwise),
-- partial_tokens = the most tokens any of the call's executions generated (a lower bound on
-- its length when none finished; null without steps), source_id and source_row of the first
-- attempt (for errors), engine_prompt_tokens = the prompt length the engine trace logged for
-- one of the call's executions (`arrived` events' prompt_tokens: vLLM's log when it logs
-- prompt token ids; null otherwise). Ordered by t_planned, call_id.
-- params:
with first as (
    select call_id, t_planned, prompt_tokens, max_tokens, source_id, source_row,
           row_number() over (partition by call_id order by attempt, t_sent) as k,
           min(t_planned) over (partition by call_id) as tp
    from attempts
),
finished as (
    select execution_id, max(output_tokens) as output_tokens
    from events where event = 'finished' group by execution_id
),
stepped as (
    select execution_id, sum(decode_tokens) as tokens from steps group by execution_id
),
generated as (
    select execution_id, coalesce(s.tokens, f.output_tokens) as tokens
    from finished f left join stepped s using (execution_id)
    where coalesce(s.tokens, f.output_tokens) is not null
),
call_output as (
    select a.call_id, max(g.tokens) as output_tokens
    from attempts a join generated g using (execution_id)
    where a.outcome = 'delivered'
    group by a.call_id
),
partial as (
    select a.call_id, max(x.tokens) as partial_tokens
    from (select execution_id, sum(decode_tokens) as tokens from steps group by execution_id) x
    join (select distinct call_id, execution_id from attempts where execution_id is not null) a
      using (execution_id)
    group by a.call_id
),
engine_prompt as (
    select a.call_id, max(e.prompt_tokens) as engine_prompt_tokens
    from (select distinct call_id, execution_id from attempts where execution_id is not null) a
    join events e on e.execution_id = a.execution_id and e.event = 'arrived'
    group by a.call_id
)
select f.call_id, f.tp as t_planned, f.prompt_tokens, f.max_tokens, o.output_tokens,
       p.partial_tokens, ep.engine_prompt_tokens, f.source_id, f.source_row
from first f left join call_output o using (call_id) left join partial p using (call_id)
     left join engine_prompt ep using (call_id)
where f.k = 1
order by f.tp, f.call_id
