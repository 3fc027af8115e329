-- Where the client cut its attempts (relplan whatif fit): attempts with outcome client_gone,
-- their duration t_end - t_sent rounded to 0.1 s, the most common duration and how many lie
-- within 1 % of it. Columns: gone, mode_s, at_mode, max_s.
-- params:
with gone as (
    select round(t_end - t_sent, 1) as d from attempts where outcome = 'client_gone'
),
m as (select mode(d) as mode_s from gone)
select (select count(*) from gone) as gone, m.mode_s,
       (select count(*) from gone where abs(d - m.mode_s) <= 0.01 * m.mode_s) as at_mode,
       (select max(d) from gone) as max_s
from m
