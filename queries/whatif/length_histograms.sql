-- vLLM's per-request length histograms over the workspace's metrics (relplan whatif fit):
-- for each of vllm:request_prompt_tokens, vllm:request_generation_tokens and
-- vllm:request_params_max_tokens, the increase of every cumulative bucket (`le`) and of
-- `_sum` and `_count` from the first to the last sample of each series, summed over series
-- (engines, instances). vLLM observes them when a request finishes, so they describe the
-- requests that finished in the data's span. Columns: metric (prompt, generation,
-- max_tokens), le (the bucket's upper bound as text; null for the _sum and _count rows),
-- part (bucket, sum, count), increase. A counter reset inside the span is not handled:
-- the series' increase is then last - first, as a rate() without resets would give.
-- params:
with s as (
    select name, labels, t, value,
           regexp_extract(name, '^vllm:request_(prompt_tokens|generation_tokens|params_max_tokens)_(bucket|sum|count)$', 1) as m,
           regexp_extract(name, '^vllm:request_(prompt_tokens|generation_tokens|params_max_tokens)_(bucket|sum|count)$', 2) as part
    from metric_samples
    where regexp_matches(name, '^vllm:request_(prompt_tokens|generation_tokens|params_max_tokens)_(bucket|sum|count)$')
),
per_series as (
    select m, part, labels,
           arg_max(value, t) - arg_min(value, t) as increase
    from s
    group by m, part, labels
)
select case m when 'prompt_tokens' then 'prompt'
              when 'generation_tokens' then 'generation'
              else 'max_tokens' end as metric,
       case when part = 'bucket' then labels['le'] end as le,
       part,
       sum(increase) as increase
from per_series
group by all
order by metric, part, le
