-- The stored samples of the named metrics in [t_from, t_to], one row per series (name and
-- label set) with its samples as a list of (t, v, source_id, source_row) in no particular
-- order: the offline PromQL evaluator sorts each series by time, then by provenance (the
-- first stored of two samples at one millisecond wins). Sorting in numpy is 4x faster than
-- an ordered list() aggregate here. `__name__` is never a stored label.
-- params: names, t_from, t_to
select
    name,
    map_keys(labels) as label_keys,
    map_values(labels) as label_values,
    list({'t': t, 'v': value, 's': source_id, 'r': source_row}) as samples
from metric_samples
where list_contains($names, name)
  and t >= $t_from
  and t <= $t_to
group by name, labels
order by name, label_keys, label_values
