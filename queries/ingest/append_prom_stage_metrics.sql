-- Append one query_range response's rows to stage_metrics (relplan/ingest/metrics/promjson.py):
-- its samples and rejects, registered as _relplan_prom_rows (ln, raw, perr, t, sid, value), and
-- its series, registered as _relplan_prom_series (sid, name, labels), once each; a reject's
-- sid is NULL (no name, no labels). In sample order.
-- params: source_id
insert into stage_metrics
select $source_id, r.ln, r.raw, r.perr, r.t, s.name, s.labels, r.value
from _relplan_prom_rows as r
left join _relplan_prom_series as s using (sid)
order by r.ln
