-- Samples of one staged metrics source under a deprecated vLLM alias whose new name the same
-- source also has (vLLM 0.9-0.10 export both, with the same value): they are dropped by
-- ingest/drop_metric_aliases.sql so the series is counted once, under its new name. An old
-- name alone (0.8 and V0 exports) is kept.
-- params: source_id
with aliases(old, new) as (values
    ('vllm:gpu_cache_usage_perc', 'vllm:kv_cache_usage_perc'),
    ('vllm:gpu_prefix_cache_queries_total', 'vllm:prefix_cache_queries_total'),
    ('vllm:gpu_prefix_cache_hits_total', 'vllm:prefix_cache_hits_total'),
    ('vllm:gpu_prefix_cache_queries', 'vllm:prefix_cache_queries'),
    ('vllm:gpu_prefix_cache_hits', 'vllm:prefix_cache_hits')
)
select a.old as name, a.new as new_name, count(*) as n
from stage_metrics s join aliases a on s.name = a.old
where s.source_id = $source_id and s.perr is null
  and exists (
      select 1 from stage_metrics m
      where m.source_id = $source_id and m.name = a.new and m.perr is null
  )
group by all
order by name
