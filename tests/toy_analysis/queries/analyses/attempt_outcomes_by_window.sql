-- Attempts sent per window (by t_sent), and of them those shed and those ending in an error.
-- Windows are half-open [a, b), closed at b when w_closed (the whole run).
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
)
select w.win_name,
       count(x.call_id) as attempts,
       count(x.call_id) filter (where x.outcome = 'shed') as shed,
       count(x.call_id) filter (where x.outcome = 'error') as errors
from win w
left join attempts x
       on x.t_sent >= w.a and (x.t_sent < w.b or (w.closed and x.t_sent = w.b))
group by w.win_name
