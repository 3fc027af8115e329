-- Load and retry amplification per window (the `amplification` analysis).
-- One row per window [a, b) (closed at b when w_closed, i.e. the whole run):
--   calls                 calls whose t_planned (the call's earliest) is in the window
--   call_attempts, call_executions   all attempts / executions created (non-attached attempts
--                         with an execution_id) of those calls, wherever they fall in time
--   attempts, first_attempts, retries, shed, attached, retries_shed, retries_attached:
--                         attempts by t_sent in the window
--   executions_created, executions_created_by_retry: non-attached attempts with an
--                         execution_id by t_sent (the proxy's view of accepted executions,
--                         and the retry share's numerator/denominator)
--   engine_arrived        `arrived` events in the window (execution key: replica, id)
--   engine_accepted       of them, those without a `rejected` event (engine refusals are not
--                         accepted, docs/analyses.md, conventions 9)
--   engine_finished       executions whose first `finished` event is in the window
--   engine_finished_delivered  of them, executions whose response reached a waiting attempt
--                         (some proxy attempt with that execution_id has outcome delivered)
--   proxy_completed_delivered  distinct executions of delivered attempts, by t_end (the
--                         proxy's view of completions for a waiting client)
--   abort_n, abort_delay_median, abort_delay_max: for executions with both a proxy t_cancel
--                         (earliest over its attempts) and an engine `aborted` (earliest),
--                         aborted - t_cancel, windowed by t_cancel
-- Matching attempts to engine executions: same execution_id and the same replica when both
-- sides name one (ids can repeat across replicas).
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
calls as (
    select call_id, min(t_planned) as t_planned, count(*) as n_attempts,
           count(*) filter (where not attached and execution_id is not null) as n_executions
    from attempts group by call_id
),
ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as t_arrived,
           min(t) filter (where event = 'rejected') as t_rejected,
           min(t) filter (where event = 'finished') as t_finished,
           min(t) filter (where event = 'aborted') as t_aborted
    from events group by all
),
att_by_exec as (
    select e.rk, e.execution_id,
           bool_or(a.outcome = 'delivered') as delivered,
           min(a.t_cancel) as t_cancel
    from ex e join attempts a
      on a.execution_id = e.execution_id
     and (a.replica is null or e.rk = '' or a.replica = e.rk)
    group by all
),
exd as (
    select e.*, coalesce(d.delivered, false) as delivered, d.t_cancel
    from ex e left join att_by_exec d using (rk, execution_id)
),
calls_w as (
    select w.win_name, count(*) as calls, sum(c.n_attempts) as call_attempts,
           sum(c.n_executions) as call_executions
    from win w join calls c
      on c.t_planned >= w.a and (c.t_planned < w.b or (w.closed and c.t_planned = w.b))
    group by w.win_name
),
att_w as (
    select w.win_name, count(*) as attempts,
           count(*) filter (where x.attempt = 0) as first_attempts,
           count(*) filter (where x.attempt > 0) as retries,
           count(*) filter (where x.outcome = 'shed') as shed,
           count(*) filter (where x.attached) as attached,
           count(*) filter (where x.attempt > 0 and x.outcome = 'shed') as retries_shed,
           count(*) filter (where x.attempt > 0 and x.attached) as retries_attached,
           count(*) filter (where not x.attached and x.execution_id is not null) as executions_created,
           count(*) filter (where not x.attached and x.execution_id is not null and x.attempt > 0)
               as executions_created_by_retry
    from win w join attempts x
      on x.t_sent >= w.a and (x.t_sent < w.b or (w.closed and x.t_sent = w.b))
    group by w.win_name
),
delivered_w as (
    select w.win_name, count(distinct (coalesce(x.replica, ''), x.execution_id)) as proxy_completed_delivered
    from win w join attempts x
      on x.t_end >= w.a and (x.t_end < w.b or (w.closed and x.t_end = w.b))
    where x.outcome = 'delivered' and x.execution_id is not null
    group by w.win_name
),
arr_w as (
    select w.win_name, count(*) as engine_arrived,
           count(*) filter (where e.t_rejected is null) as engine_accepted
    from win w join exd e
      on e.t_arrived >= w.a and (e.t_arrived < w.b or (w.closed and e.t_arrived = w.b))
    group by w.win_name
),
fin_w as (
    select w.win_name, count(*) as engine_finished,
           count(*) filter (where e.delivered) as engine_finished_delivered
    from win w join exd e
      on e.t_finished >= w.a and (e.t_finished < w.b or (w.closed and e.t_finished = w.b))
    group by w.win_name
),
abort_w as (
    select w.win_name, count(*) as abort_n,
           quantile_cont(e.t_aborted - e.t_cancel, 0.5) as abort_delay_median,
           max(e.t_aborted - e.t_cancel) as abort_delay_max
    from win w join exd e
      on e.t_cancel >= w.a and (e.t_cancel < w.b or (w.closed and e.t_cancel = w.b))
    where e.t_aborted is not null
    group by w.win_name
)
select w.win_name, w.a, w.b,
       coalesce(calls, 0) as calls, coalesce(call_attempts, 0) as call_attempts,
       coalesce(call_executions, 0) as call_executions,
       coalesce(attempts, 0) as attempts, coalesce(first_attempts, 0) as first_attempts,
       coalesce(retries, 0) as retries, coalesce(shed, 0) as shed,
       coalesce(attached, 0) as attached, coalesce(retries_shed, 0) as retries_shed,
       coalesce(retries_attached, 0) as retries_attached,
       coalesce(executions_created, 0) as executions_created,
       coalesce(executions_created_by_retry, 0) as executions_created_by_retry,
       coalesce(proxy_completed_delivered, 0) as proxy_completed_delivered,
       coalesce(engine_arrived, 0) as engine_arrived,
       coalesce(engine_accepted, 0) as engine_accepted,
       coalesce(engine_finished, 0) as engine_finished,
       coalesce(engine_finished_delivered, 0) as engine_finished_delivered,
       coalesce(abort_n, 0) as abort_n, abort_delay_median, abort_delay_max
from win w
left join calls_w using (win_name)
left join att_w using (win_name)
left join delivered_w using (win_name)
left join arr_w using (win_name)
left join fin_w using (win_name)
left join abort_w using (win_name)
order by w.a, w.win_name
