-- Time-weighted mean of vllm:num_requests_waiting per window (analyses.md E without an
-- engine trace; Conventions 7): each sample holds until the series' next sample, the last
-- one until T ($t_end). Per series (name, labels): integral over the window / seconds of the
-- window the series covers; the rows sum those means over series (replicas), so L is the
-- fleet's waiting count. `covered_share` is the mean share of the window the series cover.
-- Also, for lambda, executions created per the proxy log (non-attached attempts with an
-- execution_id, by t_sent) in the window.
-- params: w_names, w_starts, w_ends, w_closed, t_end, gauge_name
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
steps as (
    select labels::varchar as series, t as t1,
           coalesce(lead(t) over (partition by labels::varchar order by t), greatest(t, $t_end)) as t2,
           value
    from metric_samples where name = $gauge_name
),
per_series as (
    select w.win_name, s.series, w.b - w.a as len,
           sum(s.value * greatest(0, least(s.t2, w.b) - greatest(s.t1, w.a))) as integral,
           sum(greatest(0, least(s.t2, w.b) - greatest(s.t1, w.a))) as covered
    from win w join steps s on s.t1 < w.b and s.t2 > w.a
    group by w.win_name, s.series, w.b - w.a
),
gauge as (
    select win_name, sum(integral / covered) filter (where covered > 0) as waiting_mean,
           count(*) as series, avg(covered / len) as covered_share
    from per_series group by win_name
),
proxy as (
    select w.win_name, count(x.call_id) as proxy_executions
    from win w left join attempts x
      on not x.attached and x.execution_id is not null
     and x.t_sent >= w.a and (x.t_sent < w.b or (w.closed and x.t_sent = w.b))
    group by w.win_name
)
select w.win_name, g.waiting_mean, coalesce(g.series, 0) as series, g.covered_share, p.proxy_executions
from win w left join gauge g using (win_name) left join proxy p using (win_name)
