-- Executions the engine log says were aborted (vLLM's `Request ... aborted.` / `Aborted
-- request(s)` lines, the event `aborted`) with their first abort in [$a, $b], and of them how
-- many the log shows arriving. Columns: aborted, arrived.
-- params: a, b
with ex as (
    select min(t) filter (where event = 'aborted') as t_ab,
           count(*) filter (where event = 'arrived') > 0 as arrived
    from events group by coalesce(replica, ''), execution_id
)
select count(*) as aborted, count(*) filter (where arrived) as arrived
from ex where t_ab >= $a and t_ab <= $b
