-- Store every refused record of this ingest (skip mode) with its file, line, raw text and
-- reason. Runs after the new sources rows exist (the path comes from them).
-- params:
insert into rejects
select c.source_id, s.path, c.ln, coalesce(c.raw, ''), c.reason
from (
    select source_id, ln, raw, reason from proxy_checked where reason is not null
    union all
    select source_id, ln, raw, reason from engine_checked where reason is not null
    union all
    select source_id, ln, raw, reason from metrics_checked where reason is not null
) c
join sources s using (source_id)
