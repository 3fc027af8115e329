-- The client's retry policy as the proxy log shows it (relplan whatif fit): the gaps between
-- a failed attempt's end and the call's next attempt (t_sent of attempt n+1 - t_end of n),
-- and how many attempts calls made. Columns: calls, max_attempt (highest attempt number),
-- retries (attempts with attempt > 0), gaps (gaps measured), gap_min_s, gap_max_s,
-- gap_median_s (quantile_cont). The client left an attempt at its deadline `deadline_s` at
-- the latest: with cancellation off the proxy logs the attempt until the engine finished it,
-- so the gap is measured from min(end, start + deadline_s) (null: from the logged end).
-- params: deadline_s
with seq as (
    select call_id, attempt, t_sent,
           lag(least(t_end, t_sent + coalesce($deadline_s, 'inf'::double)))
               over (partition by call_id order by attempt) as prev_end
    from attempts
),
g as (select t_sent - prev_end as gap from seq where prev_end is not null)
select (select count(distinct call_id) from attempts) as calls,
       (select max(attempt) from attempts) as max_attempt,
       (select count(*) from attempts where attempt > 0) as retries,
       count(gap) as gaps, min(gap) as gap_min_s, max(gap) as gap_max_s,
       quantile_cont(gap, 0.5) as gap_median_s
from g
