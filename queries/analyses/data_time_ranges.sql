-- Row counts and time span of each input kind, for t0/T (docs/analyses.md, conventions 1), for
-- deciding which analyses the data supports, and for the clock-overlap check.
-- proxy spans t_planned..t_end (and t_cancel); engine events span t; steps t_issue..t_done;
-- stats t_issue; metrics t; `stats line` the metric samples read from vLLM's stats log line
-- (sources.format = 'vllm_log': engine records, so they count for t0 and T like the trace).
-- Empty tables give count 0 and null times.
-- params:
select 'proxy' as kind, count(*) as n,
       min(least(t_planned, t_sent)) as t_min,
       max(greatest(t_end, coalesce(t_cancel, t_end))) as t_max
from attempts
union all
select 'events', count(*), min(t), max(t) from events
union all
select 'steps', count(*), min(t_issue), max(t_done) from steps
union all
select 'stats', count(*), min(t_issue), max(t_issue) from engine_stats
union all
select 'metrics', count(*), min(t), max(t) from metric_samples
union all
select 'stats line', count(*), min(m.t), max(m.t)
from metric_samples m join sources s using (source_id) where s.format = 'vllm_log'
