-- Metric names the workspace holds with their sample and series counts, so analyses can
-- pick among vLLM's name variants (e.g. vllm:prefix_cache_queries_total, the same without
-- _total, or the older vllm:gpu_prefix_cache_queries_total).
-- params:
select name, count(*) as samples, count(distinct labels::varchar) as series
from metric_samples
group by name
order by name
