-- The rates the what-if's figures read of the amplification (relplan/whatif/figures.py):
-- per window [a, b) (closed at b when w_closed), the columns of the same names of
-- analyses/load_amplification_by_window.sql, computed the same way, and nothing else:
--   calls               calls whose t_planned (the call's earliest) is in the window
--   executions_created  non-attached attempts with an execution_id, by t_sent
--   engine_arrived      `arrived` events in the window (execution key: replica, id)
--   engine_accepted     of them, those without a `rejected` event
--   engine_finished     executions whose first `finished` event is in the window
-- and, the same on every row, the workspace's `arrived` and `finished` events (an engine
-- trace with arrivals and no finish line cannot see completions: the amplification's rule).
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
calls as (
    select call_id, min(t_planned) as t_planned from attempts group by call_id
),
ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as t_arrived,
           min(t) filter (where event = 'rejected') as t_rejected,
           min(t) filter (where event = 'finished') as t_finished
    from events group by all
),
calls_w as (
    select w.win_name, count(*) as calls
    from win w join calls c
      on c.t_planned >= w.a and (c.t_planned < w.b or (w.closed and c.t_planned = w.b))
    group by w.win_name
),
att_w as (
    select w.win_name, count(*) as executions_created
    from win w join attempts x
      on x.t_sent >= w.a and (x.t_sent < w.b or (w.closed and x.t_sent = w.b))
    where not x.attached and x.execution_id is not null
    group by w.win_name
),
arr_w as (
    select w.win_name, count(*) as engine_arrived,
           count(*) filter (where e.t_rejected is null) as engine_accepted
    from win w join ex e
      on e.t_arrived >= w.a and (e.t_arrived < w.b or (w.closed and e.t_arrived = w.b))
    group by w.win_name
),
fin_w as (
    select w.win_name, count(*) as engine_finished
    from win w join ex e
      on e.t_finished >= w.a and (e.t_finished < w.b or (w.closed and e.t_finished = w.b))
    group by w.win_name
),
lifecycle as (
    select count(*) filter (where event = 'arrived') as arrived_events,
           count(*) filter (where event = 'finished') as finished_events
    from events
)
select w.win_name, coalesce(calls, 0) as calls,
       coalesce(executions_created, 0) as executions_created,
       coalesce(engine_arrived, 0) as engine_arrived,
       coalesce(engine_accepted, 0) as engine_accepted,
       coalesce(engine_finished, 0) as engine_finished,
       l.arrived_events, l.finished_events
from win w
cross join lifecycle l
left join calls_w using (win_name)
left join att_w using (win_name)
left join arr_w using (win_name)
left join fin_w using (win_name)
order by w.a, w.win_name
