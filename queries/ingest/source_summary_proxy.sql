-- Per staged source, over its proxy attempts (proxy_checked): records kept and refused, the
-- time span of the kept ones, and the first refused record (lowest line) with its reason,
-- which fail mode reports. The driver adds up the three staging tables' summaries
-- (source_summary_engine.sql, source_summary_metrics.sql) of a source.
-- params:
select
    source_id,
    count(*) filter (where reason is null) as kept,
    count(*) filter (where reason is not null) as refused,
    min(t_sent) filter (where reason is null) as t_min,
    max(t_end) filter (where reason is null) as t_max,
    min(ln) filter (where reason is not null) as first_bad_line,
    arg_min(reason, ln) filter (where reason is not null) as first_bad_reason
from proxy_checked
group by source_id
order by source_id
