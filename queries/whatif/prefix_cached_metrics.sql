-- The prompt tokens vLLM served from its prefix cache, from its counters (relplan whatif fit,
-- when there are no step records): the increase over the data's span of
-- vllm:prompt_tokens_cached_total (else vllm:prefix_cache_hits_total) and of
-- vllm:request_prompt_tokens_count (requests finished), summed over series. Columns:
-- cached_tokens, requests, metric (the counter used). A counter reset is not handled.
-- params:
with inc as (
    select name, labels, arg_max(value, t) - arg_min(value, t) as increase
    from metric_samples
    where name in ('vllm:prompt_tokens_cached_total', 'vllm:prefix_cache_hits_total',
                   'vllm:request_prompt_tokens_count')
    group by name, labels
),
by_name as (select name, sum(increase) as increase from inc group by name)
select coalesce((select increase from by_name where name = 'vllm:prompt_tokens_cached_total'),
                (select increase from by_name where name = 'vllm:prefix_cache_hits_total'))
           as cached_tokens,
       (select increase from by_name where name = 'vllm:request_prompt_tokens_count') as requests,
       case when exists (select 1 from by_name where name = 'vllm:prompt_tokens_cached_total')
            then 'vllm:prompt_tokens_cached_total' else 'vllm:prefix_cache_hits_total' end
           as metric
