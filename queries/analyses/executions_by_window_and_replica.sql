-- Engine executions per window and replica (the `amplification` analysis, per replica): executions whose
-- first `arrived` is in the window (arrived), of them not refused (accepted; an engine
-- refusal is `arrived` then `rejected`), and executions whose first `finished` is in the
-- window (finished), of them delivered to a waiting attempt (some proxy attempt with that
-- execution_id, same replica when both name one, has outcome delivered). Execution key:
-- (replica, execution_id); replica '' when the trace names none. Windows [a, b), closed
-- at b when w_closed.
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
-- shared block (executions_by_window_and_replica.sql and wasted_prefill_by_fate.sql hold
-- it word for word; tests/test_bench_analyze.py checks): each execution's first lifecycle
-- instants, and whether a proxy attempt (same replica when both name one) received it.
ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as t_arrived,
           min(t) filter (where event = 'rejected') as t_rejected,
           min(t) filter (where event = 'first_token') as t_first_token,
           min(t) filter (where event = 'preempted') as t_preempted,
           min(t) filter (where event = 'aborted') as t_aborted,
           min(t) filter (where event = 'finished') as t_finished
    from events group by all
),
dl as (
    select e.rk, e.execution_id, bool_or(a.outcome = 'delivered') as delivered
    from ex e join attempts a
      on a.execution_id = e.execution_id
     and (a.replica is null or e.rk = '' or a.replica = e.rk)
    group by all
),
-- end of the shared block
exd as (
    select e.*, coalesce(d.delivered, false) as delivered
    from ex e left join dl d using (rk, execution_id)
)
select w.win_name, e.rk as replica,
       count(*) filter (where e.t_arrived >= w.a and (e.t_arrived < w.b or (w.closed and e.t_arrived = w.b)))
           as arrived,
       count(*) filter (where e.t_rejected is null
                          and e.t_arrived >= w.a and (e.t_arrived < w.b or (w.closed and e.t_arrived = w.b)))
           as accepted,
       count(*) filter (where e.t_finished >= w.a and (e.t_finished < w.b or (w.closed and e.t_finished = w.b)))
           as finished,
       count(*) filter (where e.delivered
                          and e.t_finished >= w.a and (e.t_finished < w.b or (w.closed and e.t_finished = w.b)))
           as finished_delivered
from win w cross join exd e
group by w.win_name, e.rk
