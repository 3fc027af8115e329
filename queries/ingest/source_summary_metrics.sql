-- Per staged source, over its metric samples (metrics_checked): as source_summary_proxy.sql.
-- params:
select
    source_id,
    count(*) filter (where reason is null) as kept,
    count(*) filter (where reason is not null) as refused,
    min(t) filter (where reason is null) as t_min,
    max(t) filter (where reason is null) as t_max,
    min(ln) filter (where reason is not null) as first_bad_line,
    arg_min(reason, ln) filter (where reason is not null) as first_bad_reason
from metrics_checked
group by source_id
order by source_id
