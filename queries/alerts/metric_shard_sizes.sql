-- Samples of the named metrics in [t_from, t_to] per value of one label (the shard label of
-- relplan/alerts/shards.py; '' where a series lacks it, as PromQL reads a missing label),
-- so that the evaluator can load the series a few shards at a time.
-- params: names, t_from, t_to, label
select coalesce(labels[$label], '') as shard, count(*) as samples
from metric_samples
where list_contains($names, name)
  and t >= $t_from
  and t <= $t_to
group by shard
order by shard
