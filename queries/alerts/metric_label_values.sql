-- The values of one label on the vLLM series (names starting vllm:) among the named metrics
-- in [t_from, t_to]: the replicas the health evaluation saw, firing or not.
-- params: names, t_from, t_to, label
select distinct labels[$label] as value
from metric_samples
where list_contains($names, name)
  and starts_with(name, 'vllm:')
  and t >= $t_from
  and t <= $t_to
  and labels[$label] is not null
order by value
