-- Per staged source, over its engine records (engine_checked): as source_summary_proxy.sql,
-- the time span from each record's earliest and latest time (t, t_issue, t_done).
-- params:
select
    source_id,
    count(*) filter (where reason is null) as kept,
    count(*) filter (where reason is not null) as refused,
    min(least(t, t_issue, t_done)) filter (where reason is null) as t_min,
    max(greatest(t, t_issue, t_done)) filter (where reason is null) as t_max,
    min(ln) filter (where reason is not null) as first_bad_line,
    arg_min(reason, ln) filter (where reason is not null) as first_bad_reason
from engine_checked
group by source_id
order by source_id
