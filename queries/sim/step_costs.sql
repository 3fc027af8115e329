-- One row per engine step from the `steps` table (relplan/sim/costfit.py): its duration in ms,
-- prompt tokens computed, prompt tokens from the prefix cache, decoding executions and the
-- executions scheduled in it.
-- params:
select
    step,
    max(t_done) - min(t_issue) as seconds,
    sum(prompt_computed) as prefill_tokens,
    sum(prompt_cached) as cached_tokens,
    count(*) filter (where decode_tokens > 0 and prompt_computed = 0) as decodes,
    count(*) as executions
from steps
group by step
order by step
