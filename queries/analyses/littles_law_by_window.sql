-- Little's law on the engine's waiting queue, per window (the `littles_law` analysis), from lifecycle
-- events. An execution (key: replica, execution_id) waits from its first `arrived` until
-- the first of its `scheduled`, `aborted` or `rejected` events; a wait with none of them is
-- still open at T and ends at T ($t_end). Waiting again after a preemption is not counted.
-- Per window [a, b) (closed at b for the whole run), for all replicas (all_replicas = 1)
-- and per replica (the events' replica, '' when absent):
--   wait_seconds  the exact integral of the waiting count over the window (L * (b - a))
--   arrivals      executions arriving in the window (engine refusals included: their wait
--                 ends at the refusal), for lambda
--   wait_sum      the full waits of those arrivals (Wq = wait_sum / arrivals)
--   open_at_end   of those arrivals, waits still open at T
-- params: w_names, w_starts, w_ends, w_closed, t_end
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
ex as (
    select coalesce(replica, '') as rk,
           min(t) filter (where event = 'arrived') as ta,
           min(t) filter (where event in ('scheduled', 'aborted', 'rejected')) as tx
    from events group by coalesce(replica, ''), execution_id
),
waits as (
    select rk, ta, greatest(ta, coalesce(tx, $t_end)) as te, tx is null as open
    from ex where ta is not null
)
select w.win_name, x.rk as replica, grouping(x.rk) as all_replicas,
       -- least/greatest skip nulls in DuckDB: the filter keeps windows with no wait at zero
       coalesce(sum(greatest(0, least(x.te, w.b) - greatest(x.ta, w.a))) filter (where x.ta is not null), 0)
           as wait_seconds,
       count(*) filter (where x.ta >= w.a and (x.ta < w.b or (w.closed and x.ta = w.b))) as arrivals,
       coalesce(sum(x.te - x.ta) filter (where x.ta >= w.a and (x.ta < w.b or (w.closed and x.ta = w.b))), 0)
           as wait_sum,
       count(*) filter (where x.open and x.ta >= w.a and (x.ta < w.b or (w.closed and x.ta = w.b)))
           as open_at_end
from win w left join waits x on x.ta <= w.b and x.te >= w.a
group by grouping sets ((w.win_name), (w.win_name, x.rk))
