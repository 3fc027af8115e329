-- The waiting gauge (vllm:num_requests_waiting) over [$a, $b] as each family reports it:
-- `stats line` (vLLM's periodic log line, sources.format = 'vllm_log') and `metrics`
-- (scrapes, Prometheus exports): the mean over samples of the per-instant sum over series,
-- the last such sum, the span and the number of instants (the "one source of truth" check).
-- Columns: family, mean_v, last_v, max_v, t_min, t_max, samples.
-- params: a, b
with g as (
    select case when s.format = 'vllm_log' then 'stats line' else 'metrics' end as family,
           m.t, sum(m.value) as v
    from metric_samples m join sources s using (source_id)
    where m.name = 'vllm:num_requests_waiting' and m.t >= $a and m.t <= $b
    group by 1, 2
)
select family, avg(v) as mean_v, arg_max(v, t) as last_v, max(v) as max_v,
       min(t) as t_min, max(t) as t_max, count(*) as samples
from g group by family order by family
