-- Delivery and on-time share per window of planned arrival (the `delivery` analysis).
-- A call's t_planned is the earliest over its attempts. It is delivered when an attempt has
-- outcome `delivered`, answered within the client's deadline (t_end - t_sent <= D when D is
-- known: an answer after D reached no client, whatever status the gateway logged — with
-- cancellation off nginx logs 200 for work whose client left at D) and t_end - t_planned <= W
-- (the earliest such attempt counts; pass
-- W = +inf when no delivery window is known); it is on time when that attempt's
-- t_end - t_planned <= D ($deadline_s; null when unknown: on_time is then 0 and meaningless).
-- A call not delivered by T counts as not delivered; window_open_at_end counts those whose
-- window W was still open at T (t_planned + W > T).
-- Per window [a, b) (closed at b when w_closed) of t_planned: calls, delivered, on_time,
-- window_open_at_end, median and p99 (quantile_cont) of time to delivery (t_end - t_planned).
-- params: w_names, w_starts, w_ends, w_closed, delivery_window, deadline_s, t_end
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
planned as (
    select call_id, min(t_planned) as tp from attempts group by call_id
),
calls as (
    select p.call_id, p.tp,
           min(x.t_end) filter (where x.outcome = 'delivered' and x.t_end - p.tp <= $delivery_window
                                  and ($deadline_s is null or x.t_end - x.t_sent <= $deadline_s))
               as t_delivered
    from planned p join attempts x using (call_id)
    group by p.call_id, p.tp
)
select w.win_name,
       count(c.call_id) as calls,
       count(c.t_delivered) as delivered,
       count(*) filter (where c.t_delivered - c.tp <= $deadline_s) as on_time,
       count(*) filter (where c.call_id is not null and c.t_delivered is null
                          and c.tp + $delivery_window > $t_end) as window_open_at_end,
       quantile_cont(c.t_delivered - c.tp, 0.5) as delivery_median_s,
       quantile_cont(c.t_delivered - c.tp, 0.99) as delivery_p99_s
from win w left join calls c
  on c.tp >= w.a and (c.tp < w.b or (w.closed and c.tp = w.b))
group by w.win_name
