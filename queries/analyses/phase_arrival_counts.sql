-- Calls arriving per window, to find the overload phase when run.json names none and no
-- phase is called `pulse` (docs/analyses.md, conventions 2: the phase with the highest arrival
-- rate). Calls come from the proxy log (by the call's t_planned); without a proxy log,
-- executions arriving at the engine (`arrived` events) stand in for calls.
-- Windows are half-open [a, b), closed at b when w_closed (the whole run).
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
calls as (
    select min(t_planned) as t from attempts group by call_id
),
arrivals as (
    select t from events where event = 'arrived'
)
select w.win_name,
       (select count(*) from calls c
         where c.t >= w.a and (c.t < w.b or (w.closed and c.t = w.b))) as calls,
       (select count(*) from arrivals e
         where e.t >= w.a and (e.t < w.b or (w.closed and e.t = w.b))) as engine_arrivals
from win w
