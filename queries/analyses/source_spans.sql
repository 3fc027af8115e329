-- Per source family: rows, distinct timestamps and first/last time (the analysis window,
-- relplan/analyses/coverage.py; docs/analyses.md "The analysis window").
-- Families: `proxy` (attempts: t_sent..t_end), `events` (engine lifecycle events), `steps`,
-- `stats` (engine_stats records of a canonical trace), `stats line` (metric samples taken from
-- vLLM's periodic stats log line: sources.format = 'vllm_log') and `metrics` (every other
-- metric sample: /metrics scrapes, Prometheus exports). Empty families give n = 0.
-- Columns: family, n, n_t, t_min, t_max.
-- params:
select 'proxy' as family, count(*) as n, count(distinct t_sent) as n_t,
       min(least(t_planned, t_sent)) as t_min, max(t_end) as t_max
from attempts
union all
select 'events', count(*), count(distinct t), min(t), max(t) from events
union all
select 'steps', count(*), count(distinct t_issue), min(t_issue), max(t_done) from steps
union all
select 'stats', count(*), count(distinct t_issue), min(t_issue), max(t_issue) from engine_stats
union all
select case when s.format = 'vllm_log' then 'stats line' else 'metrics' end,
       count(*), count(distinct m.t), min(m.t), max(m.t)
from metric_samples m join sources s using (source_id)
group by 1
