-- The stored samples of the named metrics in [t_from, t_to], one row per series (name and
-- label set), times and values in time order; what the offline PromQL evaluator reads.
-- Samples are the workspace's metric_samples rows; `__name__` is never a stored label.
-- params: names, t_from, t_to
select
    name,
    map_keys(labels) as label_keys,
    map_values(labels) as label_values,
    list(t order by t, source_id, source_row) as ts,
    list(value order by t, source_id, source_row) as vs
from metric_samples
where list_contains($names, name)
  and t >= $t_from
  and t <= $t_to
group by name, labels
order by name, label_keys, label_values
