-- The client deadline as retries with cancellation off show it (the gateway kept the earlier
-- attempt running after its client left, so it logged no 499): pairs of consecutive attempts
-- of one call where the later was sent while the earlier was still running; the client left
-- the earlier at D and waited before sending the later, so the gap between their starts is
-- D plus the retry wait, an upper bound of D. Gaps rounded to 0.1 s.
-- Columns: pairs, mode_s (the most common gap), at_mode (pairs within 1 % of mode_s).
-- params:
with p as (
    select t_sent, t_end,
           lead(t_sent) over (partition by call_id order by attempt) as t_next
    from attempts
),
cut as (
    select round(t_next - t_sent, 1) as gap from p where t_next is not null and t_next < t_end
),
m as (select mode(gap) as mode_s from cut)
select (select count(*) from cut) as pairs, m.mode_s,
       (select count(*) from cut where abs(gap - m.mode_s) <= 0.01 * m.mode_s) as at_mode
from m
