-- The row count of every workspace table, in the order of relplan.workspace.TABLES (a test
-- holds the two lists equal).
-- params:
select 'sources' as "table", count(*) as n from sources
union all select 'attempts', count(*) from attempts
union all select 'events', count(*) from events
union all select 'request_ids', count(*) from request_ids
union all select 'steps', count(*) from steps
union all select 'engine_stats', count(*) from engine_stats
union all select 'metric_samples', count(*) from metric_samples
union all select 'metric_meta', count(*) from metric_meta
union all select 'manifests', count(*) from manifests
union all select 'phases', count(*) from phases
union all select 'rejects', count(*) from rejects
union all select 'kube_events', count(*) from kube_events
