-- The client deadline as the data shows it: attempts the client left (outcome client_gone),
-- rounded to 0.1 s; the most common duration and how many attempts lie within 1 % of it.
-- Attempts of zero length carry no duration (a log without $request_time places each at its
-- end): a deadline of 0 s was read from them once (issue 24).
-- Columns: gone (attempts the client left), mode_s, at_mode (within 1 % of mode_s).
-- params:
with gone as (
    select round(t_end - t_sent, 1) as d from attempts
    where outcome = 'client_gone' and t_end > t_sent
),
m as (select mode(d) as mode_s from gone)
select (select count(*) from gone) as gone, m.mode_s,
       (select count(*) from gone where abs(d - m.mode_s) <= 0.01 * m.mode_s) as at_mode
from m
