-- Per metric name: its samples' time span and the label names its series carry. Used to pick
-- the replica label (replica, pod or instance, first present), the metric names present
-- (e.g. vllm:gpu_cache_usage_perc on older vLLM) and the default evaluation window.
-- params: names
with per_keys as (
    select name, map_keys(labels) as label_keys, min(t) as t_min, max(t) as t_max
    from metric_samples
    where list_contains($names, name)
    group by name, map_keys(labels)
)
select
    name,
    min(t_min) as t_min,
    max(t_max) as t_max,
    list_sort(list_distinct(flatten(list(label_keys)))) as label_keys
from per_keys
group by name
order by name
