-- The report footer's row counts: rows held by each data table of the workspace.
-- params:
select 'attempts' as tbl, count(*) as n from attempts
union all select 'events', count(*) from events
union all select 'steps', count(*) from steps
union all select 'engine_stats', count(*) from engine_stats
union all select 'metric_samples', count(*) from metric_samples
union all select 'rejects', count(*) from rejects
order by tbl
