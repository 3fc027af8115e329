-- Capacity calibration stages (the `capacity` analysis): per stage window [a, b)
--   calls / engine_arrivals   offered load (calls by t_planned; engine `arrived` events)
--   finished                  executions whose first `finished` is in the stage
--   slope_events              least-squares slope (regr_slope) of the waiting count against
--                             time over the stage's second half, sampled every $grid_s
--                             seconds; waiting as in analyses/littles_law_by_window.sql (arrived until
--                             scheduled/aborted/rejected, open waits end at T)
--   waiting_end_events        waiting count at the last grid point of the stage
--   slope_metrics, waiting_end_metrics: the same from vllm:num_requests_waiting samples in
--                             the second half (slope per series, summed over series; last
--                             sample per series, summed)
-- params: w_names, w_starts, w_ends, w_closed, t_end, grid_s, gauge_name
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
ex as (
    select min(t) filter (where event = 'arrived') as ta,
           min(t) filter (where event in ('scheduled', 'aborted', 'rejected')) as tx,
           min(t) filter (where event = 'finished') as tf
    from events group by coalesce(replica, ''), execution_id
),
waits as (
    select ta, greatest(ta, coalesce(tx, $t_end)) as te from ex where ta is not null
),
grid as (
    select w.win_name, g.t
    from win w, lateral (select unnest(range(0, 1 + cast(floor(((w.b - w.a) / 2) / $grid_s) as bigint))) as k) r,
         lateral (select w.a + (w.b - w.a) / 2 + r.k * $grid_s as t) g
    where g.t < w.b
),
waiting as (
    select g.win_name, g.t, count(x.ta) as n
    from grid g left join waits x on x.ta <= g.t and g.t < x.te
    group by g.win_name, g.t
),
ev as (
    select win_name, regr_slope(n, t) as slope_events, arg_max(n, t) as waiting_end_events
    from waiting group by win_name
),
gauge as (
    select w.win_name, m.labels::varchar as series, regr_slope(m.value, m.t) as slope,
           arg_max(m.value, m.t) as last_value
    from win w join metric_samples m
      on m.name = $gauge_name and m.t >= w.a + (w.b - w.a) / 2 and m.t < w.b
    group by all
),
met as (
    select win_name, sum(slope) as slope_metrics, sum(last_value) as waiting_end_metrics
    from gauge group by win_name
),
calls as (
    select min(t_planned) as t from attempts group by call_id
)
select w.win_name,
       (select count(*) from calls c where c.t >= w.a and c.t < w.b) as calls,
       (select count(*) from waits x where x.ta >= w.a and x.ta < w.b) as engine_arrivals,
       (select count(*) from ex e where e.tf >= w.a and e.tf < w.b) as finished,
       ev.slope_events, ev.waiting_end_events, met.slope_metrics, met.waiting_end_metrics
from win w left join ev using (win_name) left join met using (win_name)
