-- The prompt tokens vLLM served from its prefix cache, from its counters (relplan whatif fit,
-- when there are no step records): the increase of vllm:prompt_tokens_cached_total (else
-- vllm:prefix_cache_hits_total) and of vllm:prompt_tokens_total (the prompt tokens of the same
-- prefills; a count of finished requests would not be: in a short window many prefilled
-- requests have not finished), summed over series, up to the first retry the attempts table holds (`until`; NULL: no retry
-- seen, the whole data): until then every cached token is a prefix the calls share, after it
-- a retry also finds its own earlier prompt cached. The increase is Prometheus's: a fall is a counter reset,
-- after which the new value counts (a Prometheus export's first sample can be the previous
-- server's last). Columns: cached_tokens, prompt_tokens, metric (the counter used), until.
-- params:
with lim as (select min(t_sent) as until from attempts where attempt > 0),
s as (
    select name, labels, t, value,
           lag(value) over (partition by name, labels order by t) as prev
    from metric_samples
    where name in ('vllm:prompt_tokens_cached_total', 'vllm:prefix_cache_hits_total',
                   'vllm:prompt_tokens_total')
      and ((select until from lim) is null or t <= (select until from lim))
),
by_name as (
    select name,
           sum(case when prev is null then 0 when value >= prev then value - prev else value end)
               as increase
    from s group by name
)
select coalesce((select increase from by_name where name = 'vllm:prompt_tokens_cached_total'),
                (select increase from by_name where name = 'vllm:prefix_cache_hits_total'))
           as cached_tokens,
       (select increase from by_name where name = 'vllm:prompt_tokens_total') as prompt_tokens,
       case when exists (select 1 from by_name where name = 'vllm:prompt_tokens_cached_total')
            then 'vllm:prompt_tokens_cached_total' else 'vllm:prefix_cache_hits_total' end
           as metric,
       (select until from lim) as until
