-- One row per logged engine iteration (vLLM's --enable-logging-iteration-details line, or any
-- source whose engine_stats rows carry the same samples), for the step-cost fit
-- (relplan/sim/costfit.py): the iteration's own elapsed time and its counts, which the line
-- gives apart (vllm_log:iteration_* samples of the same source row), and the KV usage.
-- Columns: step, replica, t, seconds, context_requests, context_tokens,
-- generation_requests, generation_tokens, kv_usage. Ordered by replica, step.
-- params:
with m as (
    select source_id, source_row,
           max(value) filter (where name = 'vllm_log:iteration_elapsed_seconds') as seconds,
           max(value) filter (where name = 'vllm_log:iteration_context_requests') as context_requests,
           max(value) filter (where name = 'vllm_log:iteration_context_tokens') as context_tokens,
           max(value) filter (where name = 'vllm_log:iteration_generation_requests') as generation_requests,
           max(value) filter (where name = 'vllm_log:iteration_generation_tokens') as generation_tokens
    from metric_samples
    where name like 'vllm\_log:iteration\_%' escape '\'
    group by source_id, source_row
)
select e.step, e.replica, e.t_issue as t, m.seconds, m.context_requests, m.context_tokens,
       m.generation_requests, m.generation_tokens, e.kv_usage
from engine_stats e join m using (source_id, source_row)
where m.seconds is not null and m.context_tokens is not null
  and m.generation_requests is not null
order by coalesce(e.replica, ''), e.step
