-- One row per engine iteration whose own elapsed time and prefill/decode split were recorded,
-- for the step-cost fit (relplan/sim/costfit.py): vLLM's --enable-logging-iteration-details
-- lines (the vllm_log:iteration_* samples of the engine_stats row's source row, which give the
-- counts apart), or an engine trace's `stats` records that carry elapsed_ms, prompt_computed
-- and decode_tokens (the relplan vLLM plugin's with iteration details on; schema version 3).
-- A trace's decode_tokens stand for its generation requests (one token each without
-- speculative decoding) and it gives no context request count.
-- Columns: step, replica, t, seconds, context_requests, context_tokens, generation_requests,
-- generation_tokens, num_running, kv_usage, origin ('iteration lines' | 'engine trace').
-- Ordered by replica, step.
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
),
lines as (
    select e.step, e.replica, e.t_issue as t, m.seconds, m.context_requests, m.context_tokens,
           m.generation_requests, m.generation_tokens, e.num_running, e.kv_usage,
           'iteration lines' as origin
    from engine_stats e join m using (source_id, source_row)
    where m.seconds is not null and m.context_tokens is not null
      and m.generation_requests is not null
),
trace as (
    select e.step, e.replica, e.t_issue as t, e.elapsed_ms / 1000.0 as seconds,
           null::double as context_requests, e.prompt_computed::double as context_tokens,
           e.decode_tokens::double as generation_requests,
           e.decode_tokens::double as generation_tokens, e.num_running, e.kv_usage,
           'engine trace' as origin
    from engine_stats e anti join m using (source_id, source_row)
    where e.elapsed_ms is not null and e.prompt_computed is not null
      and e.decode_tokens is not null
)
select * from lines
union all
select * from trace
order by coalesce(replica, ''), step
