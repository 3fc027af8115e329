-- The stored samples of the named metrics in [t_from, t_to] whose value of `label` ('' where
-- a series lacks it) is one of `shards`: one row per series, as alerts/metric_series (same
-- columns, samples in no particular order), for the streaming evaluator's batches.
-- params: names, t_from, t_to, label, shards
select
    name,
    map_keys(labels) as label_keys,
    map_values(labels) as label_values,
    list({'t': t, 'v': value, 's': source_id, 'r': source_row}) as samples
from metric_samples
where list_contains($names, name)
  and t >= $t_from
  and t <= $t_to
  and list_contains($shards, coalesce(labels[$label], ''))
group by name, labels
order by name, label_keys, label_values
