-- How many executions each call made, per window: the per-call counts behind the amplification
-- analysis's executions_per_call (queries/analyses/load_amplification_by_window.sql: a call
-- belongs to the window its t_planned, the earliest of its attempts, falls in; its executions
-- are its non-attached attempts with an execution_id, wherever they fall in time), so that
-- compare can bootstrap the figure over calls. One row per window and count:
--   win_name, executions (per call), calls (with that many)
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
calls as (
    select call_id, min(t_planned) as t_planned,
           count(*) filter (where not attached and execution_id is not null) as n_executions
    from attempts group by call_id
)
select w.win_name, c.n_executions as executions, count(*) as calls
from win w join calls c
  on c.t_planned >= w.a and (c.t_planned < w.b or (w.closed and c.t_planned = w.b))
group by all
order by w.win_name, executions
