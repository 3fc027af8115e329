-- Little's law over one window [t_from, t_to) (analyses.md E): an execution waits from
-- `arrived` until its first `scheduled`, or until it is aborted or rejected while waiting;
-- waits still open end at t_end (T). L = exact time-average number waiting over the window;
-- lambda = executions arriving in the window (refused ones excluded) per second;
-- Wq = mean full wait of those executions.
-- params: t_from, t_to, t_end
with w as (
    select execution_id,
           min(t) filter (where event = 'arrived') as t_arr,
           min(t) filter (where event = 'scheduled') as t_sched,
           min(t) filter (where event in ('aborted', 'rejected')) as t_gone,
           bool_or(event = 'rejected') as refused
    from summary_events
    group by execution_id
),
waits as (
    select execution_id, t_arr, refused,
           case when t_sched is not null and (t_gone is null or t_sched <= t_gone) then t_sched
                when t_gone is not null then t_gone
                else $t_end end as t_wait_end
    from w
    where t_arr is not null
)
select
    sum(greatest(0.0, least(t_wait_end, $t_to) - greatest(t_arr, $t_from))) / ($t_to - $t_from)
        as l_waiting,
    count(*) filter (where t_arr >= $t_from and t_arr < $t_to and not refused) / ($t_to - $t_from)
        as lambda_per_s,
    avg(t_wait_end - t_arr) filter (where t_arr >= $t_from and t_arr < $t_to and not refused)
        as wq_s
from waits
