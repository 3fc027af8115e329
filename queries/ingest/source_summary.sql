-- Per staged source: records kept and refused, the time span of the kept ones, and the first
-- refused record (lowest line) with its reason and raw text, which fail mode reports.
-- params:
with c as (
    select source_id, ln, raw, reason, t_sent as lo, t_end as hi from proxy_checked
    union all
    select source_id, ln, raw, reason, least(t, t_issue, t_done), greatest(t, t_issue, t_done)
    from engine_checked
    union all
    select source_id, ln, raw, reason, t, t from metrics_checked
)
select
    source_id,
    count(*) filter (where reason is null) as kept,
    count(*) filter (where reason is not null) as refused,
    min(lo) filter (where reason is null) as t_min,
    max(hi) filter (where reason is null) as t_max,
    min(ln) filter (where reason is not null) as first_bad_line,
    arg_min(reason, ln) filter (where reason is not null) as first_bad_reason
from c
group by source_id
order by source_id
