-- Per bin of width $width from $origin ($n bins): what each input says about arrivals,
-- completions and the queue (the overload detection, docs/analyses.md "Detected overload").
-- Proxy: calls (attempt 0 by t_planned), delivered attempts (by t_end), attempts in flight at
-- the bin's end. Engine: arrived and finished events (by t), executions arrived but not yet
-- scheduled at the bin's end (waiting). Metrics (all series summed): the rise of
-- prefix-cache queries and hits, prompt tokens and completions (request_success_total with
-- finished_reason stop or length; a drop counts the new value, a reset) over sample pairs
-- inside the bin, and the mean and last num_requests_waiting sample in it. One family per
-- quantity: the waiting gauge comes from the scrapes when they hold it, else from vLLM's stats
-- log line (sources.format = 'vllm_log'), never both added together.
-- For the Ĉ estimate (relplan/analyses/overload.py): busy_s, the engine's busy seconds in the
-- bin (vLLM's per-iteration `iteration elapsed time`, vllm_log:iteration_elapsed_seconds,
-- summed) over `engines` (engines that logged one); cut, work the client or engine cut in the
-- bin (attempts ended client_gone, plus executions' first `aborted` event).
-- Columns: i, start, proxy_calls, proxy_delivered, proxy_in_flight, eng_arrived, eng_finished,
-- eng_waiting, m_queries, m_hits, m_prompt, m_success, m_waiting_mean, m_waiting_last, m_samples,
-- busy_s, engines, cut.
-- params: origin, width, n
with bins as (
    select i, $origin + i * $width as a, $origin + (i + 1) * $width as b
    from range($n) t(i)
),
first_sched as (
    select execution_id, replica, min(t) filter (where event = 'arrived') as t_arr,
           min(t) filter (where event in ('scheduled', 'aborted', 'rejected', 'finished')) as t_out
    from events group by execution_id, replica
),
pairs as (
    select name, t as t_i, lead(t) over w as t_j,
           case when lead(value) over w >= value then lead(value) over w - value
                else lead(value) over w end as inc
    from metric_samples
    where name in ('vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total',
                   'vllm:prompt_tokens_total')
       or (name = 'vllm:request_success_total'
           and coalesce(labels['finished_reason'], 'stop') in ('stop', 'length'))
    window w as (partition by name, labels::varchar order by t)
),
pair_bin as (
    select floor((t_i - $origin) / $width)::bigint as i, name, sum(inc) as inc
    from pairs
    where t_j is not null and floor((t_i - $origin) / $width) = floor((t_j - $origin) / $width)
       or (t_j is not null and t_j = $origin + (floor((t_i - $origin) / $width) + 1) * $width)
    group by all
),
gauge as (
    select m.t, m.labels::varchar as series, m.value, s.format = 'vllm_log' as from_log
    from metric_samples m join sources s using (source_id)
    where m.name = 'vllm:num_requests_waiting'
),
waiting as (
    select floor((t - $origin) / $width)::bigint as i, series,
           avg(value) as mean_v, arg_max(value, t) as last_v, count(*) as n
    from gauge
    where not from_log or not exists (select 1 from gauge g2 where not g2.from_log)
    group by all
),
waiting_bin as (
    select i, sum(mean_v) as mean_v, sum(last_v) as last_v, sum(n) as n from waiting group by i
),
busy as (
    select floor((t - $origin) / $width)::bigint as i, sum(value) as busy_s,
           count(distinct labels::varchar) as engines
    from metric_samples where name = 'vllm_log:iteration_elapsed_seconds'
    group by all
),
aborted as (
    select min(t) as t from events where event = 'aborted' group by execution_id, replica
)
select b.i, b.a as start,
       (select count(*) from attempts x where x.attempt = 0 and x.t_planned >= b.a and x.t_planned < b.b) as proxy_calls,
       (select count(*) from attempts x where x.outcome = 'delivered' and x.t_end >= b.a and x.t_end < b.b) as proxy_delivered,
       (select count(*) from attempts x where x.t_sent < b.b and x.t_end >= b.b) as proxy_in_flight,
       (select count(*) from events e where e.event = 'arrived' and e.t >= b.a and e.t < b.b) as eng_arrived,
       (select count(*) from events e where e.event = 'finished' and e.t >= b.a and e.t < b.b) as eng_finished,
       (select count(*) from first_sched f where f.t_arr < b.b and coalesce(f.t_out, 'infinity'::double) >= b.b) as eng_waiting,
       coalesce((select inc from pair_bin p where p.i = b.i and p.name = 'vllm:prefix_cache_queries_total'), 0) as m_queries,
       coalesce((select inc from pair_bin p where p.i = b.i and p.name = 'vllm:prefix_cache_hits_total'), 0) as m_hits,
       coalesce((select inc from pair_bin p where p.i = b.i and p.name = 'vllm:prompt_tokens_total'), 0) as m_prompt,
       coalesce((select inc from pair_bin p where p.i = b.i and p.name = 'vllm:request_success_total'), 0) as m_success,
       w.mean_v as m_waiting_mean, w.last_v as m_waiting_last, coalesce(w.n, 0) as m_samples,
       u.busy_s, coalesce(u.engines, 0) as engines,
       (select count(*) from attempts x where x.outcome = 'client_gone' and x.t_end >= b.a and x.t_end < b.b)
         + (select count(*) from aborted x where x.t >= b.a and x.t < b.b) as cut
from bins b left join waiting_bin w on w.i = b.i left join busy u on u.i = b.i
order by b.i
