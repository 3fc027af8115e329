-- Time-weighted mean of vllm:num_requests_waiting per window (the `littles_law` analysis without an
-- engine trace; Conventions 7): each sample holds until the series' next sample, the last
-- one until T ($t_end). Per series (name, labels): integral over the window / seconds of the
-- window the series covers; the `gauge` rows sum those means over series, for all replicas
-- (all_replicas = 1) and per replica (first present of labels[$label1], [$label2],
-- [$label3]); `covered_share` is the mean share of the window the series cover.
-- One family: the scraped gauge when the scrapes hold it, else vLLM's stats log line
-- (sources.format = 'vllm_log'); the two are never added together.
-- The `proxy` rows count, for lambda, executions created per the proxy log (non-attached
-- attempts with an execution_id, by t_sent) in the window, all and per attempts.replica.
-- Columns: kind (gauge | proxy), win_name, replica, all_replicas, value, covered_share.
-- params: w_names, w_starts, w_ends, w_closed, t_end, gauge_name, label1, label2, label3
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
gauge as (
    select m.t, m.labels, m.value, s.format = 'vllm_log' as from_log
    from metric_samples m join sources s using (source_id)
    where m.name = $gauge_name
),
steps as (
    select labels::varchar as series, coalesce(labels[$label1], labels[$label2], labels[$label3]) as replica,
           t as t1,
           coalesce(lead(t) over (partition by labels::varchar order by t), greatest(t, $t_end)) as t2,
           value
    from gauge
    where not from_log or not exists (select 1 from gauge g2 where not g2.from_log)
),
per_series as (
    select w.win_name, s.series, s.replica, w.b - w.a as len,
           sum(s.value * greatest(0, least(s.t2, w.b) - greatest(s.t1, w.a))) as integral,
           sum(greatest(0, least(s.t2, w.b) - greatest(s.t1, w.a))) as covered
    from win w join steps s on s.t1 < w.b and s.t2 > w.a
    group by w.win_name, s.series, s.replica, w.b - w.a
)
select 'gauge' as kind, win_name, replica, grouping(replica) as all_replicas,
       sum(integral / covered) filter (where covered > 0) as value,
       avg(covered / len) as covered_share
from per_series
group by grouping sets ((win_name), (win_name, replica))
union all
select 'proxy', w.win_name, x.replica, grouping(x.replica), count(x.call_id), null
from win w left join attempts x
  on not x.attached and x.execution_id is not null
 and x.t_sent >= w.a and (x.t_sent < w.b or (w.closed and x.t_sent = w.b))
group by grouping sets ((w.win_name), (w.win_name, x.replica))
