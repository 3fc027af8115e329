-- Delivery and load figures over one window [t_from, t_to) (analyses.md A and B):
-- calls planned in the window; delivered share (an attempt delivered within the delivery
-- window of the call's planned arrival; the earliest delivered attempt counts); on-time share
-- (delivered within the per-attempt deadline D of the planned arrival); executions accepted
-- (engine `arrived` events, excluding executions the engine refused) and completed (`finished`
-- events) per second, as multiples of capacity (null without a capacity).
-- params: t_from, t_to, deadline, window, capacity
with calls as (
    select call_id, min(t_planned) as t_planned,
           min(case when outcome = 'delivered' then t_end end) as t_delivered
    from summary_proxy
    group by call_id
),
win as (
    select * from calls where t_planned >= $t_from and t_planned < $t_to
),
rejected as (
    select distinct execution_id from summary_events where event = 'rejected'
)
select
    (select count(*) from win) as calls,
    (select avg(case when t_delivered - t_planned <= $window then 1.0 else 0.0 end) from win)
        as delivered_share,
    (select avg(case when t_delivered - t_planned <= $deadline then 1.0 else 0.0 end) from win)
        as on_time_share,
    (select count(*) from summary_events
      where event = 'arrived' and t >= $t_from and t < $t_to
        and execution_id not in (select execution_id from rejected))
        / ($t_to - $t_from) / $capacity as accepted_rate_x_capacity,
    (select count(*) from summary_events
      where event = 'finished' and t >= $t_from and t < $t_to)
        / ($t_to - $t_from) / $capacity as completed_rate_x_capacity
