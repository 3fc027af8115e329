-- Retry timing (the `retry_timing` analysis): for every execution created by a retry (a non-attached
-- attempt with attempt > 0 and an execution_id) whose predecessor was aborted:
--   predecessor  the execution of the most recent earlier attempt of the same call that had
--                one (attached attempts count: they name the running execution; shed
--                attempts have none);
--   gap          the new execution's first `scheduled` minus the predecessor's first
--                `aborted` (engine events);
--   slack        (the retry's t_sent + D) minus the t_issue of the new execution's first
--                step: how long before its own deadline it got onto the GPU (negative: after
--                the client had gone); null when D ($deadline_s) is null (unknown).
-- Windowed by the retry's t_sent ([a, b), closed at b for the whole run). Per window:
-- retries (every attempt > 0 sent in the window, from the same attempts table and by the same
-- rule as the amplification analysis, so the two never disagree), retries_with_execution (all retries that created an execution after an earlier one),
-- n (of them, those whose predecessor was aborted), never_scheduled, the gap's n/median/
-- p10/p90 and the slack's n/median/p10/p90/negative count (quantile_cont).
-- Attempts match engine executions by execution_id and, when both name one, replica.
-- params: w_names, w_starts, w_ends, w_closed, deadline_s
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
att as (
    select call_id, attempt, t_sent, execution_id, attached, replica,
           last_value(case when execution_id is not null
                           then {'id': execution_id, 'replica': replica} end ignore nulls)
               over (partition by call_id order by attempt
                     rows between unbounded preceding and 1 preceding) as pred
    from attempts
),
retry as (
    select * from att
    where attempt > 0 and not attached and execution_id is not null and pred is not null
),
ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'scheduled') as t_sched,
           min(t) filter (where event = 'aborted') as t_ab
    from events
    where execution_id in (select execution_id from retry)
       or execution_id in (select pred.id from retry)
    group by all
),
first_step as (
    select coalesce(replica, '') as rk, execution_id, min(t_issue) as t_first_issue
    from steps
    where execution_id in (select execution_id from retry)
    group by all
),
retried as (
select r.call_id, r.attempt, r.t_sent,
       p.t_ab is not null as pred_aborted,
       n.t_sched is not null as scheduled,
       n.t_sched - p.t_ab as gap,
       r.t_sent + $deadline_s - f.t_first_issue as slack
from retry r
left join ex p
  on p.execution_id = r.pred.id and (r.pred.replica is null or p.rk = '' or p.rk = r.pred.replica)
left join ex n
  on n.execution_id = r.execution_id and (r.replica is null or n.rk = '' or n.rk = r.replica)
left join first_step f
  on f.execution_id = r.execution_id and (r.replica is null or f.rk = '' or f.rk = r.replica)
)
select w.win_name,
       (select count(*) from attempts y
         where y.attempt > 0 and y.t_sent >= w.a and (y.t_sent < w.b or (w.closed and y.t_sent = w.b)))
           as retries,
       count(x.call_id) as retries_with_execution,
       count(*) filter (where x.pred_aborted) as n,
       count(*) filter (where x.pred_aborted and not x.scheduled) as never_scheduled,
       count(x.gap) filter (where x.pred_aborted) as gap_n,
       quantile_cont(x.gap, 0.5) filter (where x.pred_aborted) as gap_median,
       quantile_cont(x.gap, 0.1) filter (where x.pred_aborted) as gap_p10,
       quantile_cont(x.gap, 0.9) filter (where x.pred_aborted) as gap_p90,
       count(x.slack) filter (where x.pred_aborted) as slack_n,
       quantile_cont(x.slack, 0.5) filter (where x.pred_aborted) as slack_median,
       quantile_cont(x.slack, 0.1) filter (where x.pred_aborted) as slack_p10,
       quantile_cont(x.slack, 0.9) filter (where x.pred_aborted) as slack_p90,
       count(*) filter (where x.pred_aborted and x.slack < 0) as slack_negative
from win w left join retried x
  on x.t_sent >= w.a and (x.t_sent < w.b or (w.closed and x.t_sent = w.b))
group by w.win_name, w.a, w.b, w.closed
