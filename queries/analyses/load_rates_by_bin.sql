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
),
-- Counts per bin without a range join: an as-of join puts a time in the last bin starting at
-- or before it, and `< b` keeps it only inside that bin (the bins tile the range: each b is the
-- next bin's a, the same expression). "In flight at b" (start < b <= end) is the number of
-- starts below b less the number of spans wholly below it (greatest(start, end) < b), each a
-- running count of the bins' own counts after those below the first bin.
planned as (
    select b.i, count(*) as calls
    from attempts x asof join bins b on x.t_planned >= b.a
    where x.attempt = 0 and x.t_planned < b.b
    group by b.i
),
ended as (
    select b.i, count(*) filter (where x.outcome = 'delivered') as delivered,
           count(*) filter (where x.outcome = 'client_gone') as gone
    from attempts x asof join bins b on x.t_end >= b.a
    where x.t_end < b.b
    group by b.i
),
engine as (
    select b.i, count(*) filter (where e.event = 'arrived') as arrived,
           count(*) filter (where e.event = 'finished') as finished
    from events e asof join bins b on e.t >= b.a
    where e.event in ('arrived', 'finished') and e.t < b.b
    group by b.i
),
aborted_bin as (
    select b.i, count(*) as n
    from aborted x asof join bins b on x.t >= b.a
    where x.t < b.b
    group by b.i
),
spans as (
    select 'proxy' as what, t_sent as s, t_end as e from attempts
    where t_sent is not null and t_end is not null
    union all
    select 'engine', t_arr, coalesce(t_out, 'infinity'::double) from first_sched
    where t_arr is not null
),
span_points as (
    select what, s as t, 1 as d from spans
    union all
    select what, greatest(s, e), -1 from spans
),
points_bin as (
    select p.what, b.i, sum(p.d) as d
    from span_points p asof join bins b on p.t >= b.a
    where p.t < b.b
    group by all
),
before_bins as (
    select what, sum(d) as d from span_points where t < $origin group by what
),
covering as (
    select w.what, b.i,
           coalesce(any_value(f.d), 0)
             + sum(coalesce(p.d, 0)) over (partition by w.what order by b.i) as n
    from bins b cross join (values ('proxy'), ('engine')) w(what)
    left join points_bin p on p.i = b.i and p.what = w.what
    left join before_bins f on f.what = w.what
    group by w.what, b.i, p.d
),
metric_bin as (
    select i,
           max(inc) filter (where name = 'vllm:prefix_cache_queries_total') as queries,
           max(inc) filter (where name = 'vllm:prefix_cache_hits_total') as hits,
           max(inc) filter (where name = 'vllm:prompt_tokens_total') as prompt,
           max(inc) filter (where name = 'vllm:request_success_total') as success
    from pair_bin group by i
)
select b.i, b.a as start,
       coalesce(pl.calls, 0) as proxy_calls,
       coalesce(en.delivered, 0) as proxy_delivered,
       fl.n as proxy_in_flight,
       coalesce(eg.arrived, 0) as eng_arrived,
       coalesce(eg.finished, 0) as eng_finished,
       q.n as eng_waiting,
       coalesce(mb.queries, 0) as m_queries,
       coalesce(mb.hits, 0) as m_hits,
       coalesce(mb.prompt, 0) as m_prompt,
       coalesce(mb.success, 0) as m_success,
       w.mean_v as m_waiting_mean, w.last_v as m_waiting_last, coalesce(w.n, 0) as m_samples,
       u.busy_s, coalesce(u.engines, 0) as engines,
       coalesce(en.gone, 0) + coalesce(ab.n, 0) as cut
from bins b
left join planned pl on pl.i = b.i
left join ended en on en.i = b.i
left join covering fl on fl.i = b.i and fl.what = 'proxy'
left join engine eg on eg.i = b.i
left join covering q on q.i = b.i and q.what = 'engine'
left join aborted_bin ab on ab.i = b.i
left join metric_bin mb on mb.i = b.i
left join waiting_bin w on w.i = b.i
left join busy u on u.i = b.i
order by b.i
