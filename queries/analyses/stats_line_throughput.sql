-- vLLM's stats log line as a time series: per line (instant), the generation throughput
-- (tokens/s over the logging interval) and the requests waiting, summed over engines (the Ĉ
-- estimate from the stats line's throughput, relplan/analyses/assessment.py).
-- Columns: t, gen_tps, waiting.
-- params:
with s as (
    select m.t, m.name, sum(m.value) as v
    from metric_samples m join sources src using (source_id)
    where src.format = 'vllm_log'
      and m.name in ('vllm:avg_generation_throughput_toks_per_s', 'vllm:num_requests_waiting')
    group by 1, 2
)
select t,
       max(v) filter (where name = 'vllm:avg_generation_throughput_toks_per_s') as gen_tps,
       max(v) filter (where name = 'vllm:num_requests_waiting') as waiting
from s group by t order by t
