-- Per metric name: its samples' time span and the label names its series carry. Used to pick
-- the replica label (replica, pod or instance, first present), the metric names present
-- (e.g. vllm:gpu_cache_usage_perc on older vLLM) and the default evaluation window.
-- params: names
select
    name,
    min(t) as t_min,
    max(t) as t_max,
    list_sort(list_distinct(flatten(list(map_keys(labels))))) as label_keys
from metric_samples
where list_contains($names, name)
group by name
order by name
